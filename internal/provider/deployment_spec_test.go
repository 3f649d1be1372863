package provider

import (
	"context"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
)

// An import decides the pod template and the carry-over check against the
// inputs the imported object stands for (flinkdeploy.Imported.Input); the
// model fromSpec fills from it gives the plan the same inputs, with and
// without the defaults the object lacked unwritten.
func TestFromSpec_importGivesTheDomainsInput(t *testing.T) {
	ctx := context.Background()
	const plugin = `
podTemplate:
  metadata: {labels: {team: payments}}
  spec:
    containers:
    - name: flink-main-container
      env: [{name: ENABLE_BUILT_IN_PLUGINS, value: flink-s3-fs-hadoop-2.2.1.jar}]
`
	for name, spec := range map[string]string{
		"store, savepoint job": `
image: flink:2.2.1
flinkVersion: v2_2
mode: native
flinkConfiguration:
  fs.s3a.aws.credentials.provider: ` + flinkconf.IRSACredentialsProvider + `
  execution.checkpointing.dir: s3://acme/orders/checkpoints
  execution.checkpointing.savepoint-dir: s3://acme/orders/savepoints
  high-availability.type: kubernetes
  high-availability.storageDir: s3://acme/orders/ha
  state.backend.type: hashmap
  taskmanager.numberOfTaskSlots: "4"
  execution.state-recovery.claim-mode: claim
  execution.checkpointing.num-retained: "3"
  pipeline.max-parallelism: "128"
  s3.secret-key: k3y
jobManager: {resource: {memory: 2048m, cpu: 1}, replicas: 2}
taskManager: {resource: {memory: 4096m, cpu: 2}}
job: {jarURI: "local:///opt/flink/job.jar", upgradeMode: savepoint, parallelism: 2, initialSavepointPath: "s3://acme/orders/savepoints/sp-1"}
` + plugin,
		"explicit directories, HA on, no credentials class, plugin from the image": `
image: registry.example/flink-jobs:7
flinkVersion: v2_2
flinkConfiguration:
  state.checkpoints.dir: s3://acme/cp
  high-availability.type: kubernetes
  high-availability.storageDir: s3://acme/ha
  state.backend.type: rocksdb
  state.backend.rocksdb.localdir: /data/rocks
  execution.checkpointing.externalized-checkpoint-retention: delete_on_cancellation
job: {jarURI: "local:///opt/flink/job.jar", upgradeMode: stateless, parallelism: 1}
`,
		"session cluster": `
image: flink:2.2.1
flinkVersion: v2_2
flinkConfiguration:
  fs.s3a.aws.credentials.provider: ` + flinkconf.PodIdentityCredentialsProvider + `
  execution.checkpointing.dir: s3://acme/cp
jobManager: {resource: {memory: 2048m, cpu: 1}}
` + plugin,
	} {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(spec), &m); err != nil {
			t.Fatal(err)
		}
		live := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"namespace": "ns", "name": "orders"}, "spec": m}}
		for _, unwritten := range [][]string{nil, flinkdeploy.AbsentDefaults(live)} {
			o := flinkdeploy.ReadLive(live, flinkdeploy.Recorded{}, true, unwritten)
			imp := o.Import
			if imp == nil {
				t.Fatalf("%s: not imported", name)
			}
			var diags diag.Diagnostics
			// As ImportState leaves it: the object's namespace and name.
			model := deploymentModel{deploymentSpecModel: deploymentSpecModel{Namespace: types.StringValue("ns"), Name: types.StringValue("orders")}}
			model.fromSpec(ctx, live, true, unwritten, &diags)
			in, ok := model.input(ctx, unwritten, &diags)
			if !ok || diags.HasError() {
				t.Fatalf("%s: %v", name, diags)
			}
			if !reflect.DeepEqual(in, imp.Input) {
				t.Errorf("%s (unwritten %v): the model gives\n%+v\nthe import decided with\n%+v", name, unwritten, in, imp.Input)
			}
			// The configuration shown is the domain's of those inputs.
			want, added := flinkdeploy.Want{Namespace: "ns", Name: "orders", Input: imp.Input, Sensitive: imp.Secret}.Shown(o.Written)
			if got := stringMap(ctx, model.EffectiveConfig, &diags); !reflect.DeepEqual(got, want) {
				t.Errorf("%s (unwritten %v): effective_flink_configuration\n%v\nthe domain shows\n%v", name, unwritten, got, want)
			}
			if got := stringMap(ctx, model.OperatorAddedConfig, &diags); !reflect.DeepEqual(got, added) {
				t.Errorf("%s (unwritten %v): operator_added_flink_configuration\n%v\nthe domain adds\n%v", name, unwritten, got, added)
			}
		}
	}
}
