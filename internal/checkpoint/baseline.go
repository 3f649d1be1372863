package checkpoint

import (
	"context"
	"fmt"
)

// Baseline is what wait_for = "checkpoint" compares with: the job id the
// live object reports before the change and the newest completed
// checkpoint id of that job (0 for none; -1: it could not be read). A job
// that keeps its id across the change (a last-state upgrade: the operator
// resumes the same job from its HA metadata, and rotates the job id only
// on a deploy that is not last-state: flink-kubernetes-operator
// release-1.15.0, ApplicationReconciler.setJobIdIfNecessary) numbers its
// checkpoints on from there.
type Baseline struct {
	JobID string
	After int64
}

// ReadBaseline reads the baseline of jobID under bucket/dir before the
// change; warning says, worded by describe, that it could not be read
// (After -1), and what the wait then does.
func ReadBaseline(ctx context.Context, c S3API, bucket, dir, jobID string, describe func(error) string) (b Baseline, warning string) {
	cp, err := Latest(ctx, c, bucket, dir, jobID)
	switch {
	case err != nil:
		return Baseline{JobID: jobID, After: -1}, BaselineWarning(describe(err), false)
	case cp == nil:
		return Baseline{JobID: jobID}, ""
	}
	return Baseline{JobID: jobID, After: cp.ID}, ""
}

// BaselineWarning is the warning when the baseline could not be read
// (why): before S3 was asked (noClient: no AWS client), or by S3.
func BaselineWarning(why string, noClient bool) string {
	if noClient {
		return "wait_for = \"checkpoint\": " + why + "; the wait takes any completed checkpoint of a new job id, and of this one only its next one."
	}
	return "wait_for = \"checkpoint\": " + why + "; the wait waits for a checkpoint of the job it finds running after the change."
}

// AfterFor is the checkpoint id a checkpoint of jobID, the job the
// operator reports after the change, must exceed: the baseline's for the
// same job, 0 for a new one. A baseline that could not be read (-1) is
// read now (within ctx): a checkpoint completed from now on is new.
func (b Baseline) AfterFor(ctx context.Context, c S3API, bucket, dir, jobID string) int64 {
	after := int64(0)
	if jobID == b.JobID {
		after = b.After
	}
	if after >= 0 {
		return after
	}
	if cp, err := Latest(ctx, c, bucket, dir, jobID); err == nil && cp != nil {
		return cp.ID
	}
	return 0
}

// WaitUnready says (cause and what to do, "" when ready) that wait_for =
// "checkpoint" cannot start: it needs the job id the operator reports
// (jobID) and an s3:// checkpoint directory (store: StoreOf found one).
func WaitUnready(jobID string, store bool) (cause, todo string) {
	if store && ValidJobID(jobID) {
		return "", ""
	}
	return fmt.Sprintf("wait_for = \"checkpoint\" needs a job id (the operator reports %q) and an s3:// checkpoint directory (execution.checkpointing.dir)", jobID),
		"Set wait_for = \"running\", or give the job a checkpoint directory (the state block)."
}

// ReadNewest reads the newest completed checkpoint of jobID under
// bucket/dir and its _metadata: what a last-state upgrade restores, and
// what records the operators a savepoint of the job will. meta is nil when
// there is no completed checkpoint; why says, worded by describe, that a
// read failed.
func ReadNewest(ctx context.Context, c S3Reader, bucket, dir, jobID string, describe func(error) string) (cp *Checkpoint, meta *Metadata, why string) {
	cp, err := Latest(ctx, c, bucket, dir, jobID)
	if err != nil {
		return nil, nil, describe(err)
	}
	if cp == nil {
		return nil, nil, ""
	}
	if meta, err = ReadMetadataAt(ctx, c, cp.Path); err != nil {
		return nil, nil, fmt.Sprintf("reading %s: %s", cp.MetadataPath, describe(err))
	}
	return cp, meta, ""
}
