package provider

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// The real operator's admission webhook (the chart's default: installed
// with the operator when cert-manager is), registered for the test's
// namespace by testbed.StartRealWebhook with the operator's default
// configuration enabling rollbacks. The API server refuses the create
// itself, with the validator's message; the provider reports it and keeps
// nothing in state: nothing was stored, so nothing needs deleting.
// Without the jars it skips saying why; CI runs the model's side of the
// same refusal (TestAccDeployment_rejectedCreateFailsAndLeavesNothing).
func TestAccRealOperator_webhookRefusesCreate(t *testing.T) {
	skipUnlessAcc(t)
	if _, err := testbed.OperatorDir(); err != nil {
		if errors.Is(err, testbed.ErrNoOperatorJars) {
			t.Skipf("real operator skipped: %v", err)
		}
		t.Fatal(err)
	}
	t.Parallel()
	ns := testNamespace(t)
	root, env := loadTestbed(t)
	wh, err := testbed.StartRealWebhook(context.Background(), root, env, testbed.RealOperatorOptions{
		Namespaces: []string{ns}, Conf: map[string]string{"kubernetes.operator.deployment.rollback.enabled": "true"}, Logf: t.Logf})
	if errors.Is(err, testbed.ErrNoNetns) {
		t.Skipf("the webhook runs in a network namespace of its own: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(wh.Log)
			t.Logf("webhook log: %s (%d bytes)", wh.Log, len(b))
		}
		wh.Stop()
	})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkDeploymentGone(t, ns),
		Steps: []resource.TestStep{
			{
				Config:      rollbackWithoutHA(ns, "false"),
				ExpectError: errorRE(`admission webhook "validationwebhook.flink.apache.org" denied the request`, "HA must be enabled for rollback support", "nothing changed in the cluster"),
			},
			{
				// Nothing was stored and nothing is in state: the next
				// plan is a create again.
				PreConfig: func() {
					if _, err := getDeployment(t, ns, "orders"); err == nil {
						t.Fatalf("the refused FlinkDeployment is in %s", ns)
					}
				},
				Config:             rollbackWithoutHA(ns, "false"),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
		},
	})
}
