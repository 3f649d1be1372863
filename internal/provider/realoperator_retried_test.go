package provider

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"k8s.io/client-go/dynamic"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// TestAccRealOperator_retriedReconcileRecovers is issue 36's row 5 on the
// real operator 1.15.0: while terraform creates a deployment (wait_for =
// "running"), the API server refuses the JobManager Deployment the
// operator creates (a ValidatingAdmissionPolicy, testbed
// .RefuseDeploymentCreates). The operator records a ReconciliationException
// and retries with back-off; the provider's wait reads that as progress,
// not as the end (kube.retriedError). The refusal is lifted after a while,
// the operator's next attempt deploys, and the apply succeeds with the job
// running, no spec change needed.
func TestAccRealOperator_retriedReconcileRecovers(t *testing.T) {
	requireOperatorJars(t)
	rf := newRealFlink(t)
	ns := testNamespace(t)
	startRealOperator(t, rf, ns)
	bucket, role := randName("rr-"), randName("rr-")
	oidc := testOIDCProvider(t)
	cfg := realFlinkOperatorConfig(bucket, oidc, role, ns, "", "")
	ctx := context.Background()
	dyn := testKube(t).Dynamic
	var lifted sync.WaitGroup
	var liftErr error
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			PreConfig: func() {
				lift, err := testbed.RefuseDeploymentCreates(ctx, dyn, ns, "deployments are paused in this namespace")
				if err != nil {
					t.Fatal(err)
				}
				// Lifted once the operator has met the refusal (its Error
				// event on the FlinkDeployment) and kept it ~20 s.
				lifted.Add(1)
				go func() {
					defer lifted.Done()
					defer func() { liftErr = lift(ctx) }()
					for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
						if ev, err := refusedEvent(ctx, dyn, ns); err == nil && ev != nil {
							time.Sleep(20 * time.Second)
							return
						}
					}
				}()
			},
			Config: cfg,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("flinkstate_deployment.counts", tfjsonpath.New("job_state"), knownvalue.StringExact("RUNNING")),
				expectAPI(func() error {
					lifted.Wait()
					if liftErr != nil {
						return liftErr
					}
					ev, err := refusedEvent(ctx, dyn, ns)
					if err != nil {
						return err
					}
					if ev == nil {
						return fmt.Errorf("the operator never met the refusal: no Error event on %s/counts", ns)
					}
					t.Logf("the operator met the refusal and recovered: %+v", *ev)
					return nil
				}),
			},
		}},
	})
}

// refusedEvent is the operator's Warning event on the FlinkDeployment
// counts that quotes the API server's refusal, nil while there is none.
func refusedEvent(ctx context.Context, dyn dynamic.Interface, ns string) (*kube.OperatorEvent, error) {
	obj, err := kube.GetFlinkDeployment(ctx, dyn, ns, "counts")
	if err != nil {
		return nil, err
	}
	evs, err := kube.ObjectEvents(ctx, dyn, obj)
	if err != nil {
		return nil, err
	}
	for _, e := range evs {
		if e.Type == "Warning" && strings.Contains(e.Message, "deployments are paused in this namespace") {
			return &e, nil
		}
	}
	return nil, nil
}
