package provider

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// savepoint_before_upgrade on a job that is not running (issue 36, row 7):
// no savepoint can be taken (the operator abandons a savepoint of a job
// that is not running), so none is asked for; the plan says what the new
// spec starts from, and the apply goes ahead where the operator restores
// it by itself and is refused, with the way out, where it cannot.

func notRunningConfig(ns, image, mode string) string {
	return notRunningConfigWait(ns, image, mode, "running")
}

// notRunningCreated is the step that creates the last-state deployment
// orders in ns (notRunningConfigWait with image and wait): it is created
// untainted, and its FlinkDeployment's uid is recorded (uidOf).
func notRunningCreated(t *testing.T, ns, image, wait string, uid *ktypes.UID) resource.TestStep {
	return resource.TestStep{
		Config: notRunningConfigWait(ns, image, "last-state", wait),
		Check:  resource.ComposeAggregateTestCheckFunc(notTainted(depAddr), uidOf(t, liveDeployment(t, ns), uid)),
	}
}

// noSnapshotAsked fails where ns holds other than *before
// FlinkStateSnapshots (read when the check runs): a savepoint was asked of
// a job that is not running.
func noSnapshotAsked(t *testing.T, ns string, before *int) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if n := countSnapshots(t, ns); n != *before {
			return fmt.Errorf("%d FlinkStateSnapshots after the fix, %d before: a savepoint was asked of a job that is not running", n, *before)
		}
		return nil
	}
}

func notRunningConfigWait(ns, image, mode, wait string) string {
	return strings.Replace(deploymentConfig(ns, image, `  wait_for = "`+wait+`"
  savepoint_before_upgrade {}
  timeouts {
    create = "2m"
    update = "2m"
  }`), `upgrade_mode = "last-state"`, `upgrade_mode = "`+mode+`"`, 1)
}

// A last-state job whose JobManager never became ready and whose
// Deployment was then deleted (JobManager MISSING): there is no HA metadata
// and no savepoint, so the operator would refuse the fix ("Manual restore
// required.", seen on the real operator 1.15.0:
// TestDifferential_upgradeNeverReady). The fix is refused before anything
// changes, saying why and the ways out, without a FlinkStateSnapshot; a
// stateless upgrade, one way out, goes ahead.
func TestAccDeployment_savepointBeforeUpgradeNotRunningRefusedWithWayOut(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	op := startOperator(t, ns)
	op.SetFaults(func(f *testbed.Faults) { f.JobManagerNeverReady = true })
	rec := &diagRecorder{}
	var uid ktypes.UID
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.factories(),
		Steps: []resource.TestStep{
			notRunningCreated(t, ns, "flink:2.2.1-java17", "deployed", &uid),
			{
				PreConfig: func() {
					op.SetFaults(func(f *testbed.Faults) { f.JobManagerDeleted = true })
					jobManagerMissing(t, ns)
					rec.reset()
				},
				Config: notRunningConfig(ns, "flink:2.2.1-java21", "last-state"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					rec.planWarning("No savepoint can be taken before this change", "is RECONCILING, not running",
						"HA metadata", "the apply is refused"),
				}},
				ExpectError: errorRE("No savepoint can be taken before this upgrade", ns+"/orders was not changed",
					"its job is RECONCILING", "JobManager MISSING", "Manual restore required", "initial_savepoint_path",
					`upgrade_mode = "stateless"`),
			},
			{
				PreConfig: func() {
					if n := countSnapshots(t, ns); n != 0 {
						t.Fatalf("%d FlinkStateSnapshots were asked of a job that is not running", n)
					}
					op.SetFaults(func(f *testbed.Faults) { f.JobManagerNeverReady, f.JobManagerDeleted = false, false })
					rec.reset()
				},
				Config: notRunningConfig(ns, "flink:2.2.1-java21", "stateless"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(depAddr, plancheck.ResourceActionUpdate),
					rec.planWarning("No savepoint can be taken before this change", "empty state"),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					rec.expectWarning("ApplyResourceChange", "No savepoint before this upgrade", "empty state"),
					resource.TestCheckResourceAttr(depAddr, "job_state", "RUNNING"),
					uidOf(t, liveDeployment(t, ns), &uid),
				),
			},
		},
	})
}

// A last-state job whose JobManager never started (its image cannot be
// pulled; created with wait_for = "none", so the operator recorded the
// first deployment as stateless): no HA metadata and no savepoint, but the
// operator fixes it by itself, from empty state: it deletes the JobManager
// that never started and deploys the new spec without a savepoint
// (ApplicationReconciler.getJobUpgrade, deleteJmThatNeverStarted; seen on
// the real operator 1.15.0: TestDifferential_fixNeverStartedNoSavepoint).
// No job ran, so nothing is lost: the fix goes ahead without a
// FlinkStateSnapshot, and the plan and the apply say it starts from empty
// state.
func TestAccDeployment_savepointBeforeUpgradeNeverStartedProceeds(t *testing.T) {
	skipUnlessAcc(t)
	ns, op := imagePullFailing(t)
	rec := &diagRecorder{}
	var uid ktypes.UID
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.factories(),
		Steps: []resource.TestStep{
			// Created without waiting: a create that waits and finds its
			// JobManager never started fails and deletes it again.
			notRunningCreated(t, ns, "flink:no-such-tag", "none", &uid),
			{
				PreConfig: func() {
					op.SetFaults(func(f *testbed.Faults) { f.ContainerWaiting = nil })
					rec.reset()
				},
				Config: notRunningConfig(ns, "flink:2.2.1-java17", "last-state"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(depAddr, plancheck.ResourceActionUpdate),
					rec.planWarning("No savepoint can be taken before this change", "is RECONCILING, not running",
						"never started, empty state, which loses nothing"),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					rec.expectWarning("ApplyResourceChange", "No savepoint before this upgrade", "its job is RECONCILING", "JobManager ERROR",
						"empty state: the JobManager never started", "Deleted application cluster that never started"),
					resource.TestCheckResourceAttr(depAddr, "job_state", "RUNNING"),
					uidOf(t, liveDeployment(t, ns), &uid),
					noSnapshotAsked(t, ns, new(int)),
				),
			},
		},
	})
}

// A last-state job that ran (a checkpoint, HA metadata) and was then
// upgraded to an image that cannot be pulled: the fix goes ahead without a
// savepoint, from the HA metadata the operator restores by itself, and the
// plan and the apply say so.
func TestAccDeployment_savepointBeforeUpgradeNotRunningProceedsFromHA(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	op := startOperator(t, ns)
	rec := &diagRecorder{}
	snapshots := 0
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.factories(),
		Steps: []resource.TestStep{
			{Config: notRunningConfig(ns, "flink:2.2.1-java17", "last-state")},
			{
				PreConfig: func() {
					op.SetFaults(func(f *testbed.Faults) {
						f.ContainerWaiting = &testbed.ContainerState{Reason: "ImagePullBackOff", Message: `Back-off pulling image "flink:no-such-tag"`}
					})
				},
				Config:      notRunningConfig(ns, "flink:no-such-tag", "last-state"),
				ExpectError: errorRE(`Back-off pulling image "flink:no-such-tag"`),
			},
			{
				PreConfig: func() {
					op.SetFaults(func(f *testbed.Faults) { f.ContainerWaiting = nil })
					snapshots = countSnapshots(t, ns)
					rec.reset()
				},
				Config: notRunningConfig(ns, "flink:2.2.1-java17", "last-state"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					rec.planWarning("No savepoint can be taken before this change", "not running", "HA metadata"),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					rec.expectWarning("ApplyResourceChange", "No savepoint before this upgrade", "its job is RECONCILING",
						"the latest checkpoint in the job's HA metadata", "HA metadata is available for last state restore"),
					resource.TestCheckResourceAttr(depAddr, "job_state", "RUNNING"),
					noSnapshotAsked(t, ns, &snapshots),
				),
			},
		},
	})
}
