package kube

import (
	"fmt"
	"testing"
)

func TestClassifySnapshotWait(t *testing.T) {
	timeout := fmt.Errorf("%w: FlinkStateSnapshot ns/x after 1m0s: last state IN_PROGRESS", ErrSnapshotTimeout)
	for name, c := range map[string]struct {
		st   SnapshotStatus
		err  error
		want SnapshotWaitEnd
	}{
		"completed":                     {st: SnapshotStatus{State: SnapshotCompleted, Path: "s3://b/sp/savepoint-1"}, want: SnapshotDone},
		"completed, no path":            {st: SnapshotStatus{State: SnapshotCompleted}, want: SnapshotDoneWithoutPath},
		"refused":                       {err: fmt.Errorf("%w: Target for snapshot ns/x was not found", ErrSnapshotRefused), want: SnapshotRefusedByOperator},
		"failed":                        {st: SnapshotStatus{State: SnapshotFailed, Failures: 2}, err: fmt.Errorf("FlinkStateSnapshot ns/x is FAILED"), want: SnapshotGaveUp},
		"abandoned":                     {st: SnapshotStatus{State: SnapshotAbandoned}, err: fmt.Errorf("FlinkStateSnapshot ns/x is ABANDONED"), want: SnapshotGaveUp},
		"timed out in progress":         {st: SnapshotStatus{State: SnapshotInProgress}, err: timeout, want: SnapshotNotEnded},
		"timed out, no status":          {err: timeout, want: SnapshotNotEnded},
		"interrupted":                   {st: SnapshotStatus{State: SnapshotTriggerPending}, err: ErrInterrupted, want: SnapshotNotEnded},
		"refused before a failed state": {st: SnapshotStatus{State: SnapshotFailed}, err: fmt.Errorf("%w: refused", ErrSnapshotRefused), want: SnapshotRefusedByOperator},
	} {
		if got := ClassifySnapshotWait(c.st, c.err); got != c.want {
			t.Errorf("%s: %d, want %d", name, got, c.want)
		}
	}
}
