package testbed

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// Issue 36, row 5: a reconcile error the operator retries, then recovers
// from without a spec change. The fault is real: the API server refuses
// the JobManager Deployment's create (RefuseDeploymentCreates) for a while.
func TestDifferential_retriedReconcileRecovers(t *testing.T) {
	t.Run("model", func(t *testing.T) {
		b := operatorsUnderTest(t)[0].bed(t, nil)
		retriedReconcileRecovers(t, b, func() func() {
			b.model.SetFaults(func(f *Faults) { f.DeploymentCreateRefused = refusedDeployments })
			return func() { b.model.SetFaults(func(f *Faults) { f.DeploymentCreateRefused = "" }) }
		})
	})
	t.Run("real", func(t *testing.T) {
		s := newRealStack(t, nil)
		retriedReconcileRecovers(t, s.bed, func() func() {
			ctx := context.Background()
			lift, err := RefuseDeploymentCreates(ctx, s.dyn, s.ns, refusedDeployments)
			if err != nil {
				t.Fatal(err)
			}
			return func() {
				if err := lift(ctx); err != nil {
					t.Fatal(err)
				}
			}
		})
	})
}

const refusedDeployments = "deployments are paused in this namespace"

func retriedReconcileRecovers(t *testing.T, b *bed, refuse func() (lift func())) {
	lift := refuse()
	b.createDeployment(t, "orders", modeSavepoint, nil)
	stop := b.timeline(t, "orders", "")
	defer func() { stop() }()
	// While the API server refuses: the operator says so in a Warning
	// Error event and keeps a ReconciliationException in status.error, and
	// every status the provider's wait reads in the meantime is progress,
	// not an end (kube.DeploymentReady: no error).
	ev := b.eventOn(t, true, "orders", "Error", func(e kube.OperatorEvent) bool { return strings.Contains(e.Message, refusedDeployments) })
	if ev.Type != "Warning" || !strings.Contains(ev.Message, `Could not create Kubernetes cluster "orders"`) {
		t.Errorf("Error event %+v", ev)
	}
	var sawError bool
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		obj := b.get(t, true, "orders")
		st, _, ready, err := kube.DeploymentReady(obj, "running")
		if err != nil || ready {
			t.Fatalf("while the operator retries, the wait read ready=%v err=%v (lifecycle %s, error %q)", ready, err, st.LifecycleState, st.Error)
		}
		if st.Error != "" {
			sawError = true
			if !strings.Contains(st.Error, `"type":"org.apache.flink.kubernetes.operator.exception.ReconciliationException"`) ||
				!strings.Contains(kube.OperatorMessage(st.Error), `Could not create Kubernetes cluster \"orders\"`) &&
					!strings.Contains(kube.OperatorMessage(st.Error), `Could not create Kubernetes cluster "orders"`) {
				t.Fatalf("status.error while refused: %s", st.Error)
			}
		}
	}
	if !sawError {
		t.Error("no ReconciliationException in status.error while the API server refused")
	}
	lift()
	// Recovered without a spec change.
	obj := b.stableAt(t, "orders")
	if st := readDeploymentStatus(obj); st.Error != "" || obj.GetGeneration() != 1 {
		t.Errorf("after recovery: generation %d, error %q", obj.GetGeneration(), st.Error)
	}
	if _, _, ready, err := kube.DeploymentReady(obj, "running"); err != nil || !ready {
		t.Errorf("after recovery the wait reads ready=%v err=%v", ready, err)
	}
	// Every attempt, the refused ones and the one that went through, was
	// announced by a Normal Submit event (ApplicationReconciler.deploy,
	// MSG_SUBMIT, written before the cluster is submitted): one Event,
	// counted once per attempt.
	if ev := b.eventOn(t, true, "orders", "Submit", func(e kube.OperatorEvent) bool { return e.Count >= 2 }); ev.Type != "Normal" || ev.Message != "Starting deployment" {
		t.Errorf("Submit event %+v", ev)
	}
}

// stableAt waits until the job runs at the current generation with the
// lifecycle STABLE.
func (b *bed) stableAt(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	return b.until(t, true, name, "STABLE and RUNNING", func(o *unstructured.Unstructured) bool {
		lc, _, _ := unstructured.NestedString(o.Object, "status", "lifecycleState")
		st := readDeploymentStatus(o)
		return lc == "STABLE" && st.JobState == flinkRunning && st.ObservedGeneration == o.GetGeneration()
	})
}
