package provider

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// TestAccRealOperator_blueGreenDataSources (issue 46): what the snapshot
// data sources read of a blue/green deployment is what the real operator
// 1.15.0 records. After a transition to green (real Flink 2.2.1),
// flinkstate_latest_savepoint with blue_green_deployment_name finds the
// savepoint the operator took of blue (green's job.initialSavepointPath,
// a child the resource owns), and flinkstate_latest_checkpoint with it
// searches green's job, the resource's job_id. A change the operator then
// patches into green in place (a kubernetes.operator.* key) rewrites green
// from the template, without the savepoint: the transition savepoint is
// recorded nowhere any more, and found = false (the model does the same:
// TestAccBlueGreen_latestSavepointForgottenAfterPatch).
func TestAccRealOperator_blueGreenDataSources(t *testing.T) {
	fx := newRealOperatorFixture(t)
	dep := realFlinkOperatorConfig(fx.bucket, fx.oidc, fx.role, fx.ns, "", "")
	bg := strings.Replace(dep, `resource "flinkstate_deployment" "counts"`, `resource "flinkstate_blue_green_deployment" "counts"`, 1)
	bg = strings.Replace(bg, "\n  wait_for          = \"running\"", "", 1)
	green := strings.Replace(bg, `image             = "flink:2.2.1-java17"`, `image             = "flink:2.2.1-java21"`, 1)
	patched := strings.Replace(green, `image             = "flink:2.2.1-java21"`, `image             = "flink:2.2.1-java21"
  flink_configuration = {
    "kubernetes.operator.savepoint.history.max.count" = "7"
  }`, 1)
	if bg == dep || green == bg || patched == green {
		t.Fatal("the configuration's deployment block is not as expected")
	}
	data := fmt.Sprintf(`
data "flinkstate_latest_savepoint" "live" {
  namespace                  = %[1]q
  blue_green_deployment_name = flinkstate_blue_green_deployment.counts.name
  depends_on                 = [flinkstate_blue_green_deployment.counts]
}

data "flinkstate_latest_checkpoint" "live" {
  store_id                   = flinkstate_state_store.counts.id
  namespace                  = %[1]q
  blue_green_deployment_name = flinkstate_blue_green_deployment.counts.name
  depends_on                 = [flinkstate_blue_green_deployment.counts]
}
`, fx.ns)
	const sp, chk = "data.flinkstate_latest_savepoint.live", "data.flinkstate_latest_checkpoint.live"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: bg},
			{
				Config: green + data,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(bgCountsAddr, tfjsonpath.New("blue_green_state"), knownvalue.StringExact("ACTIVE_GREEN")),
					statecheck.ExpectKnownValue(sp, tfjsonpath.New("found"), knownvalue.Bool(true)),
					statecheck.CompareValuePairs(sp, tfjsonpath.New("path"), bgCountsAddr, tfjsonpath.New("transition_savepoint_path"), compare.ValuesSame()),
					statecheck.ExpectKnownValue(sp, tfjsonpath.New("trigger_type"), knownvalue.StringExact(kube.TriggerBlueGreenTransition)),
					statecheck.ExpectKnownValue(sp, tfjsonpath.New("source_deployment_name"), knownvalue.StringExact("counts-blue")),
					statecheck.ExpectKnownValue(chk, tfjsonpath.New("active_deployment_name"), knownvalue.StringExact("counts-green")),
					statecheck.CompareValuePairs(chk, tfjsonpath.New("job_id"), bgCountsAddr, tfjsonpath.New("job_id"), compare.ValuesSame()),
				},
			},
			{
				Config: patched + data,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(bgCountsAddr, tfjsonpath.New("blue_green_state"), knownvalue.StringExact("ACTIVE_GREEN")),
					statecheck.ExpectKnownValue(bgCountsAddr, tfjsonpath.New("transition_savepoint_path"), knownvalue.Null()),
					statecheck.ExpectKnownValue(sp, tfjsonpath.New("found"), knownvalue.Bool(false)),
				},
			},
		},
	})
}
