package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// bgShortWait is a timeouts block for blueGreenConfig's extra.
func bgShortWait(op, d string) string {
	return "  timeouts {\n    " + op + " = \"" + d + "\"\n  }"
}

// An update whose wait runs out while green's job cannot start (the fault
// holds it RECONCILING; the operator would abort only after the 10 min
// grace period) is an error that says where the transition stands: its
// state, what the operator waits for, and that blue keeps running.
func TestAccBlueGreen_updateWaitRanOutSaysWhereTheTransitionStands(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	op := startOperator(t, ns)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBlueGreenGone(t, ns),
		Steps: []resource.TestStep{
			{Config: blueGreenConfig(ns, "flink:2.2.1-java17", "")},
			{
				PreConfig: func() { op.SetFaults(func(f *testbed.Faults) { f.JobNeverRuns = true }) },
				Config:    blueGreenConfig(ns, "flink:2.2.1-java21", bgShortWait("update", "10s")),
				ExpectError: errorRE("timed out after 10s waiting for ACTIVE_GREEN", "the state is TRANSITIONING_TO_GREEN",
					"the operator waits for orders-green to be STABLE with its job RUNNING", "aborts the transition (abort_grace_period)",
					"orders-blue keeps running (its job RUNNING)", "next plan shows this deployment as a pending update"),
			},
			{
				// The job starts again for the destroy's final savepoint.
				PreConfig: func() { op.SetFaults(func(f *testbed.Faults) { f.JobNeverRuns = false }) },
				Config:    blueGreenConfig(ns, "flink:2.2.1-java21", ""),
			},
		},
	})
}

// After an update whose wait ran out, the next plan is an update again
// (the transition to green, not a plan with nothing to do), and its apply,
// which writes nothing new, waits for ACTIVE_GREEN; then the plan is empty.
func TestAccBlueGreen_updateWaitRanOutIsPlannedAgain(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	op := startOperator(t, ns)
	rec := &diagRecorder{}
	next := blueGreenConfig(ns, "flink:2.2.1-java21", bgShortWait("update", "10s"))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.factories(),
		CheckDestroy:             checkBlueGreenGone(t, ns),
		Steps: []resource.TestStep{
			{Config: blueGreenConfig(ns, "flink:2.2.1-java17", "")},
			{
				PreConfig:   func() { op.SetFaults(func(f *testbed.Faults) { f.JobNeverRuns = true }) },
				Config:      next,
				ExpectError: errorRE("timed out after 10s waiting for ACTIVE_GREEN"),
			},
			{
				PreConfig: func() {
					rec.reset()
					op.SetFaults(func(f *testbed.Faults) { f.JobNeverRuns = false })
				},
				Config: next,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(bgAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(bgAddr, tfjsonPath("blue_green_state"), knownString("ACTIVE_GREEN")),
					plancheck.ExpectKnownValue(bgAddr, tfjsonPath("effective_flink_configuration").AtMapKey("kubernetes.cluster-id"), knownString("orders-green")),
					rec.planWarning("A wait that ran out: this apply waits again", "ACTIVE_GREEN", "timed out after 10s"),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(bgAddr, tfjsonPath("blue_green_state"), knownString("ACTIVE_GREEN")),
					statecheck.ExpectKnownValue(bgAddr, tfjsonPath("active_deployment_name"), knownString("orders-green")),
					statecheck.ExpectKnownValue(bgAddr, tfjsonPath("job_state"), knownString("RUNNING")),
				},
			},
			{Config: next, PlanOnly: true},
		},
	})
}

// A create whose wait runs out keeps the FlinkBlueGreenDeployment (a
// warning, not an error: Terraform would taint it and replace the job),
// with blue, the only child, as the active one; the next plan is an update
// whose apply waits for ACTIVE_BLUE, not a replacement.
func TestAccBlueGreen_createWaitRanOutIsKeptAndWaitedFor(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	op := startOperator(t, ns)
	rec := &diagRecorder{}
	cfg := blueGreenConfig(ns, "flink:2.2.1-java17", bgShortWait("create", "10s"))
	var uid string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.factories(),
		CheckDestroy:             checkBlueGreenGone(t, ns),
		Steps: []resource.TestStep{
			{
				PreConfig: func() { op.SetFaults(func(f *testbed.Faults) { f.JobNeverRuns = true }) },
				Config:    cfg,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(bgAddr, tfjsonPath("active_deployment_name"), knownString("orders-blue")),
					recordUID(t, ns, &uid),
				},
				Check:              rec.expectWarning("ApplyResourceChange", "created but not active yet", "timed out after 10s waiting for ACTIVE_BLUE", "orders-blue"),
				ExpectNonEmptyPlan: true,
			},
			{
				PreConfig: func() { op.SetFaults(func(f *testbed.Faults) { f.JobNeverRuns = false }) },
				Config:    cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(bgAddr, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(bgAddr, tfjsonPath("blue_green_state"), knownString("ACTIVE_BLUE")),
					statecheck.ExpectKnownValue(bgAddr, tfjsonPath("job_state"), knownString("RUNNING")),
					expectSameUID(t, ns, &uid),
				},
			},
		},
	})
}

// recordUID records the live FlinkBlueGreenDeployment's UID; expectSameUID
// checks that it is still that object (kept, not replaced).
func recordUID(t *testing.T, ns string, uid *string) statecheck.StateCheck {
	return expectAPI(func() error {
		obj, err := testKube(t).Dynamic.Resource(kube.FlinkBlueGreenDeploymentGVR).Namespace(ns).Get(context.Background(), "orders", metav1.GetOptions{})
		if err != nil {
			return err
		}
		*uid = string(obj.GetUID())
		return nil
	})
}

func expectSameUID(t *testing.T, ns string, uid *string) statecheck.StateCheck {
	return expectAPI(func() error {
		obj, err := testKube(t).Dynamic.Resource(kube.FlinkBlueGreenDeploymentGVR).Namespace(ns).Get(context.Background(), "orders", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if string(obj.GetUID()) != *uid {
			return fmt.Errorf("FlinkBlueGreenDeployment has UID %s, want %s (replaced)", obj.GetUID(), *uid)
		}
		return nil
	})
}

// job.state suspended suspends the active child in place, and the apply
// waits until the operator says so (ACTIVE_BLUE with its job SUSPENDED),
// where a wait for a running job would run out; running again resumes it.
func TestAccBlueGreen_suspendAndResumeInPlace(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	running := blueGreenConfig(ns, "flink:2.2.1-java17", "")
	suspended := strings.Replace(running, `upgrade_mode = "savepoint"`, `upgrade_mode = "savepoint"`+"\n    state        = \"suspended\"", 1)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBlueGreenGone(t, ns),
		Steps: []resource.TestStep{
			{Config: running},
			{
				Config: suspended,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(bgAddr, tfjsonPath("blue_green_state"), knownString("ACTIVE_BLUE")),
					statecheck.ExpectKnownValue(bgAddr, tfjsonPath("active_deployment_name"), knownString("orders-blue")),
					expectAPI(func() error {
						obj, err := getDeployment(t, ns, "orders-blue")
						if err != nil {
							return err
						}
						if lc := kube.ReadDeploymentStatus(obj).LifecycleState; lc != "SUSPENDED" {
							return fmt.Errorf("orders-blue lifecycle %s after the suspend, want SUSPENDED", lc)
						}
						if _, err := getDeployment(t, ns, "orders-green"); err == nil {
							return fmt.Errorf("orders-green exists after an in-place suspend")
						}
						return nil
					}),
				},
			},
			{Config: suspended, PlanOnly: true},
			{
				Config: running,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(bgAddr, tfjsonPath("blue_green_state"), knownString("ACTIVE_BLUE")),
					statecheck.ExpectKnownValue(bgAddr, tfjsonPath("job_state"), knownString("RUNNING")),
				},
			},
		},
	})
}

// A destroy while a transition runs (green started, blue still there) waits
// for it to end, and refuses when it does not within the timeout: nothing is
// deleted and blue's job runs on. Once the transition ends, the destroy
// stops the active child with its final savepoint.
func TestAccBlueGreen_destroyWaitsForTheTransition(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	op := startOperator(t, ns)
	var jobID string
	next := blueGreenConfig(ns, "flink:2.2.1-java21", "  timeouts {\n    update = \"10s\"\n    delete = \"10s\"\n  }")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBlueGreenGone(t, ns),
		Steps: []resource.TestStep{
			{
				Config:            blueGreenConfig(ns, "flink:2.2.1-java17", ""),
				ConfigStateChecks: []statecheck.StateCheck{recordAttr(bgAddr, "job_id", &jobID)},
			},
			{
				PreConfig:   func() { op.SetFaults(func(f *testbed.Faults) { f.JobNeverRuns = true }) },
				Config:      next,
				ExpectError: errorRE("timed out after 10s waiting for ACTIVE_GREEN"),
			},
			{
				Config:      next,
				Destroy:     true,
				ExpectError: errorRE("the transition is still under way", "TRANSITIONING_TO_GREEN", "Nothing was deleted"),
			},
			{
				PreConfig: func() {
					obj, err := getDeployment(t, ns, "orders-blue")
					if err != nil {
						t.Fatal(err)
					}
					if st := kube.ReadDeploymentStatus(obj); st.JobID != jobID || st.JobState != "RUNNING" {
						t.Errorf("orders-blue after the refused destroy: job %s %s, want %s RUNNING", st.JobID, st.JobState, jobID)
					}
					op.SetFaults(func(f *testbed.Faults) { f.JobNeverRuns = false })
				},
				Config: next,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(bgAddr, tfjsonPath("blue_green_state"), knownString("ACTIVE_GREEN")),
				},
			},
		},
	})
}
