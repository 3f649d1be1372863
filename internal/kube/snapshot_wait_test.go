package kube

import (
	"fmt"
	"testing"
)

func TestClassifySnapshotWait(t *testing.T) {
	timeout := fmt.Errorf("%w: FlinkStateSnapshot ns/x after 1m0s: last state IN_PROGRESS", ErrSnapshotTimeout)
	for name, c := range map[string]struct {
		st    SnapshotStatus
		err   error
		want  SnapshotWaitEnd
		ended bool
	}{
		"completed":             {st: SnapshotStatus{State: SnapshotCompleted, Path: "s3://b/sp/savepoint-1"}, want: SnapshotDone, ended: true},
		"completed, no path":    {st: SnapshotStatus{State: SnapshotCompleted}, want: SnapshotDoneWithoutPath, ended: true},
		"refused":               {err: fmt.Errorf("%w: Target for snapshot ns/x was not found", ErrSnapshotRefused), want: SnapshotRefusedByOperator},
		"failed":                {st: SnapshotStatus{State: SnapshotFailed, Failures: 2}, err: fmt.Errorf("FlinkStateSnapshot ns/x is FAILED"), want: SnapshotGaveUp, ended: true},
		"abandoned":             {st: SnapshotStatus{State: SnapshotAbandoned}, err: fmt.Errorf("FlinkStateSnapshot ns/x is ABANDONED"), want: SnapshotGaveUp, ended: true},
		"timed out in progress": {st: SnapshotStatus{State: SnapshotInProgress}, err: timeout, want: SnapshotNotEnded},
		"timed out, no status":  {err: timeout, want: SnapshotNotEnded},
		"interrupted":           {st: SnapshotStatus{State: SnapshotTriggerPending}, err: ErrInterrupted, want: SnapshotNotEnded},
	} {
		got := ClassifySnapshotWait(c.st, c.err)
		if got != c.want {
			t.Errorf("%s: %d, want %d", name, got, c.want)
		}
		if got.Ended() != c.ended {
			t.Errorf("%s: Ended %v, want %v", name, got.Ended(), c.ended)
		}
	}
}
