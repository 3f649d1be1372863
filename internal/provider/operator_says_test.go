package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// What the operator says, read by the waits (issue: waits that read the
// real operator). Each case is what operator 1.15.0 was seen doing; the
// model does the same (internal/testbed, TestOperator_snapshotTargetMissing
// and TestValidate_operatorDefaultConfiguration), and the real operator's
// side is checked by the test bed's TestRealOperator_* tests when its jars
// are given (FLINKSTATE_OPERATOR_DIR).

// rollbackWithoutHA is a deployment the provider accepts (nothing in its
// configuration asks for rollbacks) that an operator whose own default
// configuration enables rollbacks refuses: "HA must be enabled for rollback
// support." (DefaultValidator.validateFlinkDeploymentConfig reads the
// operator's default configuration under the spec's).
func rollbackWithoutHA(ns, ha string) string {
	c := deploymentConfig(ns, "flink:2.2.1-java17", fmt.Sprintf("  high_availability = %s\n  wait_for = \"deployed\"", ha))
	return strings.Replace(c, `upgrade_mode = "last-state"`, `upgrade_mode = "savepoint"`, 1)
}

func rollbackOperator(op *testbed.Operator) {
	op.DefaultConfig = map[string]string{"kubernetes.operator.deployment.rollback.enabled": "true"}
}

// A create the operator's validator refuses fails the apply at once with
// the validator's message, although the operator records no
// observedGeneration for it; the FlinkDeployment, which never deployed
// anything, is deleted again, so the next plan is a create (not the
// replacement of a tainted deployment), and once fixed it deploys.
func TestAccDeployment_rejectedCreateFailsAndLeavesNothing(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	ns := testNamespace(t)
	startOperatorWith(t, ns, rollbackOperator)
	resource.Test(t, rejectedCreateCase(t, ns))
}

// rejectedCreateCase is row 1's case on ns, whose operator's default
// configuration enables rollbacks (the model's or the real one's).
func rejectedCreateCase(t *testing.T, ns string) resource.TestCase {
	return resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkDeploymentGone(t, ns),
		Steps: []resource.TestStep{
			{
				Config:      rollbackWithoutHA(ns, "false"),
				ExpectError: errorRE("refused by the operator's validator", "HA must be enabled for rollback support", "Nothing was deployed, and it was deleted again"),
			},
			{
				// Nothing is left behind: no object, nothing in state.
				PreConfig: func() {
					if _, err := getDeployment(t, ns, "orders"); err == nil {
						t.Fatalf("the refused FlinkDeployment was left in %s", ns)
					}
				},
				Config: rollbackWithoutHA(ns, "true"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flinkstate_deployment.orders", plancheck.ResourceActionCreate),
				}},
			},
		},
	}
}

// An update the operator's validator refuses (the job keeps running with
// the spec it last reconciled, observedGeneration stays) fails at once with
// the validator's message, read from its ValidationError event.
func TestAccDeployment_rejectedUpdateFailsAtOnce(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	ns := testNamespace(t)
	op := startOperator(t, ns)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: rollbackWithoutHA(ns, "false")},
			{
				// The operator's configuration changes under a running job:
				// the next spec change is refused.
				PreConfig: func() {
					op.SetDefaultConfig(map[string]string{"kubernetes.operator.deployment.rollback.enabled": "true"})
				},
				Config:      strings.Replace(rollbackWithoutHA(ns, "false"), "flink:2.2.1-java17", "flink:2.2.1-java21", 1),
				ExpectError: errorRE("refused generation 2", "HA must be enabled for rollback support"),
			},
			{
				// The operator's configuration put back: the change goes
				// through, and the destroy's stop is no longer refused.
				PreConfig: func() {
					op.SetReconcileInterval(2 * time.Second)
					op.SetDefaultConfig(nil)
				},
				Config: strings.Replace(rollbackWithoutHA(ns, "false"), "flink:2.2.1-java17", "flink:2.2.1-java21", 1),
			},
		},
	})
}

// A destroy after a refused update stops the job that runs: the operator
// acts on the spec it last reconciled, never on the refused one
// (ReconciliationUtils.applyValidationErrorAndResetSpec), so the stop is
// written onto that spec, and the final savepoint is taken.
func TestAccDeployment_destroyAfterRefusedUpdateStopsTheRunningJob(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	ns := testNamespace(t)
	startOperatorWith(t, ns, rollbackOperator)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			if _, err := getDeployment(t, ns, "orders"); !apierrors.IsNotFound(err) {
				return fmt.Errorf("FlinkDeployment orders still there (%v)", err)
			}
			return checkFinalSavepoint(t, ns, "orders")
		},
		Steps: []resource.TestStep{
			{Config: rollbackWithoutHA(ns, "true")},
			{
				// Without HA, rollbacks (on in this operator) are refused.
				Config:      rollbackWithoutHA(ns, "false"),
				ExpectError: errorRE("refused generation 2", "HA must be enabled for rollback support"),
			},
		},
	})
}

// A destroy whose stop the operator's validator refuses (its configuration
// changed under the job) fails at once with the validator's words, and the
// job keeps running: nothing is deleted without its final savepoint.
func TestAccDeployment_destroyRefusedAtOnceWhenTheStopIsRefused(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	ns := testNamespace(t)
	op := startOperator(t, ns)
	cfg := rollbackWithoutHA(ns, "false")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig: func() {
					// The operator says its refusal again each reconcile
					// interval; the refusal of the stop's spec is the second.
					op.SetReconcileInterval(2 * time.Second)
					op.SetDefaultConfig(map[string]string{"kubernetes.operator.deployment.rollback.enabled": "true"})
				},
				Config:      cfg,
				Destroy:     true,
				ExpectError: errorRE("the stop was refused", "HA must be enabled for rollback support", "Nothing was deleted"),
			},
			{
				PreConfig: func() {
					obj, err := getDeployment(t, ns, "orders")
					if err != nil {
						t.Fatalf("the refused destroy deleted the FlinkDeployment: %v", err)
					}
					if state, _, _ := unstructured.NestedString(obj.Object, "spec", "job", "state"); state == "suspended" {
						t.Fatalf("spec job.state %q after the refused stop, want it put back", state)
					}
					op.SetDefaultConfig(nil)
				},
				Config:   cfg,
				PlanOnly: true,
			},
		},
	})
}

// A snapshot of a FlinkDeployment that does not exist gets no status from
// the operator, only a ValidationError event: the create fails at once with
// the operator's words, nothing was triggered, and the snapshot is deleted
// again (its finalizer, which the operator would keep for ever, released).
func TestAccSnapshot_targetMissingFailsAtOnce(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	ns := testNamespace(t)
	startOperator(t, ns)
	resource.Test(t, snapshotTargetMissingCase(t, ns))
}

// snapshotTargetMissingCase is row 4's case on ns.
func snapshotTargetMissingCase(t *testing.T, ns string) resource.TestCase {
	return resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkNoSnapshots(t, ns),
		Steps: []resource.TestStep{{
			Config:      snapshotConfig(ns, ""),
			ExpectError: errorRE("Target for snapshot "+ns+"/orders was not found", "Nothing was triggered, and it was deleted again"),
		}, {
			PreConfig: func() {
				if n := countSnapshots(t, ns); n != 0 {
					t.Fatalf("%d FlinkStateSnapshots left after the refused create", n)
				}
			},
			Config:             snapshotConfig(ns, ""),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
		}},
	}
}

// A snapshot the operator never gave a status (its target was missing, and
// the apply did not wait) is destroyed: the operator's cleanup throws on
// the missing status and keeps its finalizer, so the provider releases it;
// nothing was triggered, so nothing is disposed.
func TestAccSnapshot_destroyWithoutStatus(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	ns := testNamespace(t)
	startOperator(t, ns)
	resource.Test(t, snapshotDestroyWithoutStatusCase(t, ns))
}

// snapshotDestroyWithoutStatusCase is row 8's case on ns.
func snapshotDestroyWithoutStatusCase(t *testing.T, ns string) resource.TestCase {
	return resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkNoSnapshots(t, ns),
		Steps: []resource.TestStep{{
			Config: snapshotConfig(ns, "  wait = false"),
			Check: func(*terraform.State) error {
				if n := countSnapshots(t, ns); n != 1 {
					return fmt.Errorf("want one snapshot, got %d", n)
				}
				return nil
			},
		}},
	}
}

func countSnapshots(t *testing.T, ns string) int {
	t.Helper()
	list, err := testKube(t).Dynamic.Resource(kube.FlinkStateSnapshotGVR).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return len(list.Items)
}

// jobManagerNeverReady is a namespace whose operator stand-in deploys
// JobManagers that never become ready (job RECONCILING, JobManager
// DEPLOYING), as the real operator 1.15.0 reports them on a cluster where
// no node runs them (TestDifferential_upgradeNeverReady).
func jobManagerNeverReady(t *testing.T) string {
	ns := testNamespace(t)
	op := startOperator(t, ns)
	op.SetFaults(func(f *testbed.Faults) { f.JobManagerNeverReady = true })
	return ns
}

// An upgrade, and then a suspend, of a job whose JobManager never became
// ready: the operator sees each change (SpecChanged) and waits for an
// upgradeable state, recording nothing. The wait keeps going to its end and
// then says what the operator is doing and the ways out, instead of asking
// whether the operator runs.
func TestAccDeployment_upgradeNeverReadySaysOperatorWaits(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	resource.Test(t, upgradeNeverReadyCase(jobManagerNeverReady(t), "10s"))
}

// upgradeNeverReadyCase is row 6's case on ns, whose JobManagers never
// become ready, with the given update timeout.
func upgradeNeverReadyCase(ns, updateTimeout string) resource.TestCase {
	config := func(image, state string) string {
		c := deploymentConfig(ns, image, `  wait_for = "deployed"
  timeouts {
    update = "`+updateTimeout+`"
  }`)
		if state != "" {
			c = strings.Replace(c, `upgrade_mode = "last-state"`, `upgrade_mode = "last-state"
    state        = "`+state+`"`, 1)
		}
		return c
	}
	waits := func(gen int) *regexp.Regexp {
		return errorRE("has not observed generation "+fmt.Sprint(gen), "the operator saw the change", "SpecChanged",
			"waits for an upgradeable state", "its job is RECONCILING and its JobManager DEPLOYING", "initial_savepoint_path",
			`upgrade_mode = "stateless"`)
	}
	return resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: config("flink:2.2.1-java17", "")},
			{Config: config("flink:2.2.1-java21", ""), ExpectError: waits(2)},
			{Config: config("flink:2.2.1-java21", "suspended"), ExpectError: waits(3)},
		},
	}
}
