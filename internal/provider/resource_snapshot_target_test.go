package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// liveOrders is a FlinkDeployment whose directories follow the store
// layout of acme-flink-state/flink/orders (flinkConfiguration as given).
func liveOrders(ns string, conf map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkDeployment",
		"metadata": map[string]any{"name": "orders", "namespace": ns},
		"spec": map[string]any{
			"image": "flink:2.2.1-java17", "flinkVersion": "v2_2", "serviceAccount": "flink-orders",
			"flinkConfiguration": conf,
			"jobManager":         map[string]any{"resource": map[string]any{"memory": "2048m", "cpu": 1.0}},
			"taskManager":        map[string]any{"resource": map[string]any{"memory": "2048m", "cpu": 1.0}},
			"job":                map[string]any{"jarURI": "local:///opt/flink/examples/streaming/StateMachineExample.jar", "upgradeMode": "stateless", "parallelism": int64(1)},
		},
	}}
}

var storeLayout = map[string]any{
	"execution.checkpointing.dir":           "s3://acme-flink-state/flink/orders/checkpoints",
	"execution.checkpointing.savepoint-dir": "s3://acme-flink-state/flink/orders/savepoints",
}

// At apply (and at plan for a changed target_dir), a target_dir is
// compared with the store the live deployment's directories lay out,
// under current or deprecated key names; directories laid out otherwise
// are not judged.
func TestCheckTargetDirAtApply(t *testing.T) {
	for _, tc := range []struct {
		name    string
		conf    map[string]any
		target  string
		refused bool
	}{
		{"outside the store", storeLayout, "s3://other-flink-state/savepoints", true},
		{"sibling prefix", storeLayout, "s3a://acme-flink-state/flink/orders2/sp", true},
		{"in the store", storeLayout, "s3a://acme-flink-state/flink/orders/adhoc", false},
		{"deprecated keys", map[string]any{"state.checkpoints.dir": "s3://acme-flink-state/flink/orders/checkpoints",
			"state.savepoints.dir": "s3://acme-flink-state/flink/orders/savepoints"}, "s3://acme-flink-state/flink/payments/sp", true},
		{"no store layout", map[string]any{"execution.checkpointing.dir": "s3://acme-flink-state/chk",
			"execution.checkpointing.savepoint-dir": "s3://acme-flink-state/sp"}, "s3://other-flink-state/sp", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
				kube.FlinkDeploymentGVR: "FlinkDeploymentList"}, liveOrders("data-processing", tc.conf))
			c := &kube.Client{Dynamic: dyn}
			plan := snapshotModel{Namespace: types.StringValue("data-processing"), DeploymentName: types.StringValue("orders"),
				Type: types.StringValue("savepoint"), AlreadyExists: types.BoolValue(false), TargetDir: types.StringValue(tc.target)}
			var diags diag.Diagnostics
			checkTargetDirAtApply(context.Background(), c, plan, &diags)
			refused := diags.HasError() && strings.Contains(diags.Errors()[0].Detail(), "outside s3://acme-flink-state/flink/orders") &&
				strings.Contains(diags.Errors()[0].Detail(), "Nothing was created")
			if refused != tc.refused {
				t.Errorf("refused %v, want %v: %v", refused, tc.refused, diags)
			}
		})
	}
}

// Rule 8 at apply: the deployment is not in the configuration, so the plan
// of the create makes no API call and cannot compare; the apply reads the
// live FlinkDeployment and refuses the target_dir before creating the
// FlinkStateSnapshot.
func TestAccSnapshot_targetDirOutsideLiveStore(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	if _, err := testKube(t).Dynamic.Resource(kube.FlinkDeploymentGVR).Namespace(ns).Create(context.Background(), liveOrders(ns, storeLayout), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config:      snapshotConfig(ns, `  target_dir = "s3://acme-flink-state/flink/payments/savepoints"`),
			ExpectError: errorRE("Savepoint directory outside the deployment's store", "target_dir", "Nothing was created"),
		}},
	})
	if err := checkNoSnapshots(t, ns)(nil); err != nil {
		t.Error(err)
	}
}
