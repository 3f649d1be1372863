package provider

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// Restores on the real operator 1.15.0, its pods run as real Flink 2.2.1 by
// the node stand-in: what terraform applies is what the operator reads.

// withoutDeployment is a configuration with its flinkstate_deployment
// block cut out (the block ends at the first unindented "}").
func withoutDeployment(c string) string {
	start := strings.Index(c, `resource "flinkstate_deployment" "counts" {`)
	if start < 0 {
		return c
	}
	end := strings.Index(c[start:], "\n}\n")
	return c[:start] + c[start+end+3:]
}

// TestAccRealOperator_restoreFromCheckpoint: job A runs on the real operator
// and checkpoints (retained on cancellation); its deployment is destroyed
// without a final savepoint, so the operator cancels the job
// (kubernetes.operator.job.savepoint-on-deletion is false by default,
// ApplicationReconciler.cleanupInternal) and Flink keeps the retained
// checkpoints (ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION:
// CheckpointProperties discardCancelled false). flinkstate_latest_checkpoint
// finds the newest of job A's; a new deployment created with
// job.initial_savepoint_path = that path is deployed by the operator from it
// and its counters continue from the checkpoint.
func TestAccRealOperator_restoreFromCheckpoint(t *testing.T) {
	fx := newRealOperatorFixture(t)
	ns, node, bucket, role, oidc := fx.ns, fx.node, fx.bucket, fx.role, fx.oidc
	ctx := context.Background()
	dir := "s3://" + bucket + "/flink/counts/checkpoints"
	var jobA, checkpointPath string
	var lastID int64
	var before map[int]int64
	var first *testbed.FlinkCluster

	data := `
variable "job_a" { type = string }

data "flinkstate_latest_checkpoint" "counts" {
  checkpoint_dir = flinkstate_state_store.counts.checkpoint_dir
  job_id         = var.job_a
  require        = true
}
`
	jobA2 := recordedString{&jobA}
	running := realFlinkOperatorConfig(bucket, oidc, role, ns, "", "")
	running = strings.Replace(running, `wait_for          = "running"`, `wait_for          = "running"
  final_savepoint   = false`, 1)
	restored := realFlinkOperatorConfig(bucket, oidc, role, ns,
		`    initial_savepoint_path = data.flinkstate_latest_checkpoint.counts.path`, data)
	restored = strings.Replace(restored, `wait_for          = "running"`, `wait_for          = "running"
  final_savepoint   = false`, 1)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				// Job A runs and completes checkpoints.
				Config: running,
				ConfigStateChecks: []statecheck.StateCheck{
					recordAttr("flinkstate_deployment.counts", "job_id", &jobA),
					expectAPI(func() error {
						c, err := lastCluster(node, ns, "counts")
						if err != nil {
							return err
						}
						first = c
						if _, err := c.WaitCheckpoints(ctx, jobA, 2, 2*time.Minute); err != nil {
							return err
						}
						_, _, err = c.WaitCounts(ctx, 2, 2*time.Minute)
						return err
					}),
				},
			},
			{
				// Its deployment goes, without a final savepoint: the
				// operator cancels the job; the checkpoints stay, and the
				// data source names the newest one job A completed.
				Config:          withoutDeployment(running) + data,
				ConfigVariables: config.Variables{"job_a": jobA2},
				ConfigStateChecks: []statecheck.StateCheck{
					expectAPI(func() error {
						// Every count in a checkpoint was printed before it,
						// so the counts printed until the cancel bound what
						// a restore resumes.
						_, before = first.Counts()
						var job string
						if lastID, job = lastCompletedCheckpoint(first); job != jobA {
							return fmt.Errorf("job A's JobManager logged no completed checkpoint of job %s (last: %s)", jobA, job)
						}
						return nil
					}),
					statecheck.ExpectKnownValue("data.flinkstate_latest_checkpoint.counts", tfjsonpath.New("found"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue("data.flinkstate_latest_checkpoint.counts", tfjsonpath.New("checkpoint_id"),
						knownvalue.Int64Func(func(v int64) error {
							switch v {
							case lastID:
								return nil
							case lastID + 1:
								// Flink writes _metadata before it logs the
								// completion (PendingCheckpoint.finalizeCheckpoint).
								return wholeMetadata(t, fmt.Sprintf("%s/%s/chk-%d", dir, jobA, v))
							}
							return fmt.Errorf("checkpoint_id %d, but job A's JobManager last completed %d", v, lastID)
						})),
					recordAttr("data.flinkstate_latest_checkpoint.counts", "path", &checkpointPath),
					expectAPI(func() error {
						if want := fmt.Sprintf("%s/%s/chk-", dir, jobA); !strings.HasPrefix(checkpointPath, want) {
							return fmt.Errorf("path %s, want one of job A's under %s", checkpointPath, want)
						}
						return wholeMetadata(t, checkpointPath)
					}),
				},
			},
			{
				// A new deployment restores from it: the operator records
				// the path and hands it to Flink; create waits until the job
				// runs from it, and the counters continue.
				Config:          restored,
				ConfigVariables: config.Variables{"job_a": jobA2},
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flinkstate_deployment.counts", plancheck.ResourceActionCreate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.CompareValuePairs("flinkstate_deployment.counts", tfjsonpath.New("job").AtMapKey("initial_savepoint_path"),
						"data.flinkstate_latest_checkpoint.counts", tfjsonpath.New("path"), compare.ValuesSame()),
					statecheck.ExpectKnownValue("flinkstate_deployment.counts", tfjsonpath.New("job_state"), knownvalue.StringExact("RUNNING")),
					expectAPI(func() error {
						c, err := lastCluster(node, ns, "counts")
						if err != nil {
							return err
						}
						if c == first {
							return errors.New("the node runs job A's cluster still")
						}
						if err := restoredFrom(t, c, ns, "counts", checkpointPath); err != nil {
							return err
						}
						// On from the checkpointed count's successor.
						firstCounts, err := firstCountsContinue(ctx, c, "the restored job", "job A", before)
						if err != nil {
							return err
						}
						t.Logf("restored from %s: first counts %v (job A's last %v)", checkpointPath, firstCounts, before)
						return nil
					}),
				},
			},
		},
	})
}

// TestAccRealOperator_restoreFromSavepoint: job A runs on the real operator;
// a flinkstate_snapshot savepoint is taken by the operator in real Flink;
// the deployment pointed at it with job.initial_savepoint_path is
// redeployed in place (a new savepoint_redeploy_nonce: the operator's
// SAVEPOINT_REDEPLOY, AbstractJobReconciler.redeployWithSavepoint) and the
// job's counters continue from the savepoint.
func TestAccRealOperator_restoreFromSavepoint(t *testing.T) {
	fx := newRealOperatorFixture(t)
	ns, node, bucket, role, oidc := fx.ns, fx.node, fx.bucket, fx.role, fx.oidc
	ctx := context.Background()
	// before: counts printed before the savepoint was asked for; taken:
	// those printed once it completed. The savepoint holds, per key, a
	// count in [before, taken].
	var before, taken map[int]int64
	var savepoint, jobA string
	var first *testbed.FlinkCluster
	savepointRE := regexp.MustCompile(`^s3://` + regexp.QuoteMeta(bucket) + `/flink/counts/savepoints/savepoint-[0-9a-f]{6}-[0-9a-f]{12}$`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: realFlinkOperatorConfig(bucket, oidc, role, ns, "", ""),
				ConfigStateChecks: []statecheck.StateCheck{
					recordAttr("flinkstate_deployment.counts", "job_id", &jobA),
					expectAPI(func() error {
						c, err := lastCluster(node, ns, "counts")
						if err != nil {
							return err
						}
						first = c
						_, before, err = c.WaitCounts(ctx, 2, 2*time.Minute)
						return err
					}),
				},
			},
			{
				// The real operator triggers the savepoint in Flink and
				// reports it COMPLETED at a reconcile.
				Config: realFlinkOperatorConfig(bucket, oidc, role, ns, "", realSavepointData(ns)),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("flinkstate_snapshot.sp", tfjsonpath.New("state"), knownvalue.StringExact("COMPLETED")),
					statecheck.ExpectKnownValue("flinkstate_snapshot.sp", tfjsonpath.New("path"), knownvalue.StringRegexp(savepointRE)),
					recordAttr("flinkstate_snapshot.sp", "path", &savepoint),
					statecheck.CompareValuePairs("data.flinkstate_latest_savepoint.counts", tfjsonpath.New("path"),
						"flinkstate_snapshot.sp", tfjsonpath.New("path"), compare.ValuesSame()),
					expectAPI(func() error {
						if !strings.Contains(savepoint, "/savepoint-"+jobA[:6]+"-") {
							return fmt.Errorf("savepoint %s is not one of job %s (Flink names it savepoint-<job id[:6]>-…)", savepoint, jobA)
						}
						if err := wholeMetadata(t, savepoint); err != nil {
							return err
						}
						_, taken = first.Counts()
						return nil
					}),
				},
			},
			{
				Config: realFlinkOperatorConfig(bucket, oidc, role, ns,
					`    initial_savepoint_path = flinkstate_snapshot.sp.path`, realSavepointData(ns)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flinkstate_deployment.counts", plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("flinkstate_deployment.counts", tfjsonpath.New("savepoint_redeploy_nonce"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue("flinkstate_deployment.counts", tfjsonpath.New("job_state"), knownvalue.StringExact("RUNNING")),
					statecheck.ExpectKnownValue("flinkstate_deployment.counts", tfjsonpath.New("job_id"), knownvalue.StringFunc(func(v string) error {
						if v == jobA {
							return fmt.Errorf("job id %s kept: the operator's savepoint redeploy starts a new job", v)
						}
						return nil
					})),
					expectAPI(func() error {
						c, err := lastCluster(node, ns, "counts")
						if err != nil {
							return err
						}
						if c == first {
							return errors.New("the savepoint redeploy did not redeploy the cluster")
						}
						if err := restoredFrom(t, c, ns, "counts", savepoint); err != nil {
							return err
						}
						firstCounts, _, err := c.WaitCounts(ctx, 1, 2*time.Minute)
						if err != nil {
							return err
						}
						for k, n := range firstCounts {
							if n < before[k]+1 || n > taken[k]+1 {
								return fmt.Errorf("key %d: the job restored from %s counted from %d; the savepoint held a count in [%d, %d]",
									k, savepoint, n, before[k], taken[k])
							}
						}
						t.Logf("restored from %s: first counts %v (before the savepoint %v, when it completed %v)", savepoint, firstCounts, before, taken)
						return nil
					}),
				},
			},
		},
	})
}
