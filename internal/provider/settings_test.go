package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
)

// Every table setting at representative values survives the provider's
// side of an import and a plan: the imported object's configuration
// becomes attributes (fromSpec) and the attributes the inputs
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
			var m deploymentModel
			live := &unstructured.Unstructured{Object: map[string]any{
				"metadata": map[string]any{"namespace": "ns", "name": "job"},
				"spec": map[string]any{
					"image": "flink:2.2.1", "flinkVersion": "v2_2",
					"job":                map[string]any{"jarURI": "local:///opt/flink/job.jar", "upgradeMode": flinkconf.UpgradeStateless, "parallelism": int64(1)},
					"taskManager":        map[string]any{"resource": map[string]any{"memory": "2048m", "cpu": int64(1)}},
					"flinkConfiguration": map[string]any{"execution.checkpointing.dir": "s3://acme/cp", set.Key: v},
				},
			}}
			if m.fromSpec(ctx, live, true, nil, &diags); diags.HasError() {
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
