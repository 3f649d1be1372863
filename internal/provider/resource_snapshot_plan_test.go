package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// Rule 8 at apply: the deployment is not in the configuration and has no
// savepoint directory; a savepoint without target_dir is refused before
// the FlinkStateSnapshot is created.
func TestAccSnapshot_savepointWithoutDirectory(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	fd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkDeployment",
		"metadata": map[string]any{"name": "orders", "namespace": ns},
		"spec": map[string]any{
			"image": "flink:2.2.1-java17", "flinkVersion": "v2_2", "serviceAccount": "flink-orders",
			"flinkConfiguration": map[string]any{"execution.checkpointing.dir": "s3://acme-flink-state/flink/orders/checkpoints"},
			"jobManager":         map[string]any{"resource": map[string]any{"memory": "2048m", "cpu": 1.0}},
			"taskManager":        map[string]any{"resource": map[string]any{"memory": "2048m", "cpu": 1.0}},
			"job":                map[string]any{"jarURI": "local:///opt/flink/examples/streaming/StateMachineExample.jar", "upgradeMode": "stateless", "parallelism": int64(1)},
		},
	}}
	if _, err := testKube(t).Dynamic.Resource(kube.FlinkDeploymentGVR).Namespace(ns).Create(context.Background(), fd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config:      snapshotConfig(ns, ""),
			ExpectError: errorRE("Savepoint without a directory", "no savepoint directory", "Nothing was created"),
		}},
	})
	if err := checkNoSnapshots(t, ns)(nil); err != nil {
		t.Error(err)
	}
}
