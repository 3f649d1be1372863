package provider

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/terraform-plugin-framework-validators/objectvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// blockRequiredValidator gives what objectvalidator.AlsoRequires gave for
// the same names: description and diagnostics, for every combination of
// null, unknown and set attributes in the block (and a null or unknown
// block).
func TestBlockRequiredValidator_sameAsAlsoRequires(t *testing.T) {
	ctx := context.Background()
	rule := requiredInBlock("blk", "a", "b", "c")
	mine := rule.object()
	theirs := objectvalidator.AlsoRequires(path.MatchRelative().AtName("a"), path.MatchRelative().AtName("b"), path.MatchRelative().AtName("c"))
	if mine.Description(ctx) != theirs.Description(ctx) || mine.MarkdownDescription(ctx) != theirs.MarkdownDescription(ctx) {
		t.Fatalf("description %q, AlsoRequires %q", mine.Description(ctx), theirs.Description(ctx))
	}
	schema := rschema.Schema{
		Attributes: map[string]rschema.Attribute{"other": rschema.StringAttribute{Optional: true}},
		Blocks: map[string]rschema.Block{"blk": rschema.SingleNestedBlock{Attributes: map[string]rschema.Attribute{
			"a": rschema.StringAttribute{Optional: true},
			"b": rschema.StringAttribute{Optional: true},
			"c": rschema.StringAttribute{Optional: true},
			"d": rschema.StringAttribute{Optional: true},
		}}},
	}
	blkType := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"a": tftypes.String, "b": tftypes.String, "c": tftypes.String, "d": tftypes.String}}
	rootType := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"other": tftypes.String, "blk": blkType}}
	states := []tftypes.Value{tftypes.NewValue(tftypes.String, nil), tftypes.NewValue(tftypes.String, tftypes.UnknownValue), tftypes.NewValue(tftypes.String, "x")}
	failing := 0 // cases where AlsoRequires reports something
	check := func(name string, blk tftypes.Value) {
		t.Helper()
		raw := tftypes.NewValue(rootType, map[string]tftypes.Value{"other": tftypes.NewValue(tftypes.String, nil), "blk": blk})
		cfg := tfsdk.Config{Schema: schema, Raw: raw}
		var obj types.Object
		if d := cfg.GetAttribute(ctx, path.Root("blk"), &obj); d.HasError() {
			t.Fatal(d)
		}
		req := validator.ObjectRequest{Path: path.Root("blk"), PathExpression: path.MatchRoot("blk"), Config: cfg, ConfigValue: obj}
		var got, want validator.ObjectResponse
		mine.ValidateObject(ctx, req, &got)
		theirs.ValidateObject(ctx, req, &want)
		if want.Diagnostics.HasError() {
			failing++
		}
		if diff := cmp.Diff(want.Diagnostics, got.Diagnostics); diff != "" {
			t.Errorf("%s: diagnostics differ from AlsoRequires (-AlsoRequires +blockRequired):\n%s", name, diff)
		}
	}
	check("null block", tftypes.NewValue(blkType, nil))
	check("unknown block", tftypes.NewValue(blkType, tftypes.UnknownValue))
	for _, a := range states {
		for _, b := range states {
			for _, c := range states {
				for _, d := range states {
					blk := tftypes.NewValue(blkType, map[string]tftypes.Value{"a": a, "b": b, "c": c, "d": d})
					check(blk.String(), blk)
				}
			}
		}
	}
	if failing == 0 {
		t.Fatal("no case had a missing attribute: the comparison proves nothing")
	}
}
