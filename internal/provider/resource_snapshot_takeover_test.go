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
// of a snapshot in ns that moves it to state right before it writes its
// status, or its labels (testbed.Faults.SnapshotWritePause), and returns once it has stopped
// there; release lets it go on (once, whoever calls it; the test's end
// does too).
func pauseSnapshotWrite(t *testing.T, op *testbed.Operator, state string, beforeLabels bool) (held string, release func()) {
	t.Helper()
	heldC, releaseC := make(chan string), make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(releaseC) }) }
	t.Cleanup(release)
	op.SetFaults(func(f *testbed.Faults) {
		f.Down = false
		f.SnapshotWritePause = &testbed.WritePause{State: state, BeforeLabels: beforeLabels, Held: heldC, Release: releaseC}
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
// held right before its status write, then the operator writes, and the
// wait and the mark's removal follow as in the create. Each time the job
// has exactly one savepoint more, the one the snapshot reports.
func TestAccSnapshot_takeOverWhileOperatorReconciles(t *testing.T) {
	takeOverWhileHeld(t, false)
}

// The same, the operator held right before its label patch, which is
// conditional on the resourceVersion it read (as fabric8's edit is): any
// write to the snapshot by the take-over would make it fail with a
// conflict, and the operator would count a failure and trigger the
// savepoint again (testbed's updateSnapshotLabels). The take-over writes
// nothing while the snapshot is not COMPLETED (kube.SnapshotClaims): one
// savepoint each time, and no failure recorded.
func TestAccSnapshot_takeOverWhileOperatorPatchesLabels(t *testing.T) {
	takeOverWhileHeld(t, true)
}

func takeOverWhileHeld(t *testing.T, beforeLabels bool) {
	skipUnlessAcc(t)
	t.Parallel()
	ns := testNamespace(t)
	op := startOperator(t, ns)
	live := runningJob(t, ns, "orders", map[string]any{"execution.checkpointing.savepoint-dir": snapSavepointDir})
	jobID := kube.ReadDeploymentStatus(live).JobID
	ctx, dyn := context.Background(), testKube(t).Dynamic
	var claims kube.SnapshotClaims
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
		held, release := pauseSnapshotWrite(t, op, state, beforeLabels)
		if held != left.GetName() {
			t.Fatalf("run %d: the operator stopped on FlinkStateSnapshot %s, want %s", i, held, left.GetName())
		}
		got, err := kube.PendingSnapshotCreate(ctx, dyn, want, "take-over", &claims)
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
		// As the create ends: the mark goes from the object as it is now.
		now, err := kube.GetSnapshot(ctx, dyn, ns, got.GetName())
		if err == nil {
			err = kube.ClearPendingCreate(ctx, dyn, now)
		}
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if n := savepointsOfJob(t, snapSavepointDir, jobID) - before; n != 1 || st.Failures != 0 {
			t.Errorf("run %d (operator held before writing %s): %d savepoints of job %s taken and %d failures (%s), want exactly one and none (the snapshot reports %s)",
				i, state, n, jobID, st.Failures, st.Error, st.Path)
		}
	}
}
