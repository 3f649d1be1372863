package provider

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// TestAccRealOperator_destroyThenRecreateFromFinalSavepoint (issue 45): a
// running savepoint-mode deployment is destroyed, on the real operator
// 1.15.0 with its pods run as real Flink 2.2.1: the operator stops the job
// with the final savepoint (job.state suspended in savepoint mode, then the
// delete), so the job prints nothing after it; a deployment created again
// from that savepoint (job.initial_savepoint_path) counts on from exactly
// where the old one stopped: per key, no count printed twice, none lost.
func TestAccRealOperator_destroyThenRecreateFromFinalSavepoint(t *testing.T) {
	fx := newRealOperatorFixture(t)
	ctx := context.Background()
	orders := realFlinkOperatorConfig(fx.bucket, fx.oidc, fx.role, fx.ns, "", "")
	again := realFlinkOperatorConfig(fx.bucket, fx.oidc, fx.role, fx.ns, `    initial_savepoint_path = var.final`, `variable "final" { type = string }`)
	var old *testbed.FlinkCluster
	var final string
	var last map[int]int64
	var destroyed time.Duration
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: orders,
				ConfigStateChecks: []statecheck.StateCheck{expectAPI(func() error {
					c, err := lastCluster(fx.node, fx.ns, "counts")
					if err != nil {
						return err
					}
					old = c
					_, _, err = c.WaitCounts(ctx, 2, 2*time.Minute)
					return err
				})},
			},
			{
				PreConfig: func() { destroyed = -time.Duration(time.Now().UnixNano()) },
				Config:    withoutDeployment(orders),
				ConfigStateChecks: []statecheck.StateCheck{expectAPI(func() error {
					destroyed += time.Duration(time.Now().UnixNano())
					if err := checkFinalSavepoint(t, fx.ns, "counts"); err != nil {
						return err
					}
					final = finalSavepoints(t, fx.ns, "counts")[0].Path
					if _, err := getDeployment(t, fx.ns, "counts"); err == nil {
						return fmt.Errorf("FlinkDeployment %s/counts is still there", fx.ns)
					}
					_, last = old.Counts()
					t.Logf("destroy (stop with savepoint, then delete): %s; final savepoint %s; the job's last counts %v", destroyed.Round(time.Second), final, last)
					return nil
				})},
			},
			{
				Config:          again,
				ConfigVariables: config.Variables{"final": recordedString{&final}},
				ConfigStateChecks: []statecheck.StateCheck{expectAPI(func() error {
					c, err := lastCluster(fx.node, fx.ns, "counts")
					if err != nil {
						return err
					}
					if c == old {
						return fmt.Errorf("no new cluster for %s/counts", fx.ns)
					}
					if err := restoredFrom(t, c, fx.ns, "counts", final); err != nil {
						return err
					}
					first, _, err := c.WaitCounts(ctx, 1, 2*time.Minute)
					if err != nil {
						return err
					}
					for k, n := range first {
						if n != last[k]+1 {
							return fmt.Errorf("key %d: the new job printed %d first, the stopped one %d last: want %d (none twice, none lost)", k, n, last[k], last[k]+1)
						}
					}
					if len(first) != len(last) {
						return fmt.Errorf("the new job printed keys %v, the old one %v", first, last)
					}
					return nil
				})},
			},
		},
	})
}
