package provider

import (
	"fmt"
	"testing"

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
