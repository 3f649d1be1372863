package provider

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// notTainted checks the resource is in state and not tainted: Terraform
// taints an object whose create returned an error, and the next apply
// would delete and recreate it.
func notTainted(addr string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs, ok := s.RootModule().Resources[addr]
		if !ok || rs.Primary == nil {
			return fmt.Errorf("%s is not in state", addr)
		}
		if rs.Primary.Tainted {
			return fmt.Errorf("%s is tainted: the next apply would replace it", addr)
		}
		return nil
	}
}

// imagePullFailing is a namespace with the operator stand-in whose
// JobManager pods cannot pull their image (ImagePullBackOff), as for
// flink:no-such-tag, until the test clears the fault.
func imagePullFailing(t *testing.T) (string, *testbed.Operator) {
	ns := testNamespace(t)
	op := startOperator(t, ns)
	op.SetFaults(func(f *testbed.Faults) {
		f.ContainerWaiting = &testbed.ContainerState{Reason: "ImagePullBackOff", Message: `Back-off pulling image "flink:no-such-tag"`}
	})
	return ns, op
}

// A create whose job cannot start (the kubelet cannot pull the image, so
// the operator reports the JobManager deployment failed before it ever
// started): the apply fails with the operator's words (no exit 0 on a job
// that cannot run), and the FlinkDeployment, whose job never ran and holds
// no state, is deleted again, so nothing is tainted and the next plan is a
// create of the fixed spec, which runs.
func TestAccDeployment_failedCreateFailsAndLeavesNothing(t *testing.T) {
	skipUnlessAcc(t)
	ns, op := imagePullFailing(t)
	config := func(image string) string {
		return deploymentConfig(ns, image, `  wait_for = "running"
  timeouts {
    create = "2m"
  }`)
	}
	const addr = "flinkstate_deployment.orders"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkDeploymentGone(t, ns),
		Steps: []resource.TestStep{
			{
				Config: config("flink:no-such-tag"),
				ExpectError: errorRE("Creating FlinkDeployment "+ns+"/orders failed", `Back-off pulling image "flink:no-such-tag"`,
					"Its JobManager never started, so no job ran", "it was deleted again", "the next plan creates it"),
			},
			{
				PreConfig: func() {
					if _, err := getDeployment(t, ns, "orders"); err == nil {
						t.Fatalf("the FlinkDeployment whose JobManager never started was left in %s", ns)
					}
					op.SetFaults(func(f *testbed.Faults) { f.ContainerWaiting = nil })
				},
				Config: config("flink:2.2.1-java17"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "job_state", "RUNNING"),
					notTainted(addr),
				),
			},
		},
	})
}

// A create with upgrade_mode = "last-state" that did not wait (wait_for
// none), whose JobManager then never started: the operator recorded the
// first deployment as stateless (AbstractFlinkResourceReconciler
// .updateStatusBeforeFirstDeployment), so fixing the image goes ahead in
// place: it deletes the JobManager that never started and starts the job
// from empty state (ApplicationReconciler.getJobUpgrade,
// deleteJmThatNeverStarted; no savepoint on record; seen on the real
// operator 1.15.0: TestDifferential_fixNeverStartedNoSavepoint). No job
// ran, so nothing is lost; the object is kept (same UID).
func TestAccDeployment_failedCreateLastStateFixedInPlace(t *testing.T) {
	skipUnlessAcc(t)
	ns, op := imagePullFailing(t)
	config := func(image, wait string) string {
		return deploymentConfig(ns, image, `  wait_for = "`+wait+`"
  timeouts {
    create = "2m"
    update = "2m"
  }`)
	}
	var uid ktypes.UID
	const addr = "flinkstate_deployment.orders"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config("flink:no-such-tag", "none"),
				Check: resource.ComposeAggregateTestCheckFunc(
					notTainted(addr),
					uidOf(t, liveDeployment(t, ns), &uid),
				),
			},
			{
				PreConfig: func() { op.SetFaults(func(f *testbed.Faults) { f.ContainerWaiting = nil }) },
				Config:    config("flink:2.2.1-java17", "running"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "job_state", "RUNNING"),
					uidOf(t, liveDeployment(t, ns), &uid),
				),
			},
		},
	})
}

// An upgrade the operator refuses: a last-state job whose JobManager never
// became ready and whose Deployment was then deleted (JobManager MISSING,
// no HA metadata; MISSING, so not one that "never started"). Fixing the
// image is refused by the operator (UpgradeFailureException, "Manual
// restore required." — ApplicationReconciler.getJobUpgrade — and an
// UpgradeFailed event, said again at every reconciliation; seen on the
// real operator 1.15.0: TestDifferential_upgradeNeverReady). The apply
// fails at once (not at its timeout) with the operator's message and the
// ways out, the object is kept (same UID), and one of them — a stateless
// upgrade — updates it in place until it runs.
func TestAccDeployment_missingJobManagerLastStateNeedsManualRestore(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	op := startOperator(t, ns)
	op.SetFaults(func(f *testbed.Faults) { f.JobManagerNeverReady = true })
	config := func(image, mode, wait string) string {
		return strings.Replace(deploymentConfig(ns, image, `  wait_for = "`+wait+`"
  timeouts {
    create = "2m"
    update = "3m"
  }`), `upgrade_mode = "last-state"`, `upgrade_mode = "`+mode+`"`, 1)
	}
	var uid ktypes.UID
	var started time.Time
	const addr = "flinkstate_deployment.orders"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config("flink:2.2.1-java17", "last-state", "deployed"),
				Check: resource.ComposeAggregateTestCheckFunc(
					notTainted(addr),
					uidOf(t, liveDeployment(t, ns), &uid),
				),
			},
			{
				PreConfig: func() {
					op.SetFaults(func(f *testbed.Faults) { f.JobManagerDeleted = true })
					jobManagerMissing(t, ns)
					started = time.Now()
				},
				Config: config("flink:2.2.1-java21", "last-state", "running"),
				ExpectError: errorRE("Upgrading FlinkDeployment "+ns+"/orders failed", "refused to upgrade to generation 2",
					"HA metadata is not available", "Manual restore required", "initial_savepoint_path", `upgrade_mode = "stateless"`),
			},
			{
				// At once: well within the 3m update timeout.
				PreConfig: func() {
					if d := time.Since(started); d > time.Minute {
						t.Fatalf("the refused upgrade failed after %s, not at once", d)
					}
					op.SetFaults(func(f *testbed.Faults) { f.JobManagerNeverReady, f.JobManagerDeleted = false, false })
				},
				Config: config("flink:2.2.1-java21", "stateless", "running"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "job_state", "RUNNING"),
					uidOf(t, liveDeployment(t, ns), &uid),
				),
			},
		},
	})
}

// jobManagerMissing waits until the operator reports the JobManager of
// ns/orders MISSING.
func jobManagerMissing(t *testing.T, ns string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if obj, err := getDeployment(t, ns, "orders"); err == nil {
			if jm, _, _ := unstructured.NestedString(obj.Object, "status", "jobManagerDeploymentStatus"); jm == "MISSING" {
				return
			}
		}
	}
	t.Fatalf("the JobManager of %s/orders never went MISSING", ns)
}
