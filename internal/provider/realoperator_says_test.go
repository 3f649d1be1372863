package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// Issue 36's rows that need no running job, through terraform on the real
// operator 1.15.0 (the same configurations and expectations as the model's
// tests in operator_says_test.go). No node runs the JobManager pods here:
// a JobManager stays DEPLOYING, which is row 6's situation; the garbage
// collector lets the operator's foreground deletes finish.

// startRealOperatorAlone runs the real operator on ns, with conf over the
// chart's configuration, and kube-controller-manager's garbage collector;
// it skips, saying why, without the jars.
func startRealOperatorAlone(t *testing.T, ns string, conf map[string]string) {
	t.Helper()
	requireOperatorJars(t)
	useFixtureBucket(t)
	root, env := loadTestbed(t)
	ctx := context.Background()
	if err := testbed.EnsureControllerManager(ctx, root, env, t.Logf); err != nil {
		t.Fatal(err)
	}
	all := map[string]string{"kubernetes.operator.reconcile.interval": "5 s"}
	for k, v := range conf {
		all[k] = v
	}
	op, err := testbed.StartRealOperator(ctx, root, env, testbed.RealOperatorOptions{Namespaces: []string{ns}, Logf: t.Logf, Conf: all})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("real operator log (tail):\n%s", fileTail(op.Log, 60))
		}
		op.Stop()
	})
}

// Row 1 on the real operator without its webhook: the create its validator
// refuses fails at once with the validator's message and is deleted again;
// the next plan is a create, and the fixed configuration deploys.
func TestAccRealOperator_rejectedCreateFailsAndLeavesNothing(t *testing.T) {
	requireOperatorJars(t)
	ns := testNamespace(t)
	startRealOperatorAlone(t, ns, map[string]string{"kubernetes.operator.deployment.rollback.enabled": "true"})
	resource.Test(t, rejectedCreateCase(t, ns))
}

// Row 4 on the real operator: a snapshot of a FlinkDeployment that does not
// exist fails at once with the operator's ValidationError and is deleted
// again (the provider releases the finalizer the operator would keep).
func TestAccRealOperator_snapshotTargetMissingFailsAtOnce(t *testing.T) {
	requireOperatorJars(t)
	ns := testNamespace(t)
	startRealOperatorAlone(t, ns, nil)
	resource.Test(t, snapshotTargetMissingCase(t, ns))
}

// Row 8 on the real operator: a snapshot it never gave a status is
// destroyed (its cleanup throws on the missing status and keeps the
// finalizer; the provider releases it).
func TestAccRealOperator_snapshotDestroyWithoutStatus(t *testing.T) {
	requireOperatorJars(t)
	ns := testNamespace(t)
	startRealOperatorAlone(t, ns, nil)
	resource.Test(t, snapshotDestroyWithoutStatusCase(t, ns))
}

// Row 6 on the real operator: an upgrade, then a suspend, of a job whose
// JobManager never became ready (no node runs it): each wait runs to its
// end and says the operator waits for an upgradeable state, with the ways
// out. The real operator reconciles every 5 s here, so the waits get 30 s.
func TestAccRealOperator_upgradeNeverReadySaysOperatorWaits(t *testing.T) {
	requireOperatorJars(t)
	ns := testNamespace(t)
	startRealOperatorAlone(t, ns, nil)
	resource.Test(t, upgradeNeverReadyCase(ns, "30s"))
}
