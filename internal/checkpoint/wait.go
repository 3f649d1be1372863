package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrNoNewCheckpoint: no checkpoint completed after the change before the
// wait ended.
var ErrNoNewCheckpoint = errors.New("no checkpoint completed since the change")

// NewCheckpoint is what WaitNew waits for: a checkpoint of JobID under
// Bucket/Dir completed after the change. After is the newest checkpoint
// id of that job before the change (0 for none, or for a job id the change
// gave the job anew): Flink numbers a job's checkpoints on from the last
// one it restored (CheckpointCoordinator, CompletedCheckpointStore's
// highest id + 1), so a higher id is a checkpoint of the new spec.
type NewCheckpoint struct {
	Bucket, Dir, JobID string
	After              int64
	// Every is the poll interval; CallTimeout bounds each S3 call.
	Every, CallTimeout time.Duration
}

// WaitNew polls until a checkpoint newer than w.After has completed (its
// _metadata there) and its _metadata reads, and returns it with what it
// records. still runs at each poll (e.g. to end the wait on a job that
// failed); its error ends the wait. At ctx's end the error wraps
// ErrNoNewCheckpoint and names the newest checkpoint seen.
func WaitNew(ctx context.Context, c S3Reader, w NewCheckpoint, still func(context.Context) error) (*Checkpoint, *Metadata, error) {
	var seen *Checkpoint
	var lastErr error
	for {
		cp, meta, err := newCheckpoint(ctx, c, w)
		switch {
		case err == nil && meta != nil:
			return cp, meta, nil
		case err != nil:
			lastErr = err
		default:
			lastErr, seen = nil, cp
		}
		if still != nil {
			if err := still(ctx); err != nil {
				return nil, nil, err
			}
		}
		select {
		case <-ctx.Done():
			what := "none"
			if seen != nil {
				what = fmt.Sprintf("%s (id %d, the change's baseline %d)", seen.Path, seen.ID, w.After)
			}
			err := fmt.Errorf("%w: job %s, under s3://%s/%s; the newest completed checkpoint of the job is %s", ErrNoNewCheckpoint, w.JobID, w.Bucket, w.Dir, what)
			if lastErr != nil {
				err = fmt.Errorf("%w (the last read failed: %v)", err, lastErr)
			}
			return nil, nil, err
		case <-time.After(w.Every):
		}
	}
}

// newCheckpoint is one poll: the newest completed checkpoint of the job,
// and its _metadata when it is newer than w.After (nil otherwise).
func newCheckpoint(ctx context.Context, c S3Reader, w NewCheckpoint) (*Checkpoint, *Metadata, error) {
	cctx, cancel := context.WithTimeout(ctx, w.CallTimeout)
	defer cancel()
	cp, err := Latest(cctx, c, w.Bucket, w.Dir, w.JobID)
	if err != nil || cp == nil || cp.ID <= w.After {
		return cp, nil, err
	}
	meta, err := ReadMetadataAt(cctx, c, cp.Path)
	if err != nil {
		return cp, nil, fmt.Errorf("reading %s: %w", cp.MetadataPath, err)
	}
	return cp, meta, nil
}
