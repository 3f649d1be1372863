package docgen

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
)

// Check is one plan-time check as the code states it.
type Check struct {
	Error   bool   // else a warning
	Path    string // the attribute, e.g. state.checkpoint_dir
	Summary string
	Detail  string // the message, with "…" where the code fills in a value
	Source  string // file it is in
	// Resource is the resource whose plan makes it; AtApply marks the
	// checks made again at apply (before anything is written) for
	// relations a plan cannot see.
	Resource string
	AtApply  bool
}

// checkFuncs assigns the provider's plan-check functions to the resource
// whose plan runs them (path overrides the attribute when the function
// takes it as a parameter). A new function fails go generate until it is
// added here, so no check goes unlisted.
type assignment struct{ resource, path string }

var checkFuncs = map[string][]assignment{
	"bucketPlanChecks": {{"flinkstate_bucket", ""}},
	// Called by the deployment (identity = "pod_identity") and by the
	// association, each with its own attribute.
	"podIdentityUser": {{"flinkstate_deployment", "identity"}, {"flinkstate_pod_identity_association", "service_account"},
		{"flinkstate_blue_green_deployment", "identity"}},
	"ModifyPlan":               {{"flinkstate_service_account", ""}}, // serviceAccountResource's
	"checkSnapshotPlan":        {{"flinkstate_snapshot", ""}},
	"checkSavepointDirAtApply": {{"flinkstate_snapshot", ""}},
	"checkTargetDirLive":       {{"flinkstate_snapshot", ""}},
	"checkTargetDirAtApply":    {{"flinkstate_snapshot", ""}},
	"checkFormatAtApply":       {{"flinkstate_snapshot", ""}},
	"ValidateResource":         {{"flinkstate_deployment", ""}}, // deploymentChecks'

	"planStore":                  {{"flinkstate_state_store", ""}},
	"blueGreenSavepointDirCheck": {{"flinkstate_blue_green_deployment", ""}},
	"blueGreenCreateSuspended":   {{"flinkstate_blue_green_deployment", ""}},
	// The spec's checks, shared by flinkstate_deployment and the template
	// of flinkstate_blue_green_deployment.
	"checkIdentityAtApply":    {{"flinkstate_deployment", ""}, {"flinkstate_blue_green_deployment", ""}},
	"planIdentity":            {{"flinkstate_deployment", ""}, {"flinkstate_blue_green_deployment", ""}},
	"planSpecChecks":          {{"flinkstate_deployment", ""}, {"flinkstate_blue_green_deployment", ""}},
	"rolePlanChecks":          {{"flinkstate_iam_role", ""}},
	"checkReplicationAtApply": {{"flinkstate_bucket_replication", ""}},
	// partition.go: the ARN attributes of each resource (the function
	// takes them as parameters).
	"checkSamePartition":   {{"flinkstate_iam_role", "kms_key_arns"}},
	"checkIssuerPartition": {{"flinkstate_iam_role", ""}},
	"checkARNPartitions": {{"flinkstate_bucket", "kms_key_arn"}, {"flinkstate_iam_role", "irsa.oidc_provider_arn"},
		{"flinkstate_iam_role", "kms_key_arns"}, {"flinkstate_service_account", "irsa_role_arn"}, {"flinkstate_pod_identity_association", "role_arn"}},
}

// CheckSources are the files whose checks the deployment page lists:
// flinkconf (the derivation's findings, run at validate and plan for
// flinkstate_deployment and flinkstate_flink_configuration) and the
// provider's plan checks across resources (each resource's in its
// resource_<name>_plan.go, the shared ones in plan_registry.go). The checks
// of the table's settings (flinkconf.Settings) come from
// flinkconf.SettingChecks.
var CheckSources = []string{
	"internal/flinkconf/flinkconf.go",
	"internal/flinkconf/checks.go",
	"internal/flinkconf/operator.go",
	"internal/flinkconf/podtemplate.go",
	"internal/flinkconf/memory.go",
	"internal/flinkconf/autoscaler.go",
	"internal/flinkconf/parallelism.go",
	"internal/flinkconf/sensitive.go",
	"internal/provider/plan_registry.go",
	"internal/provider/resource_deployment_plan.go",
	"internal/provider/resource_service_account_plan.go",
	"internal/provider/resource_snapshot_plan.go",
	"internal/provider/resource_bucket_plan.go",
	"internal/provider/resource_iam_role_plan.go",
	"internal/provider/resource_state_store_plan.go",
	"internal/provider/resource_bucket_replication_plan.go",
	"internal/provider/partition.go",
	"internal/provider/resource_blue_green_deployment_plan.go",
	"internal/flinkdeploy/spec_notices.go",
	"internal/preflight/plan.go",
}

// domainCheckFuncs assigns the plan checks the domain packages word (the
// provider reports their findings: addNotices) to the resources whose plan
// runs them, by "file:Func" (a method: "file:Type.Method"). A function of
// these files that makes a check and is in neither map fails go generate,
// as checkFuncs does for the provider's. A flinkconf function listed here
// is assigned to these resources instead of flinkstate_deployment alone.
var domainCheckFuncs = map[string][]assignment{
	// Called by planIdentity, planSpecChecks and ValidateResource; the
	// spec's checks both resources make, except the deployment's own
	// wait_for and savepoint_before_upgrade.
	"internal/flinkdeploy/spec_notices.go:IdentityNotice":         {{"flinkstate_deployment", ""}, {"flinkstate_blue_green_deployment", ""}},
	"internal/flinkdeploy/spec_notices.go:UnusedIRSARole":         {{"flinkstate_deployment", ""}, {"flinkstate_blue_green_deployment", ""}},
	"internal/flinkdeploy/spec_notices.go:StandbyWithoutHA":       {{"flinkstate_deployment", ""}, {"flinkstate_blue_green_deployment", ""}},
	"internal/flinkdeploy/spec_notices.go:NoJobToCheckpoint":      {{"flinkstate_deployment", ""}},
	"internal/flinkdeploy/spec_notices.go:SavepointFormatRefusal": {{"flinkstate_deployment", ""}},
	"internal/preflight/plan.go:CrossingNotice":                   {{"flinkstate_deployment", ""}, {"flinkstate_blue_green_deployment", ""}},
	// A flinkconf check both resources make (specChecks).
	"internal/flinkconf/sensitive.go:SensitiveKeys": {{"flinkstate_deployment", ""}, {"flinkstate_blue_green_deployment", ""}},
}

// domainNotChecks are the functions of those files that make findings the
// lists leave out: the restore pre-flight's, which read the job's
// checkpoint (not the configuration alone), and the helpers that build a
// finding from their arguments.
var domainNotChecks = map[string]bool{
	"internal/preflight/plan.go:warning": true, "internal/preflight/plan.go:refusal": true,
	"internal/preflight/plan.go:Upgrade.Skipped": true, "internal/preflight/plan.go:Upgrade.Findings": true,
	"internal/preflight/plan.go:Path.Skipped": true, "internal/preflight/plan.go:Path.Findings": true,
	"internal/preflight/plan.go:Handover.SkippedWarning": true, "internal/preflight/plan.go:Handover.Findings": true,
}

// funcKey is "file:Func", or "file:Type.Method" for a method.
func funcKey(file string, fd *ast.FuncDecl) string {
	name := fd.Name.Name
	if fd.Recv != nil && len(fd.Recv.List) == 1 {
		t := fd.Recv.List[0].Type
		if st, ok := t.(*ast.StarExpr); ok {
			t = st.X
		}
		if id, ok := t.(*ast.Ident); ok {
			name = id.Name + "." + name
		}
	}
	return file + ":" + name
}

// Checks reads the checks from the source: every add(Error|Warning,
// summary, detail, path...) and Finding{...} of flinkconf, and every
// AddAttributeError / AddAttributeWarning of the plan checks. A check is
// listed because the code makes it, so the list cannot fall behind.
func Checks(root string) ([]Check, error) {
	var out []Check
	seen := map[string]bool{}
	files := map[string]*ast.File{}
	// The provider's check files are one package: a message held in a
	// constant of another of them (irsaConflictDetail) renders as written.
	providerVars := map[string]ast.Expr{}
	for _, f := range CheckSources {
		file, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, f), nil, 0)
		if err != nil {
			return nil, err
		}
		files[f] = file
		if strings.HasPrefix(f, "internal/provider/") {
			for k, v := range stringVars(file) {
				if _, ok := providerVars[k]; !ok {
					providerVars[k] = v
				}
			}
		}
	}
	for _, f := range CheckSources {
		file := files[f]
		e := extractor{vars: stringVars(file)}
		if strings.HasPrefix(f, "internal/provider/") {
			for k, v := range providerVars {
				if _, ok := e.vars[k]; !ok {
					e.vars[k] = v
				}
			}
		}
		for _, d := range file.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			targets := []assignment{{"flinkstate_deployment", ""}}
			domain := !strings.HasPrefix(f, "internal/provider/") && !strings.HasPrefix(f, "internal/flinkconf/")
			switch {
			case strings.HasPrefix(f, "internal/provider/"):
				targets = checkFuncs[fd.Name.Name]
			case domainCheckFuncs[funcKey(f, fd)] != nil: // flinkconf's too
				targets = domainCheckFuncs[funcKey(f, fd)]
			case domain && domainNotChecks[funcKey(f, fd)]:
				continue
			case domain:
				targets = domainCheckFuncs[funcKey(f, fd)]
			}
			var err error
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				var c *Check
				switch n := n.(type) {
				case *ast.CallExpr:
					c = e.call(n)
				case *ast.CompositeLit:
					c = e.finding(n)
				}
				if c == nil {
					return true
				}
				if len(targets) == 0 {
					err = fmt.Errorf("%s: %s makes a check (%q) that docgen does not assign to a resource: add it to checkFuncs "+
						"(domainCheckFuncs in a domain package)", f, fd.Name.Name, c.Summary)
					return false
				}
				for _, t := range targets {
					c := *c
					c.Source, c.Resource, c.AtApply = f, t.resource, strings.HasSuffix(fd.Name.Name, "AtApply")
					if t.path != "" {
						c.Path = t.path
					}
					key := fmt.Sprint(c.Resource, c.Error, c.Path, c.Summary, c.Detail, c.AtApply)
					if !seen[key] {
						seen[key] = true
						out = append(out, c)
					}
				}
				return true
			})
			if err != nil {
				return nil, err
			}
		}
	}
	// The table's settings are checked by one loop (flinkconf.Setting.Validate),
	// whose messages the table renders for each setting itself.
	for _, sc := range flinkconf.SettingChecks() {
		out = append(out, Check{Error: true, Path: sc.Path, Summary: sc.Summary, Detail: sc.Detail,
			Source: "internal/flinkconf/settings.go", Resource: "flinkstate_deployment"})
	}
	// The autoscaler's ranges are one table (flinkconf.AutoscalerRanges),
	// checked by one loop whose message each range renders itself.
	for _, sc := range flinkconf.AutoscalerChecks() {
		out = append(out, Check{Error: true, Path: sc.Path, Summary: sc.Summary, Detail: sc.Detail,
			Source: "internal/flinkconf/autoscaler.go", Resource: "flinkstate_deployment"})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

type extractor struct{ vars map[string]ast.Expr }

// stringVars maps names assigned once in the file (constants, := and =)
// to their first value, to render a detail held in a variable.
func stringVars(file *ast.File) map[string]ast.Expr {
	vars := map[string]ast.Expr{}
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ValueSpec:
			for i, name := range n.Names {
				if i < len(n.Values) {
					if _, ok := vars[name.Name]; !ok {
						vars[name.Name] = n.Values[i]
					}
				}
			}
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				if id, ok := l.(*ast.Ident); ok && i < len(n.Rhs) && len(n.Lhs) == len(n.Rhs) {
					if _, ok := vars[id.Name]; !ok {
						vars[id.Name] = n.Rhs[i]
					}
				}
			}
		}
		return true
	})
	return vars
}

var verb = regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z]`)

const hole = "…"

// text renders a string expression: literals as written, formatting verbs
// and computed parts as "…".
func (e extractor) text(x ast.Expr, depth int) string {
	if depth > 4 {
		return hole
	}
	switch x := x.(type) {
	case *ast.BasicLit:
		if x.Kind == token.STRING {
			if s, err := strconv.Unquote(x.Value); err == nil {
				return s
			}
		}
	case *ast.BinaryExpr:
		if x.Op == token.ADD {
			return e.text(x.X, depth) + e.text(x.Y, depth)
		}
	case *ast.ParenExpr:
		return e.text(x.X, depth)
	case *ast.CallExpr:
		if sel, ok := x.Fun.(*ast.SelectorExpr); ok && len(x.Args) > 0 {
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "fmt" && sel.Sel.Name == "Sprintf" {
				format := e.text(x.Args[0], depth+1)
				return strings.ReplaceAll(verb.ReplaceAllString(format, hole), "%%", "%")
			}
		}
	case *ast.Ident:
		if v, ok := e.vars[x.Name]; ok {
			return e.text(v, depth+1)
		}
	}
	return hole
}

func severity(x ast.Expr) (isError, ok bool) {
	id, isIdent := x.(*ast.Ident)
	if sel, isSel := x.(*ast.SelectorExpr); isSel {
		id, isIdent = sel.Sel, true
	}
	if !isIdent {
		return false, false
	}
	switch id.Name {
	case "Error":
		return true, true
	case "Warning":
		return false, true
	}
	return false, false
}

func (e extractor) call(n *ast.CallExpr) *Check {
	switch fun := n.Fun.(type) {
	case *ast.Ident:
		// flinkdeploy, preflight: warning([]string{"a", "b"}, summary, detail)
		if fun.Name == "warning" && len(n.Args) == 3 {
			return &Check{Path: e.pathList(n.Args[0]), Summary: e.text(n.Args[1], 0), Detail: e.text(n.Args[2], 0)}
		}
		// flinkconf: add(Error, summary, detail, path...)
		if fun.Name != "add" || len(n.Args) < 3 {
			return nil
		}
		isErr, ok := severity(n.Args[0])
		if !ok {
			return nil
		}
		var parts []string
		for _, p := range n.Args[3:] {
			parts = append(parts, e.text(p, 0))
		}
		return &Check{Error: isErr, Summary: e.text(n.Args[1], 0), Detail: e.text(n.Args[2], 0), Path: strings.Join(parts, ".")}
	case *ast.SelectorExpr:
		// provider: diags.AddAttributeError(path.Root("a").AtName("b"), summary, detail)
		if (fun.Sel.Name != "AddAttributeError" && fun.Sel.Name != "AddAttributeWarning") || len(n.Args) != 3 {
			return nil
		}
		return &Check{Error: fun.Sel.Name == "AddAttributeError", Path: e.attrPath(n.Args[0]),
			Summary: e.text(n.Args[1], 0), Detail: e.text(n.Args[2], 0)}
	}
	return nil
}

// attrPath renders path.Root("a").AtName("b") as a.b.
func (e extractor) attrPath(x ast.Expr) string {
	call, ok := x.(*ast.CallExpr)
	if !ok {
		if id, ok := x.(*ast.Ident); ok {
			if v, ok := e.vars[id.Name]; ok {
				return e.attrPath(v)
			}
		}
		return hole
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || len(call.Args) != 1 {
		return hole
	}
	name := e.text(call.Args[0], 0)
	switch sel.Sel.Name {
	case "Root":
		return name
	case "AtName":
		return e.attrPath(sel.X) + "." + name
	}
	return hole
}

// finding reads Finding{Severity: Error, Path: []string{...}, Summary: ..., Detail: ...}.
func (e extractor) finding(n *ast.CompositeLit) *Check {
	// Finding{...} (flinkconf.Finding{...} in another package), or an
	// element of []Finding{{...}} whose type is elided.
	switch t := n.Type.(type) {
	case nil:
	case *ast.Ident:
		if t.Name != "Finding" {
			return nil
		}
	case *ast.SelectorExpr:
		if t.Sel.Name != "Finding" {
			return nil
		}
	default:
		return nil
	}
	c := &Check{}
	sev := false
	for _, el := range n.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		key, ok := kv.Key.(*ast.Ident)
		if !ok {
			return nil
		}
		switch key.Name {
		case "Severity":
			c.Error, sev = severity(kv.Value)
		case "Summary":
			c.Summary = e.text(kv.Value, 0)
		case "Detail":
			c.Detail = e.text(kv.Value, 0)
		case "Path":
			c.Path = e.pathList(kv.Value)
		}
	}
	if !sev {
		return nil
	}
	return c
}

// pathList renders []string{"a", "b"} (or a variable holding it) as a.b.
func (e extractor) pathList(x ast.Expr) string {
	if id, ok := x.(*ast.Ident); ok {
		if v, ok := e.vars[id.Name]; ok {
			x = v
		}
	}
	lit, ok := x.(*ast.CompositeLit)
	if !ok {
		return ""
	}
	var parts []string
	for _, p := range lit.Elts {
		parts = append(parts, e.text(p, 0))
	}
	return strings.Join(parts, ".")
}

// PlanChecksFor renders the checks of one resource as its page's list.
func PlanChecksFor(resource string) func(root string) (string, error) {
	return func(root string) (string, error) {
		cs, err := Checks(root)
		if err != nil {
			return "", err
		}
		var mine []Check
		for _, c := range cs {
			if c.Resource == resource {
				mine = append(mine, c)
			}
		}
		if len(mine) == 0 {
			return "", fmt.Errorf("no checks found for %s", resource)
		}
		return renderChecks(mine), nil
	}
}

func renderChecks(cs []Check) string {
	var b strings.Builder
	errors, warnings := 0, 0
	for _, c := range cs {
		if c.Error {
			errors++
		} else {
			warnings++
		}
	}
	fmt.Fprintf(&b, "%s and %s, listed by `go generate` (`internal/docgen`) from the code that makes them: "+
		"each with the message the plan shows, `…` standing for the values it names. Errors stop the plan; warnings explain.\n\n", count(errors, "error"), count(warnings, "warning"))
	for _, c := range cs {
		sev := "Warning"
		if c.Error {
			sev = "**Error**"
		}
		p := c.Path
		if p == "" {
			p = "(the whole resource)"
		} else {
			p = "`" + p + "`"
		}
		detail := strings.TrimSpace(strings.ReplaceAll(c.Detail, "\n", " "))
		when := ""
		if c.AtApply {
			when = " (at apply, before anything is written: the plan could not see it)"
		}
		fmt.Fprintf(&b, "- %s, %s%s: *%s*. %s\n", sev, p, when, markdownSafe(strings.TrimSuffix(c.Summary, ".")), markdownSafe(detail))
	}
	return b.String()
}

// markdownSafe keeps a message literal in Markdown: asterisks and
// underscores of key names (kubernetes.operator.*, ha_dir) would start
// emphasis, and < > would be read as HTML.
func markdownSafe(s string) string {
	r := strings.NewReplacer("*", `\*`, "_", `\_`, "<", "&lt;", ">", "&gt;")
	return r.Replace(s)
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
