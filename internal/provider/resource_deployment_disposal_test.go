package provider

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// A deployment pointed at a savepoint that the operator's savepoint
// history cleanup will delete with its data (issue 45): here an UPGRADE
// FlinkStateSnapshot of the same path, written as the operator writes the
// ones it takes on upgrade (snapshot.trigger-type UPGRADE, alreadyExists),
// with disposeOnDelete true (kubernetes.operator.savepoint.dispose-on-delete).
// It is the newest complete one, so it goes once older than max.age (24 h):
// the restore goes ahead, and the apply warns, naming the snapshot, when,
// and the ways out.
func TestAccDeployment_restoreWarnsOfDisposingCleanup(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	prefix := randName("dispose-")
	wait := `  wait_for = "running"`
	snapshot := fmt.Sprintf(`
resource "flinkstate_snapshot" "sp" {
  namespace       = %q
  deployment_name = "orders"
  %%s
}
`, ns)
	rec := &diagRecorder{}
	var savepoint string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.factories(),
		Steps: []resource.TestStep{
			{
				Config: restoreConfig(ns, prefix, "flink:2.2.1-java17", "", wait) + fmt.Sprintf(snapshot, "depends_on = [flinkstate_deployment.orders]"),
				Check: func(s *terraform.State) error {
					savepoint = attrOf(s, "flinkstate_snapshot.sp", "path")
					return nil
				},
			},
			{
				PreConfig: func() {
					upgradeSnapshotOf(t, ns, "orders", "orders-savepoint-upgrade-1", savepoint)
					rec.reset()
				},
				Config: restoreConfig(ns, prefix, "flink:2.2.1-java17", "initial_savepoint_path = flinkstate_snapshot.sp.path", wait) + fmt.Sprintf(snapshot, ""),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkRestoredFrom(t, ns, &savepoint),
					rec.expectWarning("ApplyResourceChange", "Restore path will be disposed", "FlinkStateSnapshot "+ns+"/orders-savepoint-upgrade-1",
						"trigger type UPGRADE", "disposeOnDelete", "from", "a flinkstate_snapshot, dispose_on_delete = false"),
				),
			},
		},
	})
}

// upgradeSnapshotOf writes FlinkStateSnapshot ns/name of deployment's
// savepoint at path as the operator writes an upgrade's
// (FlinkStateSnapshotUtils.createUpgradeSnapshotResource: the trigger-type
// label UPGRADE, alreadyExists), disposing of its data on delete, and waits
// until the operator completed it.
func upgradeSnapshotOf(t *testing.T, ns, deployment, name, path string) {
	t.Helper()
	ctx := context.Background()
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkStateSnapshot",
		"metadata": map[string]any{"name": name, "namespace": ns, "labels": map[string]any{kube.LabelTriggerType: "UPGRADE"}},
		"spec": map[string]any{"jobReference": map[string]any{"kind": "FlinkDeployment", "name": deployment},
			"savepoint": map[string]any{"alreadyExists": true, "path": path, "disposeOnDelete": true}},
	}}
	if _, err := testKube(t).Dynamic.Resource(kube.FlinkStateSnapshotGVR).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.WaitSnapshot(ctx, testKube(t).Dynamic, ns, name, time.Minute, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
}
