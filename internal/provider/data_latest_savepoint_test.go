package provider

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// The newest completed snapshot of the deployment, found through the API;
// a deployment without snapshots finds none.
func TestAccLatestSavepoint_basic(t *testing.T) {
	skipUnlessAcc(t)
	ns := snapshotJob(t)
	const ds = "data.flinkstate_latest_savepoint.orders"
	cfg := snapshotBeforeUpgrade(ns, "flink:2.2.1-java21", "") + fmt.Sprintf(`
data "flinkstate_latest_savepoint" "orders" {
  namespace       = %q
  deployment_name = "orders"
  type            = "savepoint"
  depends_on      = [flinkstate_snapshot.test]
}

data "flinkstate_latest_savepoint" "other" {
  namespace       = %q
  deployment_name = "payments"
}
`, ns, ns)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkNoSnapshots(t, ns),
		Steps: []resource.TestStep{{
			Config: cfg,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(ds, tfjsonPath("found"), knownvalue.Bool(true)),
				statecheck.CompareValuePairs(ds, tfjsonPath("path"), snapAddr, tfjsonPath("path"), compare.ValuesSame()),
				statecheck.CompareValuePairs(ds, tfjsonPath("name"), snapAddr, tfjsonPath("name"), compare.ValuesSame()),
				statecheck.ExpectKnownValue("data.flinkstate_latest_savepoint.other", tfjsonPath("found"), knownvalue.Bool(false)),
			},
		}},
	})
}

// Recording an old savepoint (already_exists) does not make it the latest:
// the operator dates such a snapshot when it recorded it
// (FlinkStateSnapshotUtils.snapshotSuccessful), so the data source dates it
// by its _metadata in S3. A checkpoint-type snapshot taken later is not a
// savepoint, and is left out by default.
func TestAccLatestSavepoint_takenNotRecorded(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	runningJob(t, ns, "orders", map[string]any{
		"execution.checkpointing.savepoint-dir": snapSavepointDir,
		"execution.checkpointing.dir":           "s3://acme-flink-state/flink/orders/checkpoints",
	})
	snap := func(name, body string) string {
		return fmt.Sprintf(`
resource "flinkstate_snapshot" %q {
  namespace       = %q
  deployment_name = "orders"
%s
}
`, name, ns, body)
	}
	old := snap("old", "")
	newer := old + snap("new", "")
	recorded := newer + snap("recorded", "  already_exists = true\n  path = flinkstate_snapshot.old.path") + snap("chk", `  type = "checkpoint"`)
	const ds = "data.flinkstate_latest_savepoint.orders"
	latest := fmt.Sprintf(`
data "flinkstate_latest_savepoint" "orders" {
  namespace       = %q
  deployment_name = "orders"
  depends_on      = [flinkstate_snapshot.recorded, flinkstate_snapshot.chk]
}
`, ns)
	pause := func() { time.Sleep(1100 * time.Millisecond) } // timestamps have whole seconds
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: old},
			{PreConfig: pause, Config: newer},
			{
				PreConfig: pause,
				Config:    recorded + latest,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(ds, tfjsonPath("found"), knownvalue.Bool(true)),
					statecheck.CompareValuePairs(ds, tfjsonPath("name"), "flinkstate_snapshot.new", tfjsonPath("name"), compare.ValuesSame()),
					statecheck.CompareValuePairs(ds, tfjsonPath("path"), "flinkstate_snapshot.new", tfjsonPath("path"), compare.ValuesSame()),
					statecheck.ExpectKnownValue(ds, tfjsonPath("picked_by"), knownvalue.StringRegexp(regexpMust(`triggerTimestamp`))),
				},
			},
		},
	})
}

// What the operator's savepoint history cleanup does with the snapshot
// found (kube.CleanupFate): a MANUAL snapshot (flinkstate_snapshot's) is
// never cleaned; labelled as the operator labels its upgrade savepoints
// (snapshot.trigger-type UPGRADE), the same snapshot is deleted once it is
// older than max.age (24 h by default) and a newer one completed, with its
// data kept (disposeOnDelete false, as flinkstate_snapshot writes it).
func TestAccLatestSavepoint_operatorCleanup(t *testing.T) {
	skipUnlessAcc(t)
	ns := snapshotJob(t)
	const ds = "data.flinkstate_latest_savepoint.orders"
	cfg := snapshotBeforeUpgrade(ns, "flink:2.2.1-java21", "") + fmt.Sprintf(`
data "flinkstate_latest_savepoint" "orders" {
  namespace       = %q
  deployment_name = "orders"
  depends_on      = [flinkstate_snapshot.test]
}
`, ns)
	var name string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkNoSnapshots(t, ns),
		Steps: []resource.TestStep{
			{
				Config: cfg,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(ds, tfjsonPath("trigger_type"), knownvalue.StringExact("MANUAL")),
					statecheck.ExpectKnownValue(ds, tfjsonPath("operator_cleanup"), knownvalue.StringExact("none")),
					statecheck.ExpectKnownValue(ds, tfjsonPath("cleanup_after"), knownvalue.Null()),
					recordAttr(snapAddr, "name", &name),
				},
			},
			{
				PreConfig: func() {
					patch := []byte(`{"metadata":{"labels":{"` + kube.LabelTriggerType + `":"UPGRADE"}}}`)
					if _, err := testKube(t).Dynamic.Resource(kube.FlinkStateSnapshotGVR).Namespace(ns).Patch(context.Background(), name,
						ktypes.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				Config: cfg,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(ds, tfjsonPath("trigger_type"), knownvalue.StringExact("UPGRADE")),
					statecheck.ExpectKnownValue(ds, tfjsonPath("operator_cleanup"), knownvalue.StringExact("delete")),
					statecheck.ExpectKnownValue(ds, tfjsonPath("cleanup_after"), knownvalue.StringFunc(func(v string) error {
						obj, err := getSnapshot(t, ns, name)
						if err != nil {
							return err
						}
						if want := obj.GetCreationTimestamp().Add(24 * time.Hour).UTC().Format(time.RFC3339); v != want {
							return fmt.Errorf("cleanup_after %s, want the creation plus 24 h: %s", v, want)
						}
						return nil
					})),
				},
			},
		},
	})
}
