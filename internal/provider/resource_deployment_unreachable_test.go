package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// A destroy whose final savepoint meets a JobManager that stopped
// answering while the status still said RUNNING (issue 36, row 9): the
// operator's trigger times out, the job moves to RECONCILING and the
// savepoint is abandoned. The destroy is refused saying what the operator
// reported, what survives and the choices; the next destroy's plan says
// that no final savepoint is possible now (it does not take another path
// silently), and that destroy deletes the deployment without one.
func TestAccDeployment_finalSavepointJobManagerUnreachable(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	op := startOperator(t, ns)
	prefix := randName("unreach-")
	cfg := restoreConfig(ns, prefix, "flink:2.2.1-java17", "", `  wait_for = "running"`)
	rec := &diagRecorder{}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.factories(),
		CheckDestroy:             checkDeploymentGone(t, ns),
		Steps: unreachableDestroySteps(cfg, depAddr, rec, func() {
			op.SetFaults(func(f *testbed.Faults) { f.JobManagerUnreachable = true })
		}),
	})
}

// unreachableDestroySteps are row 9's steps for the deployment addr of cfg:
// it is applied, its JobManager made unreachable (unreachable), the
// destroy refused, and the next destroy's plan warns and deletes it
// without a savepoint.
func unreachableDestroySteps(cfg, addr string, rec *diagRecorder, unreachable func()) []resource.TestStep {
	return []resource.TestStep{
		{Config: cfg},
		{
			PreConfig: func() {
				unreachable()
				rec.reset()
			},
			Config:  cfg,
			Destroy: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				rec.planWarning("Destroy stops the job with a final savepoint"),
			}},
			ExpectError: errorRE("final savepoint did not complete", "is not running", "the operator now reports its job RECONCILING",
				"Nothing was deleted", "checkpoints the job retained", "HA metadata", "deletes with the FlinkDeployment",
				"bring the JobManager back", "final_savepoint = false"),
		},
		{
			PreConfig: rec.reset,
			Config:    cfg,
			Destroy:   true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(addr, plancheck.ResourceActionDestroy),
				rec.planWarning("No final savepoint is possible now", "is RECONCILING", "not running",
					"The last destroy's final savepoint did not complete", "is not running", "deletes it without a savepoint",
					"checkpoints it retained"),
			}},
			Check: rec.expectWarning("ApplyResourceChange", "No final savepoint", "RECONCILING"),
		},
	}
}
