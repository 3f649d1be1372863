package provider

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
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
