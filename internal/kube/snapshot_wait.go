package kube

import "errors"

// SnapshotWaitEnd is what a wait for a new FlinkStateSnapshot (WaitSnapshot)
// ended with, in the terms a flinkstate_snapshot create acts on.
type SnapshotWaitEnd int

const (
	// SnapshotDone: COMPLETED with a path, which a deployment can restore.
	SnapshotDone SnapshotWaitEnd = iota
	// SnapshotDoneWithoutPath: COMPLETED without a path. For a
	// checkpoint-type snapshot the operator records the path Flink reports,
	// which can be empty (StateSnapshotObserver.handleCheckpoint,
	// flink-kubernetes-operator release-1.15.0): nothing to restore from.
	SnapshotDoneWithoutPath
	// SnapshotRefusedByOperator: the operator's validator refused it
	// (ErrSnapshotRefused): no status is written and nothing was
	// triggered, so deleting the object loses nothing.
	SnapshotRefusedByOperator
	// SnapshotGaveUp: the operator ended it FAILED or ABANDONED
	// (FlinkStateSnapshotStatus.State: an error during the snapshot, or the
	// job failed or was upgraded under it); it is never retried.
	SnapshotGaveUp
	// SnapshotNotEnded: the wait ran out or the API server did not answer;
	// the operator may still complete it.
	SnapshotNotEnded
)

// ClassifySnapshotWait classifies the end of WaitSnapshot, which returned
// st and err.
func ClassifySnapshotWait(st SnapshotStatus, err error) SnapshotWaitEnd {
	switch {
	case err == nil && st.Path == "":
		return SnapshotDoneWithoutPath
	case err == nil:
		return SnapshotDone
	case errors.Is(err, ErrSnapshotRefused):
		return SnapshotRefusedByOperator
	case st.State == SnapshotFailed || st.State == SnapshotAbandoned:
		return SnapshotGaveUp
	}
	return SnapshotNotEnded
}

// Ended tells whether the operator is done with the snapshot: it completed
// or gave up. One it refused may still be taken once what it refers to
// exists (the validator runs again each reconcile), and one not ended may
// still complete.
func (e SnapshotWaitEnd) Ended() bool {
	return e == SnapshotDone || e == SnapshotDoneWithoutPath || e == SnapshotGaveUp
}
