package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
)

// Every table setting at representative values survives the provider's
// side of an import and a plan: the imported object's configuration
// becomes attributes (fromConfiguration) and the attributes the inputs
// (input) with the same value, and the schema has its attribute with the
// table's description.
func TestSettingsRoundTripThroughTheModel(t *testing.T) {
	ctx := context.Background()
	var sr resource.SchemaResponse
	(&deploymentResource{}).Schema(ctx, resource.SchemaRequest{}, &sr)
	for _, set := range flinkconf.Settings {
		block, ok := sr.Schema.Blocks[set.Block()].(schema.SingleNestedBlock)
		if !ok {
			t.Fatalf("%s: no block %q", set.Attr, set.Block())
		}
		if a, ok := block.Attributes[set.Name()]; !ok || (a.GetDescription() != set.Description && a.GetMarkdownDescription() != set.Description) {
			t.Errorf("%s: attribute missing or not described by the table", set.Attr)
		}
		var values []string
		switch set.Kind {
		case flinkconf.KindInt:
			values = []string{"1", "7"}
		case flinkconf.KindBool:
			values = []string{"true", "false"}
		case flinkconf.KindEnum:
			values = set.Values
		default:
			values = []string{"60s", "10 min"}
		}
		for _, v := range values {
			var diags diag.Diagnostics
			m := deploymentModel{deploymentSpecModel: deploymentSpecModel{
				Job:         &jobModel{UpgradeMode: types.StringValue(flinkconf.UpgradeStateless), Parallelism: types.Int64Value(1)},
				TaskManager: &taskMgrModel{},
			}}
			cfg := map[string]string{"execution.checkpointing.dir": "s3://acme/cp", set.Key: v}
			if !m.fromConfiguration(ctx, cfg, "test", &diags) || diags.HasError() {
				t.Fatalf("%s = %q: import failed: %v", set.Attr, v, diags)
			}
			in, ok := m.input(ctx, nil, &diags)
			if !ok || diags.HasError() {
				t.Fatalf("%s = %q: input: %v", set.Attr, v, diags)
			}
			if got := in.Values[set.Attr]; got != v {
				t.Errorf("%s = %q came back as %q", set.Attr, v, got)
			}
			if derived, _ := flinkconf.Derive(in); derived[set.Key] != v {
				t.Errorf("%s = %q derives %s = %q", set.Attr, v, set.Key, derived[set.Key])
			}
		}
	}
}
