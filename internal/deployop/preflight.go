package deployop

import (
	"context"
	"time"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/preflight"
)

// PreflightUpgrade is the restore pre-flight of an update of a running
// stateful job, before it is written (preflight.Upgrade, when it Applies
// and both configurations are known: nil is one that did not convert):
// within d, it reads the newest completed checkpoint of the running job
// (u.JobID, under the checkpoint directory of u.PriorConfig) and returns
// Flink's refusals of that restore (nothing is written then: the old job
// keeps running). A checkpoint that cannot be found or read skips the
// check with a warning (the update goes on); a job without a checkpoint
// directory or a completed checkpoint starts without checkpointed state:
// nothing to check.
func (e Env) PreflightUpgrade(ctx context.Context, u preflight.Upgrade, d time.Duration) []flinkconf.Finding {
	if !u.Applies() || u.PriorConfig == nil || u.PlannedConfig == nil {
		return nil
	}
	cp, meta, why := e.newest(ctx, u.PriorConfig, u.JobID, d)
	switch {
	case why != "":
		return []flinkconf.Finding{u.Skipped(why)}
	case meta != nil:
		return u.Findings(cp.Path, meta)
	}
	return nil
}

// PreflightPath is the restore pre-flight on a restore from a path
// (preflight.Path; none without a target or a configuration, nil when it
// did not convert): within d, it reads the _metadata at p.Target, which
// the caller proved complete, and returns Flink's refusals of that
// restore (nothing is written then). An unreadable _metadata skips the
// check with a warning; without an S3 client it returns nothing (the check
// of the restore target reported it).
func (e Env) PreflightPath(ctx context.Context, p preflight.Path, d time.Duration) []flinkconf.Finding {
	if p.Target == "" || p.Config == nil {
		return nil
	}
	s3, err := e.S3(ctx)
	if err != nil {
		return nil
	}
	actx, cancel := e.Bound(ctx, d)
	defer cancel()
	meta, err := checkpoint.ReadMetadataAt(actx, s3, p.Target)
	if err != nil {
		return []flinkconf.Finding{p.Skipped(e.Words(actx, err))}
	}
	return p.Findings(meta)
}

// PreflightHandover is the pre-flight of a new job started from a savepoint
// of the running one (preflight.Handover): within d, it reads the newest
// completed checkpoint of the running job (jobID, under the checkpoint
// directory of h.PriorConfig), which records the operators the savepoint
// will, and returns Flink's refusals of restoring it with the new
// configuration (none when a configuration did not convert: nil). An
// unreadable checkpoint skips the check with a warning; a job with none
// has no state to refuse.
func (e Env) PreflightHandover(ctx context.Context, h preflight.Handover, jobID string, d time.Duration) []flinkconf.Finding {
	if h.PriorConfig == nil || h.PlannedConfig == nil {
		return nil
	}
	cp, meta, why := e.newest(ctx, h.PriorConfig, jobID, d)
	switch {
	case why != "":
		return []flinkconf.Finding{h.SkippedWarning(why)}
	case meta != nil:
		return h.Findings(cp.Path, meta)
	}
	return nil
}

// newest reads, within d, the newest completed checkpoint of job jobID
// under the checkpoint directory of cfg (checkpoint.StoreOf) and its
// _metadata (checkpoint.ReadNewest). meta is nil when there is nothing to
// read (no valid job id, no s3:// checkpoint directory, no completed
// checkpoint); why says, worded, that the S3 client or a read failed.
func (e Env) newest(ctx context.Context, cfg map[string]string, jobID string, d time.Duration) (cp *checkpoint.Checkpoint, meta *checkpoint.Metadata, why string) {
	bucket, dir, ok := checkpoint.StoreOf(cfg)
	if !ok || !checkpoint.ValidJobID(jobID) {
		return nil, nil, ""
	}
	s3, err := e.S3(ctx)
	if err != nil {
		return nil, nil, err.Error()
	}
	actx, cancel := e.Bound(ctx, d)
	defer cancel()
	return checkpoint.ReadNewest(actx, s3, bucket, dir, jobID, func(err error) string { return e.Words(actx, err) })
}
