package provider

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// A create applied while the operator retries a reconcile error (issue
// 36, row 5: the API server refuses the JobManager Deployment, the model's
// DeploymentCreateRefused fault, as TestDifferential_retriedReconcileRecovers
// holds to the real operator): the wait reads the ReconciliationException
// as progress, the fault is cleared after a while, and the apply succeeds
// with the job running. (TestAccRealOperator_retriedReconcileRecovers is
// the same on the real operator.)
func TestAccDeployment_retriedReconcileRecovers(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	op := startOperator(t, ns)
	prefix := randName("retried-")
	cfg := restoreConfig(ns, prefix, "flink:2.2.1-java17", "", `  wait_for = "running"`)
	const refusal = "deployments are paused in this namespace"
	var met atomic.Bool
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkDeploymentGone(t, ns),
		Steps: []resource.TestStep{{
			PreConfig: func() {
				op.SetFaults(func(f *testbed.Faults) { f.DeploymentCreateRefused = refusal })
				go func() {
					// Cleared once the operator has said so for 3 s.
					ctx := context.Background()
					for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
						obj, err := kube.GetFlinkDeployment(ctx, testKube(t).Dynamic, ns, "orders")
						if err != nil {
							continue
						}
						evs, _ := kube.ObjectEvents(ctx, testKube(t).Dynamic, obj)
						for _, e := range evs {
							if e.Reason == "Error" && strings.Contains(e.Message, refusal) {
								met.Store(true)
							}
						}
						if met.Load() {
							time.Sleep(3 * time.Second)
							break
						}
					}
					op.SetFaults(func(f *testbed.Faults) { f.DeploymentCreateRefused = "" })
				}()
			},
			Config: cfg,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(depAddr, tfjsonPath("job_state"), knownvalue.StringExact("RUNNING")),
				expectAPI(func() error {
					if !met.Load() {
						return fmt.Errorf("the operator never reported the refusal")
					}
					return nil
				}),
			},
		}},
	})
}
