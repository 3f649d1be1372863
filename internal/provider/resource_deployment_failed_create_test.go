package provider

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
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

// A create whose job fails (the kubelet cannot pull the image, so the
// operator reports the JobManager deployment failed): the apply completes
// with a warning, the FlinkDeployment stays in state untainted, the next
// plan is an update (the wait is pending), and fixing the image updates the
// same object in place until the job runs.
func TestAccDeployment_failedCreateKeptAndFixedInPlace(t *testing.T) {
	skipUnlessAcc(t)
	ns, op := imagePullFailing(t)
	// A stateless job: the first deployment never ran, so there is no state
	// to carry over, and the operator upgrades a stateless job whatever its
	// JobManager's state (AbstractJobReconciler.getJobUpgrade: "Stateless
	// job, ready for upgrade"); a last-state job whose JobManager never
	// started needs HA metadata it does not have (ApplicationReconciler
	// .getJobUpgrade).
	config := func(image string) string {
		return strings.Replace(deploymentConfig(ns, image, `  wait_for = "running"
  timeouts {
    create = "2m"
    update = "2m"
  }`), `upgrade_mode = "last-state"`, `upgrade_mode = "stateless"`, 1)
	}
	rec := &diagRecorder{}
	var uid ktypes.UID
	const addr = "flinkstate_deployment.orders"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.factories(),
		Steps: []resource.TestStep{
			{
				Config:             config("flink:no-such-tag"),
				ExpectNonEmptyPlan: true, // the wait is pending
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					rec.expectWarning("ApplyResourceChange", "FlinkDeployment created but not ready yet",
						"failed (lifecycle", `Back-off pulling image "flink:no-such-tag"`, "kept (not replaced)", "next plan shows it as an update"),
					notTainted(addr),
					resource.TestCheckResourceAttr(addr, "id", ns+"/orders"),
					uidOf(t, liveDeployment(t, ns), &uid),
				),
			},
			{
				// The image is fixed: an update of the same object, not a replacement.
				PreConfig: func() { op.SetFaults(func(f *testbed.Faults) { f.ContainerWaiting = nil }) },
				Config:    config("flink:2.2.1-java17"),
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

// The same failed create with upgrade_mode = "last-state": fixing the image
// alone is refused by the operator (the JobManager never started, so there
// is no HA metadata to restore from: UpgradeFailureException, "Manual restore
// required." — ApplicationReconciler.getJobUpgrade — and an UpgradeFailed
// event, said again at every reconciliation). The apply fails at once (not
// at its timeout) with the operator's message and the ways out, the object
// is kept (same UID), and one of them — a stateless upgrade of a job that
// never held state — updates it in place until it runs.
func TestAccDeployment_failedCreateLastStateNeedsManualRestore(t *testing.T) {
	skipUnlessAcc(t)
	ns, op := imagePullFailing(t)
	config := func(image, mode string) string {
		return strings.Replace(deploymentConfig(ns, image, `  wait_for = "running"
  timeouts {
    create = "2m"
    update = "3m"
  }`), `upgrade_mode = "last-state"`, `upgrade_mode = "`+mode+`"`, 1)
	}
	var uid ktypes.UID
	var started time.Time
	const addr = "flinkstate_deployment.orders"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:             config("flink:no-such-tag", "last-state"),
				ExpectNonEmptyPlan: true, // the wait is pending
				Check: resource.ComposeAggregateTestCheckFunc(
					notTainted(addr),
					uidOf(t, liveDeployment(t, ns), &uid),
				),
			},
			{
				PreConfig: func() {
					op.SetFaults(func(f *testbed.Faults) { f.ContainerWaiting = nil })
					started = time.Now()
				},
				Config: config("flink:2.2.1-java17", "last-state"),
				ExpectError: errorRE("Upgrading FlinkDeployment "+ns+"/orders failed", "refused to upgrade to generation 2",
					"HA metadata is not available", "Manual restore required", "initial_savepoint_path", `upgrade_mode = "stateless"`),
			},
			{
				// At once: well within the 3m update timeout.
				PreConfig: func() {
					if d := time.Since(started); d > time.Minute {
						t.Fatalf("the refused upgrade failed after %s, not at once", d)
					}
				},
				Config: config("flink:2.2.1-java17", "stateless"),
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
