package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
)

// Issue 44's plan warnings for stateful jobs, shown by terraform under the
// plan of a create (which makes no API call), before anything is applied.

// A savepoint-mode job without state.checkpoint_interval takes no
// checkpoints (CheckpointingOptions.CHECKPOINTING_INTERVAL has no default;
// the operator sets one for last-state only): the plan says so, what to set,
// and when it can be ignored.
func TestAccDeployment_planWarnsNoCheckpointInterval(t *testing.T) {
	skipUnlessAcc(t)
	rec := &diagRecorder{}
	cfg := deploymentConfig(randName("plan-warn-"), "flink:2.2.1-java17", "")
	cfg = strings.Replace(cfg, `"local:///opt/flink/examples/streaming/StateMachineExample.jar"`, `"local:///opt/flink/usrlib/orders.jar"`, 1)
	cfg = strings.Replace(cfg, `upgrade_mode = "last-state"`, `upgrade_mode = "savepoint"`, 1)
	cfg = strings.Replace(cfg, `checkpoint_interval = "60s"`, "", 1)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.factories(),
		Steps: []resource.TestStep{{
			PreConfig:          rec.reset,
			Config:             cfg,
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("flinkstate_deployment.orders", plancheck.ResourceActionCreate),
				rec.planWarning("No checkpoint interval", `upgrade_mode = "savepoint" and no state.checkpoint_interval`,
					"Flink takes no checkpoints unless an interval is set", "Set state.checkpoint_interval",
					"enables checkpointing", "can be ignored"),
			}},
		}},
	})
}

// A last-state job without pipeline.max-parallelism is told the max
// parallelism Flink will choose for its parallelism (100: 256,
// KeyGroupRangeAssignment.computeDefaultMaxParallelism) and that it can
// never be raised without losing keyed state.
func TestAccDeployment_planWarnsNoExplicitMaxParallelism(t *testing.T) {
	skipUnlessAcc(t)
	rec := &diagRecorder{}
	cfg := strings.Replace(deploymentConfig(randName("plan-warn-"), "flink:2.2.1-java17", ""), "parallelism  = 2", "parallelism  = 100", 1)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.factories(),
		Steps: []resource.TestStep{{
			PreConfig:          rec.reset,
			Config:             cfg,
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("flinkstate_deployment.orders", plancheck.ResourceActionCreate),
				rec.planWarning("No explicit max parallelism", `sets no "pipeline.max-parallelism"`,
					"with job.parallelism = 100, Flink gives every operator without a max parallelism of its own 256 ",
					"never be raised without losing the keyed state", `Set "pipeline.max-parallelism"`),
			}},
		}},
	})
}

// An upgrade of a savepoint-mode job with
// kubernetes.operator.job.upgrade.last-state-fallback.enabled = "false":
// the plan's upgrade warning reads the setting from the planned spec
// (flinkdeploy.UpgradeNotice) and does not say the operator falls back to
// the latest checkpoint.
func TestAccDeployment_planWarnsUpgradeWithoutFallback(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	rec := &diagRecorder{}
	cfg := func(image string) string {
		c := deploymentConfig(ns, image, `  flink_configuration = { "kubernetes.operator.job.upgrade.last-state-fallback.enabled" = "false" }`)
		return strings.Replace(c, `upgrade_mode = "last-state"`, `upgrade_mode = "savepoint"`, 1)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.factories(),
		CheckDestroy:             checkDeploymentGone(t, ns),
		Steps: []resource.TestStep{
			{Config: cfg("flink:2.2.1-java17")},
			{
				PreConfig:          rec.reset,
				Config:             cfg("flink:2.2.1-java21"),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(depAddr, plancheck.ResourceActionUpdate),
					rec.planWarning("The operator will restart the job", "stops it with a savepoint and restores from that savepoint."),
					recordedNoPlanWarning{rec: rec, parts: []string{"last-state-fallback"}},
				}},
			},
		},
	})
}

// recordedNoPlanWarning is a plan check that no resource plan answered
// with a warning matching parts.
type recordedNoPlanWarning struct {
	rec   *diagRecorder
	parts []string
}

func (c recordedNoPlanWarning) CheckPlan(_ context.Context, _ plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	if found := c.rec.find("PlanResourceChange", true, c.parts...); len(found) > 0 {
		resp.Error = fmt.Errorf("a plan warning matches %q: %s", c.parts, found[0])
	}
}
