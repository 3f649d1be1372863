package provider

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The plan-safety table (plan_safety_test.go) runs every case twice:
//
//   - through the provider's protocol server, the calls terraform makes in
//     `terraform plan` (ValidateResourceConfig, PlanResourceChange,
//     ValidateDataResourceConfig, ReadDataSource for the local data
//     sources), in the order terraform would plan the resources. This is
//     where warnings and the exact attribute path are asserted:
//     terraform-plugin-testing cannot assert warnings.
//   - with TF_ACC, through the terraform CLI (terraform-plugin-testing,
//     PlanOnly) for every case that must be rejected: ExpectError with the
//     diagnostic's summary and text.
//
// In both, the provider's AWS endpoint and Kubernetes host are a loopback
// server that records every request: the table asserts it got none.

// loopback is the request-logging server every case's provider points at.
type loopback struct {
	srv  *httptest.Server
	n    atomic.Int64
	mu   sync.Mutex
	seen []string
}

var (
	loopbackOnce sync.Once
	loopbackSrv  *loopback
)

func planLoopback() *loopback {
	loopbackOnce.Do(func() {
		l := &loopback{}
		l.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			l.n.Add(1)
			l.mu.Lock()
			l.seen = append(l.seen, r.Method+" "+r.Host+r.URL.String())
			l.mu.Unlock()
			http.Error(w, "plan-safety loopback: no API request is expected at plan", http.StatusTeapot)
		}))
		loopbackSrv = l
	})
	return loopbackSrv
}

func (l *loopback) requests() (int64, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n.Load(), append([]string(nil), l.seen...)
}

// providerConfig is the provider block of every case.
func (l *loopback) providerConfig() map[string]any {
	return map[string]any{
		"aws":        map[string]any{"region": "us-east-1", "endpoint": l.srv.URL, "s3_use_path_style": true, "skip_credentials_validation": true},
		"kubernetes": map[string]any{"host": l.srv.URL, "token": "plan-safety"},
	}
}

// providerConfigFor is the provider block of a case: its region, when it
// names one (the partition checks), else us-east-1.
func (l *loopback) providerConfigFor(c planCase) map[string]any {
	cfg := l.providerConfig()
	if c.region != "" {
		cfg["aws"].(map[string]any)["region"] = c.region
	}
	return cfg
}

// res is one resource or data source of a case.
type res struct {
	typ   string // flinkstate_deployment
	data  bool
	attrs map[string]any
}

// want is a diagnostic a case expects.
type want struct {
	warning bool
	res     int    // index in the case's resources
	path    string // dotted attribute path: state.checkpoint_dir, flink_configuration["k"]
	text    string // in the summary or the detail
}

type planCase struct {
	rule  int
	name  string
	res   []res
	wants []want // empty: the case must plan with no error and no warning
	// okWarnings are warnings a valid case may show (their summaries).
	okWarnings []string
	// region is the provider's aws.region ("": us-east-1).
	region string
}

// gotDiag is a diagnostic with the resource it came from.
type gotDiag struct {
	res     int
	warning bool
	path    string
	text    string
}

func (d gotDiag) String() string {
	sev := "error"
	if d.warning {
		sev = "warning"
	}
	return fmt.Sprintf("[%d] %s at %q: %s", d.res, sev, d.path, d.text)
}

// dottedPath renders a diagnostic's attribute path as the table writes it.
func dottedPath(p *tftypes.AttributePath) string {
	if p == nil {
		return ""
	}
	var b strings.Builder
	for _, s := range p.Steps() {
		switch s := s.(type) {
		case tftypes.AttributeName:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(string(s))
		case tftypes.ElementKeyString:
			fmt.Fprintf(&b, "[%q]", string(s))
		case tftypes.ElementKeyInt:
			fmt.Fprintf(&b, "[%d]", int64(s))
		default:
			b.WriteString("[?]")
		}
	}
	return b.String()
}

// planThroughProtocol plans a case's resources in order on one configured
// provider server and returns every diagnostic.
func planThroughProtocol(t *testing.T, l *loopback, c planCase) []gotDiag {
	t.Helper()
	ctx := context.Background()
	srv := configuredProtocolServer(t, l.providerConfigFor(c))
	var out []gotDiag
	add := func(i int, ds []*tfprotov6.Diagnostic) bool {
		failed := false
		for _, d := range ds {
			out = append(out, gotDiag{res: i, warning: d.Severity == tfprotov6.DiagnosticSeverityWarning, path: dottedPath(d.Attribute), text: d.Summary + ": " + d.Detail})
			failed = failed || d.Severity == tfprotov6.DiagnosticSeverityError
		}
		return failed
	}
	for i, r := range c.res {
		if r.data {
			typ := srv.dataSourceType(r.typ)
			cfg := mustDynamic(t, typ, r.attrs)
			v, err := srv.ValidateDataResourceConfig(ctx, &tfprotov6.ValidateDataResourceConfigRequest{TypeName: r.typ, Config: cfg})
			if err != nil {
				t.Fatal(err)
			}
			if add(i, v.Diagnostics) {
				continue
			}
			// Only the data sources computed locally are read at plan here;
			// the others read S3 or Kubernetes, which a plan with known
			// arguments does (and this table must not).
			if r.typ == "flinkstate_flink_configuration" || r.typ == "flinkstate_policy_document" {
				rd, err := srv.ReadDataSource(ctx, &tfprotov6.ReadDataSourceRequest{TypeName: r.typ, Config: cfg})
				if err != nil {
					t.Fatal(err)
				}
				add(i, rd.Diagnostics)
			}
			continue
		}
		typ := srv.resourceType(r.typ)
		cfg := mustDynamic(t, typ, r.attrs)
		v, err := srv.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: r.typ, Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		if add(i, v.Diagnostics) {
			continue
		}
		p, err := srv.PlanResourceChange(ctx, planCreateRequest(t, r.typ, typ, cfg))
		if err != nil {
			t.Fatal(err)
		}
		add(i, p.Diagnostics)
	}
	return out
}

// checkDiags matches a case's expectations against what the plan said.
func checkDiags(t *testing.T, c planCase, got []gotDiag) {
	t.Helper()
	for _, w := range c.wants {
		found := false
		for _, g := range got {
			if g.res == w.res && g.warning == w.warning && g.path == w.path && strings.Contains(g.text, w.text) {
				found = true
				break
			}
		}
		if !found {
			sev := "error"
			if w.warning {
				sev = "warning"
			}
			t.Errorf("want a %s at [%d] %q containing %q; got:\n%s", sev, w.res, w.path, w.text, joinDiags(got))
		}
	}
	if len(c.wants) > 0 {
		return
	}
	for _, g := range got {
		allowed := false
		for _, s := range c.okWarnings {
			allowed = allowed || (g.warning && strings.HasPrefix(g.text, s+":"))
		}
		if !allowed {
			t.Errorf("a valid configuration got %s", g)
		}
	}
}

func joinDiags(ds []gotDiag) string {
	if len(ds) == 0 {
		return "  (no diagnostics)"
	}
	var s []string
	for _, d := range ds {
		s = append(s, "  "+d.String())
	}
	return strings.Join(s, "\n")
}

// HCL rendering of a case for the terraform CLI. Blocks and attributes are
// told apart by the provider's schema; resource i depends on the ones
// before it, so terraform plans them in the table's order.

var (
	schemaBlocksOnce sync.Once
	schemaBlocks     map[string]*tfprotov6.SchemaBlock
)

func providerSchemaBlocks(t *testing.T) map[string]*tfprotov6.SchemaBlock {
	schemaBlocksOnce.Do(func() {
		s := newProtocolServer(t).schemas
		schemaBlocks = map[string]*tfprotov6.SchemaBlock{"provider": s.Provider.Block}
		for k, v := range s.ResourceSchemas {
			schemaBlocks[k] = v.Block
		}
		for k, v := range s.DataSourceSchemas {
			schemaBlocks["data."+k] = v.Block
		}
	})
	return schemaBlocks
}

func hclString(s string) string {
	q := strconv.Quote(s)
	q = strings.ReplaceAll(q, "${", "$${")
	return strings.ReplaceAll(q, "%{", "%%{")
}

func hclValue(v any) string {
	switch x := v.(type) {
	case string:
		return hclString(x)
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case []any:
		var parts []string
		for _, e := range x {
			parts = append(parts, hclValue(e))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case []string:
		var parts []string
		for _, e := range x {
			parts = append(parts, hclString(e))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := sortedKeys(x)
		var parts []string
		for _, k := range keys {
			parts = append(parts, hclString(k)+" = "+hclValue(x[k]))
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	}
	return fmt.Sprintf("%v", v)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func hclBody(b *strings.Builder, block *tfprotov6.SchemaBlock, attrs map[string]any, indent string) {
	nested := map[string]*tfprotov6.SchemaBlock{}
	for _, bt := range block.BlockTypes {
		nested[bt.TypeName] = bt.Block
	}
	for _, k := range sortedKeys(attrs) {
		if nb, ok := nested[k]; ok {
			fmt.Fprintf(b, "%s%s {\n", indent, k)
			hclBody(b, nb, attrs[k].(map[string]any), indent+"  ")
			fmt.Fprintf(b, "%s}\n", indent)
			continue
		}
		fmt.Fprintf(b, "%s%s = %s\n", indent, k, hclValue(attrs[k]))
	}
}

// caseHCL renders a case as a configuration.
func caseHCL(t *testing.T, l *loopback, c planCase) string {
	blocks := providerSchemaBlocks(t)
	var b strings.Builder
	b.WriteString("provider \"flinkstate\" {\n")
	hclBody(&b, blocks["provider"], l.providerConfigFor(c), "  ")
	b.WriteString("}\n")
	var deps []string
	for i, r := range c.res {
		if r.data {
			fmt.Fprintf(&b, "data %q \"r%d\" {\n", r.typ, i)
			hclBody(&b, blocks["data."+r.typ], r.attrs, "  ")
			b.WriteString("}\n")
			continue
		}
		fmt.Fprintf(&b, "resource %q \"r%d\" {\n", r.typ, i)
		hclBody(&b, blocks[r.typ], r.attrs, "  ")
		if len(deps) > 0 {
			fmt.Fprintf(&b, "  depends_on = [%s]\n", strings.Join(deps, ", "))
		}
		b.WriteString("}\n")
		deps = append(deps, fmt.Sprintf("%s.r%d", r.typ, i))
	}
	return b.String()
}

// cliErrorRE is what terraform must print for a rejected case: the
// expected error's text (white space free to wrap).
func cliErrorRE(c planCase) *regexp.Regexp {
	for _, w := range c.wants {
		if !w.warning {
			return errorRE(w.text)
		}
	}
	return nil
}
