package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/datasourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/helpers/validatordiag"
	"github.com/hashicorp/terraform-plugin-framework-validators/objectvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/resourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// Rules between attributes that the framework cannot express with
// Required (exactly one of two blocks, at least one of two attributes,
// attributes that conflict) are built here together with the sentence the
// docs say about them: the validator and its description come from the
// same names, so the rendered docs cannot drift from what is enforced.
// TestSchemas_rulesDescribed fails when a rule validator's sentence is
// missing from an attribute it names.

// quoteNames renders names as `a`, `b` or `c` (joiner "or"/"and").
func quoteNames(names []string, joiner string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "`" + n + "`"
	}
	switch len(q) {
	case 0:
		return ""
	case 1:
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " " + joiner + " " + q[len(q)-1]
}

// exactlyOneSentence, atLeastOneSentence, conflictsSentence and
// requiresSentence are what an attribute's description says about a rule;
// the schema test computes the same sentences from the validators.
func exactlyOneSentence(names []string) string {
	return "Exactly one of " + quoteNames(names, "or") + " must be set."
}

func atLeastOneSentence(names []string) string {
	return "At least one of " + quoteNames(names, "or") + " must be set."
}

func conflictsSentence(others []string) string {
	return "Conflicts with " + quoteNames(others, "and") + "."
}

func requiresSentence(others []string) string {
	return "Requires " + quoteNames(others, "and") + "."
}

// rootRule is a rule on attributes named from the schema's root (dotted
// for attributes of a block: "state.store_id"), enforced by a config
// validator of the resource or data source.
type rootRule struct {
	exactlyOne bool // else at least one
	names      []string
}

func exactlyOneOf(names ...string) rootRule { return rootRule{exactlyOne: true, names: names} }
func atLeastOneOf(names ...string) rootRule { return rootRule{names: names} }

func (r rootRule) sentence() string {
	if r.exactlyOne {
		return exactlyOneSentence(r.names)
	}
	return atLeastOneSentence(r.names)
}

// doc appends the rule's sentence to the description of an attribute it names.
func (r rootRule) doc(desc string) string { return desc + " " + r.sentence() }

func (r rootRule) exprs() []path.Expression {
	exprs := make([]path.Expression, len(r.names))
	for i, n := range r.names {
		parts := strings.Split(n, ".")
		e := path.MatchRoot(parts[0])
		for _, p := range parts[1:] {
			e = e.AtName(p)
		}
		exprs[i] = e
	}
	return exprs
}

func (r rootRule) resource() resource.ConfigValidator {
	if r.exactlyOne {
		return resourcevalidator.ExactlyOneOf(r.exprs()...)
	}
	return resourcevalidator.AtLeastOneOf(r.exprs()...)
}

func (r rootRule) dataSource() datasource.ConfigValidator {
	if r.exactlyOne {
		return datasourcevalidator.ExactlyOneOf(r.exprs()...)
	}
	return datasourcevalidator.AtLeastOneOf(r.exprs()...)
}

// siblingRule relates one attribute to siblings in the same block: it
// conflicts with them, or requires them. The validator goes on the
// attribute; doc is for its description and other for each sibling's
// (a conflict is said on both sides).
type siblingRule struct {
	requires bool // else conflicts
	others   []string
}

func conflictsWith(others ...string) siblingRule { return siblingRule{others: others} }
func requires(others ...string) siblingRule      { return siblingRule{requires: true, others: others} }

func (r siblingRule) exprs() []path.Expression {
	exprs := make([]path.Expression, len(r.others))
	for i, n := range r.others {
		exprs[i] = path.MatchRelative().AtParent().AtName(n)
	}
	return exprs
}

func (r siblingRule) doc(desc string) string {
	if r.requires {
		return desc + " " + requiresSentence(r.others)
	}
	return desc + " " + conflictsSentence(r.others)
}

// other is the sentence of a sibling named by a conflict of self's.
func (r siblingRule) other(self, desc string) string {
	return desc + " " + conflictsSentence([]string{self})
}

func (r siblingRule) string() validator.String {
	if r.requires {
		return stringvalidator.AlsoRequires(r.exprs()...)
	}
	return stringvalidator.ConflictsWith(r.exprs()...)
}

func (r siblingRule) set() validator.Set {
	if r.requires {
		return setvalidator.AlsoRequires(r.exprs()...)
	}
	return setvalidator.ConflictsWith(r.exprs()...)
}

func (r siblingRule) object() validator.Object {
	if r.requires {
		return objectvalidator.AlsoRequires(r.exprs()...)
	}
	return objectvalidator.ConflictsWith(r.exprs()...)
}

// blockRequired: attributes of an optional block that must be set whenever
// the block is. The framework checks a Required attribute of a
// SingleNestedBlock even when the block is absent ("Missing Configuration
// for Required Attribute"), so these stay Optional, with a validator on the
// block and a sentence on each attribute.
type blockRequired struct {
	block string
	names []string
}

func requiredInBlock(block string, names ...string) blockRequired {
	return blockRequired{block: block, names: names}
}

func requiredInBlockSentence(block string) string {
	return "Required when the `" + block + "` block is present."
}

// doc appends the sentence to the description of one of the names.
func (r blockRequired) doc(desc string) string { return desc + " " + requiredInBlockSentence(r.block) }

func (r blockRequired) object() validator.Object {
	exprs := make(path.Expressions, len(r.names))
	for i, n := range r.names {
		exprs[i] = path.MatchRelative().AtName(n)
	}
	return blockRequiredValidator{names: r.names, exprs: exprs}
}

// blockRequiredValidator is objectvalidator.AlsoRequires with the names
// relative to the block, read from the block's own value: the same
// description and diagnostics, without matching path expressions against
// the whole configuration (that walk, which rebuilds the schema's
// attribute map at every step, was a seventh of the provider's CPU in a
// plan of 200 deployments).
type blockRequiredValidator struct {
	names []string
	exprs path.Expressions // for the description, as AlsoRequires words it
}

func (v blockRequiredValidator) Description(ctx context.Context) string {
	return v.MarkdownDescription(ctx)
}

func (v blockRequiredValidator) MarkdownDescription(context.Context) string {
	return fmt.Sprintf("Ensure that if an attribute is set, also these are set: %q", v.exprs)
}

// ValidateObject does what AlsoRequiresValidator.Validate does: nothing
// for a null or unknown block; stop at the first unknown attribute (the
// errors found before it stay); an error for each null one.
func (v blockRequiredValidator) ValidateObject(_ context.Context, req validator.ObjectRequest, resp *validator.ObjectResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	attrs := req.ConfigValue.Attributes()
	for _, n := range v.names {
		val, ok := attrs[n]
		if !ok {
			resp.Diagnostics.AddAttributeError(req.Path.AtName(n), "Invalid Attribute Path", "The block has no attribute "+n+".")
			continue
		}
		if val.IsUnknown() {
			return
		}
		if val.IsNull() {
			resp.Diagnostics.Append(validatordiag.InvalidAttributeCombinationDiagnostic(req.Path,
				fmt.Sprintf("Attribute %q must be specified when %q is specified", req.Path.AtName(n), req.Path)))
		}
	}
}
