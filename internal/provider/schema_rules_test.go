package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// The rules between attributes (exactly one of, at least one of, conflicts
// with, requires) are enforced by validators; the docs are rendered from
// descriptions. This test reads every validator of every schema (and every
// config validator), works out from the validator itself which attributes
// it names, and fails when one of them does not say the rule in its
// description (and markdown description, when set), or when the rendered
// page in docs/ does not. A Required attribute inside a block is rendered
// "Required" by tfplugindocs and needs no sentence.

// ruleNode is one attribute or block of a schema, by dotted path.
type ruleNode struct {
	attribute  bool // an attribute (a block has no Required)
	required   bool
	desc, md   string
	validators []string // the validators' descriptions
}

type describer interface {
	Description(context.Context) string
}

// walkSchema collects attributes and blocks of any of the framework's
// schema packages (provider, resource, data source) by reflection: they
// share field names (Description, MarkdownDescription, Validators,
// Attributes, Blocks).
func walkSchema(prefix string, attrs, blocks reflect.Value, out map[string]*ruleNode) {
	for _, m := range []reflect.Value{attrs, blocks} {
		if !m.IsValid() || m.Kind() != reflect.Map {
			continue
		}
		for _, k := range m.MapKeys() {
			v := m.MapIndex(k)
			for v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer {
				v = v.Elem()
			}
			name := k.String()
			if prefix != "" {
				name = prefix + "." + name
			}
			n := &ruleNode{}
			if f := v.FieldByName("Description"); f.IsValid() {
				n.desc = f.String()
			}
			if f := v.FieldByName("MarkdownDescription"); f.IsValid() {
				n.md = f.String()
			}
			if f := v.FieldByName("Validators"); f.IsValid() {
				for i := 0; i < f.Len(); i++ {
					if d, ok := f.Index(i).Interface().(describer); ok {
						n.validators = append(n.validators, d.Description(context.Background()))
					}
				}
			}
			out[name] = n
			if f := v.FieldByName("Required"); f.IsValid() {
				n.attribute, n.required = true, f.Bool()
			}
			walkSchema(name, v.FieldByName("Attributes"), v.FieldByName("Blocks"), out)
		}
	}
}

// exprNames parses the path expressions a validator's description lists:
// `"[<.a,<.b]"` (relative, resolved against the owner's parent) or
// `[state.x,b]` (from the root).
func exprNames(owner, list string) []string {
	list = strings.Trim(strings.TrimSpace(list), `"[]`)
	parent := ""
	if i := strings.LastIndex(owner, "."); i >= 0 {
		parent = owner[:i]
	}
	var out []string
	for _, e := range strings.Split(list, ",") {
		if strings.HasPrefix(e, "<.") {
			e = strings.TrimPrefix(e, "<.")
			if parent != "" {
				e = parent + "." + e
			}
		}
		out = append(out, e)
	}
	return out
}

func lastName(p string) string { return p[strings.LastIndex(p, ".")+1:] }

// expectation: the node at path must say sentence.
type expectation struct{ path, sentence, rule string }

// ruleExpectations turns each rule validator into the sentences the
// attributes it names must carry. A validator that looks like a rule but
// is not understood here is a problem too, so no rule goes unchecked.
func ruleExpectations(nodes map[string]*ruleNode, config []string) (exps []expectation, problems []string) {
	attrPrefixes := map[string]string{
		"Ensure that if an attribute is set, these are not set: ":  "conflicts",
		"Ensure that if an attribute is set, also these are set: ": "requires",
	}
	rulish := []string{"these are not set", "these are set", "one and only one", "at least one", "must be configured", "cannot be configured together"}
	for owner, n := range nodes {
		for _, d := range n.validators {
			kind, list := "", ""
			for p, k := range attrPrefixes {
				if strings.HasPrefix(d, p) {
					kind, list = k, strings.TrimPrefix(d, p)
				}
			}
			if kind == "" {
				for _, w := range rulish {
					if strings.Contains(strings.ToLower(d), w) {
						problems = append(problems, fmt.Sprintf("%s: rule validator %q not understood by this test: build it with rules.go", owner, d))
						break
					}
				}
				continue
			}
			if kind == "requires" && !strings.Contains(list, "<.") {
				// A block's validator naming its own attributes
				// (path.MatchRelative().AtName): required in the block.
				for _, n := range strings.Split(strings.Trim(list, `"[]`), ",") {
					exps = append(exps, expectation{owner + "." + n, requiredInBlockSentence(lastName(owner)), d})
				}
				continue
			}
			others := exprNames(owner, list)
			short := make([]string, len(others))
			for i, o := range others {
				short[i] = lastName(o)
			}
			if kind == "requires" {
				exps = append(exps, expectation{owner, requiresSentence(short), d})
				continue
			}
			exps = append(exps, expectation{owner, conflictsSentence(short), d})
			for _, o := range others {
				exps = append(exps, expectation{o, conflictsSentence([]string{lastName(owner)}), d})
			}
		}
	}
	configPrefixes := map[string]string{
		"Exactly one of these attributes must be configured: ":  "exactly",
		"At least one of these attributes must be configured: ": "atleast",
		"These attributes cannot be configured together: ":      "conflicting",
	}
	for _, d := range config {
		kind, list := "", ""
		for p, k := range configPrefixes {
			if strings.HasPrefix(d, p) {
				kind, list = k, strings.TrimPrefix(d, p)
			}
		}
		if kind == "" {
			for _, w := range rulish {
				if strings.Contains(strings.ToLower(d), w) {
					problems = append(problems, fmt.Sprintf("config validator %q not understood by this test: build it with rules.go", d))
					break
				}
			}
			continue
		}
		names := exprNames("", list)
		for _, name := range names {
			var s string
			switch kind {
			case "exactly":
				s = exactlyOneSentence(names)
			case "atleast":
				s = atLeastOneSentence(names)
			default:
				var others []string
				for _, o := range names {
					if o != name {
						others = append(others, o)
					}
				}
				s = conflictsSentence(others)
			}
			exps = append(exps, expectation{name, s, d})
		}
	}
	sort.Slice(exps, func(i, j int) bool { return exps[i].path+exps[i].sentence < exps[j].path+exps[j].sentence })
	return exps, problems
}

// checkRules returns what is missing: each expectation against the
// node's descriptions and the rendered page.
func checkRules(typeName string, nodes map[string]*ruleNode, config []string, page string) []string {
	exps, problems := ruleExpectations(nodes, config)
	saysRequired := map[string]bool{}
	for _, e := range exps {
		if strings.HasPrefix(e.sentence, "Required when") {
			saysRequired[e.path] = true
		}
	}
	for name, n := range nodes {
		if hasMarkdown(n.desc) {
			problems = append(problems, fmt.Sprintf("%s.%s: Description has Markdown; it belongs in MarkdownDescription (markdownDescriptions)", typeName, name))
		}
		// "Required in this block" in the text of an Optional attribute
		// renders as "Optional": make it Required instead.
		if n.attribute && !n.required && !saysRequired[name] && requiredWord.MatchString(n.desc) {
			problems = append(problems, fmt.Sprintf("%s.%s: Optional, but its description says it is required: make it Required", typeName, name))
		}
	}
	for _, e := range exps {
		n, ok := nodes[e.path]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: rule %q names %s, which is not in the schema", typeName, e.rule, e.path))
			continue
		}
		if !strings.Contains(n.desc, e.sentence) && !strings.Contains(n.desc, plainText(e.sentence)) {
			problems = append(problems, fmt.Sprintf("%s.%s: description does not say %q (rule: %s)", typeName, e.path, e.sentence, e.rule))
		}
		if n.md != "" && !strings.Contains(n.md, e.sentence) {
			problems = append(problems, fmt.Sprintf("%s.%s: markdown description does not say %q (rule: %s)", typeName, e.path, e.sentence, e.rule))
		}
		if page != "" && !strings.Contains(page, e.sentence) {
			problems = append(problems, fmt.Sprintf("%s.%s: the rendered docs page does not say %q: run make docs", typeName, e.path, e.sentence))
		}
	}
	return problems
}

var requiredWord = regexp.MustCompile(`(?i)\brequired (in|inside|when)\b|\bis required\b`)

func describeAll(vs []describer) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Description(context.Background())
	}
	return out
}

func readPage(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", rel))
	if err != nil {
		t.Fatalf("docs page: %v", err)
	}
	// tfplugindocs renders descriptions as written; compare ignoring line breaks.
	return strings.Join(strings.Fields(string(b)), " ")
}

func TestSchemas_rulesDescribed(t *testing.T) {
	ctx := context.Background()
	p := New("test")()
	checked := 0
	report := func(typeName string, nodes map[string]*ruleNode, config []string, page string) {
		exps, _ := ruleExpectations(nodes, config)
		checked += len(exps)
		for _, msg := range checkRules(typeName, nodes, config, page) {
			t.Error(msg)
		}
	}

	var ps provider.SchemaResponse
	p.Schema(ctx, provider.SchemaRequest{}, &ps)
	nodes := map[string]*ruleNode{}
	walkSchema("", reflect.ValueOf(ps.Schema.Attributes), reflect.ValueOf(ps.Schema.Blocks), nodes)
	report("provider", nodes, nil, readPage(t, "index.md"))

	for _, f := range p.Resources(ctx) {
		r := f()
		var md resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "flinkstate"}, &md)
		var sr resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &sr)
		nodes := map[string]*ruleNode{}
		walkSchema("", reflect.ValueOf(sr.Schema.Attributes), reflect.ValueOf(sr.Schema.Blocks), nodes)
		var config []string
		if cv, ok := r.(resource.ResourceWithConfigValidators); ok {
			for _, v := range cv.ConfigValidators(ctx) {
				config = append(config, describeAll([]describer{v})...)
			}
		}
		report(md.TypeName, nodes, config, readPage(t, "resources/"+strings.TrimPrefix(md.TypeName, "flinkstate_")+".md"))
	}
	for _, f := range p.DataSources(ctx) {
		d := f()
		var md datasource.MetadataResponse
		d.Metadata(ctx, datasource.MetadataRequest{ProviderTypeName: "flinkstate"}, &md)
		var sr datasource.SchemaResponse
		d.Schema(ctx, datasource.SchemaRequest{}, &sr)
		nodes := map[string]*ruleNode{}
		walkSchema("", reflect.ValueOf(sr.Schema.Attributes), reflect.ValueOf(sr.Schema.Blocks), nodes)
		var config []string
		if cv, ok := d.(datasource.DataSourceWithConfigValidators); ok {
			for _, v := range cv.ConfigValidators(ctx) {
				config = append(config, describeAll([]describer{v})...)
			}
		}
		report(md.TypeName, nodes, config, readPage(t, "data-sources/"+strings.TrimPrefix(md.TypeName, "flinkstate_")+".md"))
	}
	// The rules the issue named are among those checked (a walk that
	// found nothing would pass vacuously).
	if checked < 20 {
		t.Errorf("only %d rule sentences checked; the walk is not reaching the schemas", checked)
	}
}

// The check itself catches a rule its descriptions do not say, on both
// sides of a conflict, and a config rule on a block's attribute.
func TestSchemas_rulesDescribedCatchesMissingSentence(t *testing.T) {
	schema := rschema.Schema{
		Attributes: map[string]rschema.Attribute{
			"a": rschema.StringAttribute{Optional: true, Description: "A.",
				Validators: []validator.String{stringvalidator.ConflictsWith(path.MatchRelative().AtParent().AtName("b"))}},
			"b": rschema.StringAttribute{Optional: true, Description: "B."},
		},
		Blocks: map[string]rschema.Block{
			"blk": rschema.SingleNestedBlock{Description: "Blk.", Attributes: map[string]rschema.Attribute{
				"x": rschema.StringAttribute{Optional: true, Description: "X. " + exactlyOneSentence([]string{"blk.x", "c"})},
				"y": rschema.StringAttribute{Optional: true, Description: "Y."},
			}, Validators: []validator.Object{requiredInBlock("blk", "y").object()}},
		},
	}
	markdownDescriptions(&schema)
	nodes := map[string]*ruleNode{}
	walkSchema("", reflect.ValueOf(schema.Attributes), reflect.ValueOf(schema.Blocks), nodes)
	config := []string{exactlyOneOf("blk.x", "c").resource().Description(context.Background())}
	got := checkRules("t", nodes, config, "")
	want := []string{
		"t.a: description does not say \"Conflicts with `b`.\"",
		"t.b: description does not say \"Conflicts with `a`.\"",
		"t.blk.y: description does not say \"Required when the `blk` block is present.\"",
		"t: rule \"Exactly one of these attributes must be configured: [blk.x,c]\" names c, which is not in the schema",
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			if strings.HasPrefix(g, w) {
				found = true
			}
		}
		if !found {
			t.Errorf("missing problem %q in %q", w, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d problems, want %d: %q", len(got), len(want), got)
	}
	// Said on both sides, the same schema passes.
	nodes["a"].md = conflictsWith("b").doc("A.")
	nodes["b"].md = conflictsWith("b").other("a", "B.")
	nodes["c"] = &ruleNode{md: exactlyOneOf("blk.x", "c").doc("C.")}
	nodes["blk.y"].md = requiredInBlock("blk", "y").doc("Y.")
	for _, n := range nodes {
		if n.md != "" {
			n.desc = plainText(n.md)
		}
	}
	if got := checkRules("t", nodes, config, ""); len(got) != 0 {
		t.Errorf("a schema that says its rules is reported: %q", got)
	}
}

// An Optional attribute whose text says it is required is reported: it
// would render "Optional" in the docs.
func TestSchemas_requiredInTextCaught(t *testing.T) {
	schema := rschema.Schema{Attributes: map[string]rschema.Attribute{
		"role_arn": rschema.StringAttribute{Optional: true, Description: "ARN of the role. Required in this block."},
		"ok":       rschema.StringAttribute{Required: true, Description: "Is required here too."},
	}}
	nodes := map[string]*ruleNode{}
	walkSchema("", reflect.ValueOf(schema.Attributes), reflect.ValueOf(schema.Blocks), nodes)
	got := checkRules("t", nodes, nil, "")
	if len(got) != 1 || !strings.HasPrefix(got[0], "t.role_arn: Optional, but its description says it is required") {
		t.Errorf("got %q", got)
	}
}
