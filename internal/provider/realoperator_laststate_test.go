package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// realOperatorLastStateUpgradeConfig is the real-Flink stack in last-state
// mode with Kubernetes HA (which the provider requires for last-state),
// without savepoint_before_upgrade, and flinkConf as extra
// flink_configuration (none when "").
func realOperatorLastStateUpgradeConfig(bucket, oidc, role, ns, flinkConf string) string {
	c := realFlinkOperatorConfig(bucket, oidc, role, ns, "", "")
	c = strings.Replace(c, `high_availability = false`, `high_availability = true`, 1)
	c = strings.Replace(c, `upgrade_mode = "savepoint"`, `upgrade_mode = "last-state"`, 1)
	if flinkConf != "" {
		c = strings.Replace(c, `wait_for          = "running"`, `wait_for          = "running"
  flink_configuration = { `+flinkConf+` }`, 1)
	}
	return c
}

// TestAccRealOperator_lastStateUpgrade (issue 34): a last-state deployment
// with Kubernetes HA runs on the real operator 1.15.0, its job as real
// Flink 2.2.1 on the node, and checkpoints; a change of its Flink
// configuration (an UPGRADE change of the spec) is applied by the operator
// as a last-state upgrade: the running job with HA metadata is suspended
// without a savepoint (AbstractJobReconciler.getJobUpgrade →
// getUpgradeModeBasedOnStateAge: JobUpgrade.lastStateUsingHaMeta, since
// kubernetes.operator.job.upgrade.last-state.job-cancel.enabled is false
// by default), its cluster deleted with the HA data kept, and the new
// cluster restores from the latest checkpoint in the HA metadata
// (ApplicationReconciler.deploy: the last-state dummy savepoint path) with
// the same job id (setJobIdIfNecessary: a last-state deploy keeps it). No
// FlinkStateSnapshot is made, and the counters continue.
func TestAccRealOperator_lastStateUpgrade(t *testing.T) {
	fx := newRealOperatorFixture(t)
	ns, node, bucket, role, oidc := fx.ns, fx.node, fx.bucket, fx.role, fx.oidc
	ctx := context.Background()
	jobIDKept := statecheck.CompareValue(compare.ValuesSame())
	var first *testbed.FlinkCluster
	snapshots := 0
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: realOperatorLastStateUpgradeConfig(bucket, oidc, role, ns, ""),
				ConfigStateChecks: []statecheck.StateCheck{
					jobIDKept.AddStateValue(countsAddr, tfjsonpath.New("job_id")),
					expectAPI(func() error {
						c, err := lastCluster(node, ns, "counts")
						if err != nil {
							return err
						}
						first = c
						// Past the first checkpoints (2 s interval): the
						// upgraded job must go on from more than 1.
						if _, _, err := c.WaitCounts(ctx, 4, 2*time.Minute); err != nil {
							return err
						}
						time.Sleep(5 * time.Second)
						return nil
					}),
				},
			},
			{
				PreConfig: func() { snapshots = countSnapshots(t, ns) },
				Config:    realOperatorLastStateUpgradeConfig(bucket, oidc, role, ns, `"pipeline.name" = "counts-v2"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(countsAddr, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(countsAddr, tfjsonpath.New("job_state"), knownvalue.StringExact("RUNNING")),
					jobIDKept.AddStateValue(countsAddr, tfjsonpath.New("job_id")),
					expectAPI(func() error {
						if n := countSnapshots(t, ns); n != snapshots {
							return fmt.Errorf("%d FlinkStateSnapshots after the last-state upgrade, %d before: it took a savepoint", n, snapshots)
						}
						c, err := lastCluster(node, ns, "counts")
						if err != nil {
							return err
						}
						if c == first {
							return fmt.Errorf("the configuration change did not redeploy the cluster")
						}
						if n := node.Running(); n != 1 {
							return fmt.Errorf("the node runs %d pods' Flink processes after the upgrade, want the new cluster's only", n)
						}
						if got := c.Configuration["pipeline.name"]; got != "counts-v2" {
							return fmt.Errorf("the upgraded cluster ran with pipeline.name %q, want the new configuration's", got)
						}
						// The HA metadata restore: the operator hands Flink its
						// dummy path (ApplicationReconciler.deploy,
						// LAST_STATE_DUMMY_SP_PATH).
						if got := c.Configuration["execution.savepoint.path"]; got != kube.LastStateDummyPath {
							return fmt.Errorf("the upgraded cluster's execution.savepoint.path %q, want the operator's last-state dummy %q", got, kube.LastStateDummyPath)
						}
						_, before := first.Counts()
						// From the latest checkpoint.
						restored, err := firstCountsContinue(ctx, c, "the upgraded job", "the first job", before)
						if err != nil {
							return err
						}
						t.Logf("the upgraded job's first counts %v, the first job's last %v", restored, before)
						return nil
					}),
				},
			},
		},
	})
}
