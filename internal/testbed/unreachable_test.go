package testbed

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// timeline logs every change of a FlinkDeployment's and a
// FlinkStateSnapshot's user-visible status, with the time since start,
// until stop is called; it returns the lines.
func (b *bed) timeline(t *testing.T, deployment, snapshot string) (stop func() []string) {
	start := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan []string)
	go func() {
		var lines []string
		last := map[string]string{}
		note := func(key, s string) {
			if last[key] != s {
				last[key] = s
				l := fmt.Sprintf("%5.1fs %s %s", time.Since(start).Seconds(), key, s)
				lines = append(lines, l)
				t.Log(l)
			}
		}
		for ctx.Err() == nil {
			if d, err := b.dyn.Resource(kube.FlinkDeploymentGVR).Namespace(b.ns).Get(ctx, deployment, metav1.GetOptions{}); err == nil {
				st := readDeploymentStatus(d)
				lc, _, _ := unstructured.NestedString(d.Object, "status", "lifecycleState")
				note("deployment", fmt.Sprintf("job %s, lifecycle %s, JobManager %s, error %q", st.JobState, lc, st.JMStatus, st.Error))
				evs, _ := kube.ObjectEvents(ctx, b.dyn, d)
				for _, e := range evs {
					note("deployment event "+e.Reason+" "+e.Message, e.Type)
				}
			}
			if snapshot != "" {
				if s, err := b.dyn.Resource(kube.FlinkStateSnapshotGVR).Namespace(b.ns).Get(ctx, snapshot, metav1.GetOptions{}); err == nil {
					st := readSnapshotStatus(s)
					note("snapshot", fmt.Sprintf("%s, failures %d, error %q", st.State, st.Failures, st.Error))
					evs, _ := kube.ObjectEvents(ctx, b.dyn, s)
					for _, e := range evs {
						note("snapshot event "+e.Reason+" "+e.Message, e.Type)
					}
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(250 * time.Millisecond):
			}
		}
		done <- lines
	}()
	return func() []string { cancel(); return <-done }
}

// Issue 36, row 9: the final savepoint the provider asks for on destroy
// (kube.FinalSavepointObject: a CANONICAL savepoint, backoffLimit
// kube.FinalSavepointRetries) of a job whose JobManager stopped answering
// while its pod stays Running and Ready (a hung JVM: Node.Freeze on the
// real operator, Faults.JobManagerUnreachable on the model).
func TestDifferential_finalSavepointUnreachable(t *testing.T) {
	t.Run("model", func(t *testing.T) {
		b := operatorsUnderTest(t)[0].bed(t, nil)
		// The client timeout, shortened from the real operator's 10 s.
		b.model.SetClientTimeout(500 * time.Millisecond)
		finalSavepointUnreachable(t, b, func() { b.model.SetFaults(func(f *Faults) { f.JobManagerUnreachable = true }) })
	})
	t.Run("real", func(t *testing.T) {
		s := newRealStack(t, nil)
		finalSavepointUnreachable(t, s.bed, func() {
			if err := s.node.Freeze(s.ns, "orders"); err != nil {
				t.Fatal(err)
			}
		})
	})
}

func finalSavepointUnreachable(t *testing.T, b *bed, freeze func()) {
	ctx := context.Background()
	b.createDeployment(t, "orders", modeSavepoint, nil)
	b.runningAt(t, "orders")
	freeze()
	created, err := kube.CreateSnapshot(ctx, b.dyn, b.ns, kube.FinalSavepointObject(b.ns, "orders", "CANONICAL", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	name := created.GetName()
	start := time.Now()
	stop := b.timeline(t, "orders", name)
	defer func() { stop() }()
	wait := b.wait
	b.wait = 5 * time.Minute
	st := b.snapshotEnds(t, name)
	b.wait = wait
	took := time.Since(start)
	t.Logf("the snapshot ended after %s: %+v", took.Round(100*time.Millisecond), st)
	// The trigger timed out (a ReconciliationException of a
	// TimeoutException, in a Warning SavepointError event); the retry found
	// the job no longer RUNNING and abandoned the snapshot.
	notRunning := "Secondary resource orders (FlinkDeployment) for savepoint " + name + " is not running"
	if st.State != kube.SnapshotAbandoned || st.Error != notRunning || st.Failures < 1 {
		t.Errorf("final savepoint: %+v, want ABANDONED %q after at least one failure", st, notRunning)
	}
	if ev := b.eventUntil(t, name, "SavepointError", func(kube.OperatorEvent) bool { return true }); ev.Type != "Warning" ||
		kube.OperatorMessage(ev.Message) != "java.util.concurrent.TimeoutException (org.apache.flink.kubernetes.operator.exception.ReconciliationException)" {
		t.Errorf("SavepointError event %+v", ev)
	}
	if ev := b.eventUntil(t, name, "SnapshotAbandoned", func(kube.OperatorEvent) bool { return true }); ev.Type != "Warning" || ev.Message != notRunning {
		t.Errorf("SnapshotAbandoned event %+v", ev)
	}
	// The deployment: the job RECONCILING (JobStatusObserver
	// .ifRunningMoveToReconciling), the JobManager READY or
	// DEPLOYED_NOT_READY (it flips between the two: its pod stays Ready
	// and its port open, its REST API times out), no error, lifecycle
	// STABLE.
	obj := b.get(t, true, "orders")
	dst := readDeploymentStatus(obj)
	lc, _, _ := unstructured.NestedString(obj.Object, "status", "lifecycleState")
	if dst.JobState != flinkReconciling || (dst.JMStatus != jmReady && dst.JMStatus != jmDeployedNotReady) || dst.Error != "" || lc != "STABLE" {
		t.Errorf("deployment after the abandoned savepoint: job %s, JobManager %s, lifecycle %s, error %q", dst.JobState, dst.JMStatus, lc, dst.Error)
	}
	// The trigger waited one client timeout (kubernetes.operator.flink.client.timeout,
	// 10 s on the real operator: KubernetesOperatorConfigOptions) before it
	// failed; the retry came after the snapshot controller's back-off (10 s
	// × 2^0 on the real one: FlinkStateSnapshotController.updateErrorStatus).
	// The real one took 20.5 s.
	timeout := 10 * time.Second
	if b.model != nil {
		timeout = b.model.ClientTimeout
	}
	if took < timeout {
		t.Errorf("the operator gave up after %s, before one client timeout (%s)", took, timeout)
	}
}
