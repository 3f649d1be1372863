package provider

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// takeOverRuns is how often TestAccSnapshot_takeOverWhileOperatorReconciles
// takes a killed create's snapshot over.
const takeOverRuns = 20

// pauseSnapshotWrite has the operator model stop its next reconciliation
// of a snapshot in ns that moves it to state right before it writes
// (testbed.Faults.SnapshotWritePause), and returns once it has stopped
// there; release lets it go on (once, whoever calls it; the test's end
// does too).
func pauseSnapshotWrite(t *testing.T, op *testbed.Operator, state string) (held string, release func()) {
	t.Helper()
	heldC, releaseC := make(chan string), make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(releaseC) }) }
	t.Cleanup(release)
	op.SetFaults(func(f *testbed.Faults) {
		f.Down = false
		f.SnapshotWritePause = &testbed.WritePause{State: state, Held: heldC, Release: releaseC}
	})
	select {
	case held = <-heldC:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the operator never reconciled a FlinkStateSnapshot to %s", state)
	}
	return held, release
}

// The take-over of a killed create's FlinkStateSnapshot, 20 times, each
// while the operator is in the middle of the reconciliation that triggers
// the savepoint or of the one that completes it (the moment CI met under
// load): kube.PendingSnapshotCreate finds the object while the operator is
// held right before its writes, then the operator writes, and the wait and
// the mark's removal follow as in the create. Each time the job has
// exactly one savepoint more, the one the snapshot reports.
//
// It proves the provider against the model's status write, which now is
// the real operator's. The real operator's label patch can still conflict
// with the claim (testbed's updateSnapshotLabels says how): the claim must
// not write to a snapshot the operator is still reconciling before this
// holds on the real operator too.
func TestAccSnapshot_takeOverWhileOperatorReconciles(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	ns := testNamespace(t)
	op := startOperator(t, ns)
	live := runningJob(t, ns, "orders", map[string]any{"execution.checkpointing.savepoint-dir": snapSavepointDir})
	jobID := kube.ReadDeploymentStatus(live).JobID
	ctx, dyn := context.Background(), testKube(t).Dynamic
	for i := 0; i < takeOverRuns; i++ {
		state := []string{kube.SnapshotInProgress, kube.SnapshotCompleted}[i%2]
		// What the killed apply's create had made when it died, before the
		// operator got to it (a configuration of its own each time).
		want := kube.SnapshotCreate{Namespace: ns, GenerateName: "orders-before-upgrade-",
			Spec:     kube.SnapshotSpec{DeploymentName: "orders", Type: "savepoint", FormatType: "CANONICAL", BackoffLimit: 1},
			Triggers: map[string]string{"run": strconv.Itoa(i)}, DeploymentUID: string(live.GetUID())}
		before := savepointsOfJob(t, snapSavepointDir, jobID)
		op.SetFaults(func(f *testbed.Faults) { f.Down = true })
		left, err := kube.CreateSnapshot(ctx, dyn, ns, want.Object("the-killed-apply"))
		if err != nil {
			t.Fatal(err)
		}
		held, release := pauseSnapshotWrite(t, op, state)
		if held != left.GetName() {
			t.Fatalf("run %d: the operator stopped on FlinkStateSnapshot %s, want %s", i, held, left.GetName())
		}
		got, err := kube.PendingSnapshotCreate(ctx, dyn, want, "take-over-"+strconv.Itoa(i))
		release()
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if got == nil || got.GetName() != left.GetName() {
			t.Fatalf("run %d: the take-over found %v, want FlinkStateSnapshot %s", i, got, left.GetName())
		}
		st, err := kube.WaitSnapshot(ctx, dyn, ns, got.GetName(), 2*time.Minute, 50*time.Millisecond)
		if err != nil {
			t.Fatalf("run %d (operator held before writing %s): %v", i, state, err)
		}
		if err := kube.ClearPendingCreate(ctx, dyn, got); err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if n := savepointsOfJob(t, snapSavepointDir, jobID) - before; n != 1 {
			t.Errorf("run %d (operator held before writing %s): %d savepoints of job %s taken, want exactly one (the snapshot reports %s)",
				i, state, n, jobID, st.Path)
		}
	}
}
