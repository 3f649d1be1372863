package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// realOperatorLastStateConfig is the real-Flink stack in last-state mode
// with Kubernetes HA, the given image and savepoint_before_upgrade.
func realOperatorLastStateConfig(bucket, oidc, role, ns, image string) string {
	c := realOperatorUpgradeConfig(bucket, oidc, role, ns, image)
	c = strings.Replace(c, `high_availability = false`, `high_availability = true`, 1)
	c = strings.Replace(c, `upgrade_mode = "savepoint"`, `upgrade_mode = "last-state"`, 1)
	return strings.Replace(c, `  savepoint_before_upgrade {`, `  timeouts {
    update = "4m"
  }
  savepoint_before_upgrade {`, 1)
}

// TestAccRealOperator_fixNotRunningLastState: issue 36's row 7, the branch
// that proceeds from HA metadata, on the real operator 1.15.0 with the
// node running real Flink. A last-state deployment with Kubernetes HA
// runs and checkpoints; an image the node cannot pull leaves its job not
// running while its HA metadata stays (the apply fails with the kubelet's
// words the operator forwards). The change that fixes the image, under
// savepoint_before_upgrade, asks for no savepoint: the plan says none can
// be taken and that the new spec starts from the HA metadata; the apply
// says the operator restores from the latest checkpoint in it
// (ApplicationReconciler.getJobUpgrade, "Job is not running but HA
// metadata is available for last state restore"); the job runs again and
// its counters continue from the last checkpoint.
func TestAccRealOperator_fixNotRunningLastState(t *testing.T) {
	fx := newRealOperatorFixture(t)
	ns, node, bucket, role, oidc := fx.ns, fx.node, fx.bucket, fx.role, fx.oidc
	ctx := context.Background()
	rec := &diagRecorder{}
	var first *testbed.FlinkCluster
	var before map[int]int64
	snapshots := 0
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.factories(),
		Steps: []resource.TestStep{
			{
				Config: realOperatorLastStateConfig(bucket, oidc, role, ns, "flink:2.2.1-java17"),
				ConfigStateChecks: []statecheck.StateCheck{
					expectAPI(func() error {
						cs := node.Clusters(ns, "counts")
						if len(cs) != 1 {
							return fmt.Errorf("the node ran %d clusters for %s/counts, want 1", len(cs), ns)
						}
						first = cs[0]
						// Past the first checkpoints (2 s interval).
						_, _, err := first.WaitCounts(ctx, 4, 2*time.Minute)
						time.Sleep(5 * time.Second)
						return err
					}),
				},
			},
			{
				// The job is made not running: an image the node cannot pull
				// (after the savepoint savepoint_before_upgrade takes of the
				// running job and the operator's last-state upgrade, which
				// keeps the HA metadata).
				Config:      realOperatorLastStateConfig(bucket, oidc, role, ns, "flink:no-such-tag"),
				ExpectError: errorRE(`Back-off pulling image "flink:no-such-tag"`),
			},
			{
				PreConfig: func() {
					if n := node.Running(); n != 0 {
						t.Fatalf("the node runs %d pods' Flink processes with an image it cannot pull", n)
					}
					_, before = first.Counts()
					snapshots = countSnapshots(t, ns)
					rec.reset()
				},
				Config: realOperatorLastStateConfig(bucket, oidc, role, ns, "flink:2.2.1-java17"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(countsAddr, plancheck.ResourceActionUpdate),
					rec.planWarning("No savepoint can be taken before this change", "not running", "HA metadata"),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					rec.expectWarning("ApplyResourceChange", "No savepoint before this upgrade", "its job is RECONCILING",
						"JobManager ERROR", "the latest checkpoint in the job's HA metadata", "HA metadata is available for last state restore"),
					resource.TestCheckResourceAttr(countsAddr, "job_state", "RUNNING"),
					noSnapshotAsked(t, ns, &snapshots),
					func(*terraform.State) error {
						cs := node.Clusters(ns, "counts")
						c := cs[len(cs)-1]
						if c == first {
							return fmt.Errorf("the node runs the first cluster still")
						}
						// The latest checkpoint in the HA metadata.
						restored, err := firstCountsContinue(ctx, c, "the fixed job", "the first job", before)
						if err != nil {
							return err
						}
						t.Logf("the fixed job's first counts %v, the first job's last %v", restored, before)
						return nil
					},
				),
			},
		},
	})
}

// TestAccRealOperator_fixNotRunningSavepoint: row 7's savepoint-mode
// branch through terraform on the real operator. A savepoint-mode job
// (no HA) is upgraded to an image the node cannot pull: the operator's own
// upgrade savepoint is recorded, and the new JobManager never starts. The
// change that fixes the image, under savepoint_before_upgrade, asks for no
// savepoint; the apply says the new spec starts from the savepoint the
// operator recorded (the operator deletes the JobManager that never
// started and counts the job FAILED: ApplicationReconciler.getJobUpgrade,
// deleteJmThatNeverStarted); the job runs again from it, counters
// continuing.
func TestAccRealOperator_fixNotRunningSavepoint(t *testing.T) {
	fx := newRealOperatorFixture(t)
	ns, node, bucket, role, oidc := fx.ns, fx.node, fx.bucket, fx.role, fx.oidc
	ctx := context.Background()
	rec := &diagRecorder{}
	config := func(image string) string {
		return strings.Replace(realOperatorUpgradeConfig(bucket, oidc, role, ns, image), `  savepoint_before_upgrade {`, `  timeouts {
    update = "4m"
  }
  savepoint_before_upgrade {`, 1)
	}
	var first *testbed.FlinkCluster
	var before map[int]int64
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.factories(),
		Steps: []resource.TestStep{
			{
				Config: config("flink:2.2.1-java17"),
				ConfigStateChecks: []statecheck.StateCheck{
					expectAPI(func() error {
						cs := node.Clusters(ns, "counts")
						if len(cs) != 1 {
							return fmt.Errorf("the node ran %d clusters for %s/counts, want 1", len(cs), ns)
						}
						first = cs[0]
						_, _, err := first.WaitCounts(ctx, 2, 2*time.Minute)
						return err
					}),
				},
			},
			{
				Config:      config("flink:no-such-tag"),
				ExpectError: errorRE(`Back-off pulling image "flink:no-such-tag"`),
			},
			{
				PreConfig: func() {
					_, before = first.Counts()
					rec.reset()
				},
				Config: config("flink:2.2.1-java17"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(countsAddr, plancheck.ResourceActionUpdate),
					rec.planWarning("No savepoint can be taken before this change", "not running"),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					rec.expectWarning("ApplyResourceChange", "No savepoint before this upgrade", "the savepoint the operator recorded",
						"never started"),
					resource.TestCheckResourceAttr(countsAddr, "job_state", "RUNNING"),
					func(*terraform.State) error {
						cs := node.Clusters(ns, "counts")
						c := cs[len(cs)-1]
						restored, err := firstCountsContinue(ctx, c, "the fixed job", "the first job", before)
						if err != nil {
							return err
						}
						t.Logf("restored from %s; first counts %v, the first job's last %v", c.Configuration["execution.savepoint.path"], restored, before)
						return nil
					},
				),
			},
		},
	})
}

// TestAccRealOperator_fixNeverStartedProceeds: a last-state deployment
// created with wait_for = "none" and an image the node cannot pull, so its
// JobManager never starts; the fix under savepoint_before_upgrade asks for
// no savepoint and goes ahead from empty state, as the real operator 1.15.0
// does by itself (it deletes the JobManager that never started and, with
// no savepoint on record, deploys the new spec without one:
// ApplicationReconciler.getJobUpgrade, deleteJmThatNeverStarted;
// TestDifferential_fixNeverStartedNoSavepoint). No job of the first spec
// ran, so nothing is lost; the new job's counters start at 1. The model's
// TestAccDeployment_savepointBeforeUpgradeNeverStartedProceeds runs the
// same steps.
func TestAccRealOperator_fixNeverStartedProceeds(t *testing.T) {
	fx := newRealOperatorFixture(t)
	ns, node, bucket, role, oidc := fx.ns, fx.node, fx.bucket, fx.role, fx.oidc
	ctx := context.Background()
	rec := &diagRecorder{}
	config := func(image, wait string) string {
		return strings.Replace(realOperatorLastStateConfig(bucket, oidc, role, ns, image), `wait_for          = "running"`,
			`wait_for          = "`+wait+`"`, 1)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.factories(),
		Steps: []resource.TestStep{
			{
				Config: config("flink:no-such-tag", "none"),
				ConfigStateChecks: []statecheck.StateCheck{
					expectAPI(func() error {
						// Until the operator reports the JobManager in ERROR.
						for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Second) {
							obj, err := getDeployment(t, ns, "counts")
							if err != nil {
								return err
							}
							if jm, _, _ := unstructured.NestedString(obj.Object, "status", "jobManagerDeploymentStatus"); jm == "ERROR" {
								return nil
							}
							if time.Now().After(deadline) {
								return fmt.Errorf("the JobManager of an image the node cannot pull is not in ERROR: %v", obj.Object["status"])
							}
						}
					}),
				},
			},
			{
				PreConfig: func() {
					if n := node.Running(); n != 0 {
						t.Fatalf("the node runs %d pods' Flink processes with an image it cannot pull", n)
					}
					rec.reset()
				},
				Config: config("flink:2.2.1-java17", "running"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(countsAddr, plancheck.ResourceActionUpdate),
					rec.planWarning("No savepoint can be taken before this change", "not running", "never started, empty state, which loses nothing"),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					rec.expectWarning("ApplyResourceChange", "No savepoint before this upgrade", "JobManager ERROR",
						"empty state: the JobManager never started", "Deleted application cluster that never started"),
					resource.TestCheckResourceAttr(countsAddr, "job_state", "RUNNING"),
					noSnapshotAsked(t, ns, new(int)),
					func(*terraform.State) error {
						c, err := lastCluster(node, ns, "counts")
						if err != nil {
							return err
						}
						if p, ok := c.Configuration["execution.savepoint.path"]; ok {
							return fmt.Errorf("the fixed cluster restored from %q, want nothing", p)
						}
						counts, _, err := c.WaitCounts(ctx, 1, 2*time.Minute)
						if err != nil {
							return err
						}
						for k, n := range counts {
							if n != 1 {
								return fmt.Errorf("key %d: the fixed job printed %d first, want 1 (empty state)", k, n)
							}
						}
						return nil
					},
				),
			},
		},
	})
}
