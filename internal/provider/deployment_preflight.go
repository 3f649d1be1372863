package provider

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/preflight"
)

// addNotices reports a domain package's findings: on their attribute, or
// on none when they name no path.
func addNotices(diags *diag.Diagnostics, fs ...flinkconf.Finding) {
	for _, f := range fs {
		switch {
		case len(f.Path) > 0:
			addFindings(diags, []flinkconf.Finding{f})
		case f.Severity == flinkconf.Error:
			diags.AddError(f.Summary, f.Detail)
		default:
			diags.AddWarning(f.Summary, f.Detail)
		}
	}
}

// preflightRestore runs the restore pre-flight of an update of a running
// stateful job (preflight.Upgrade) before it is written: it reads the
// newest completed checkpoint of the running job (the job_id attribute)
// and refuses the update when Flink would refuse that restore. Nothing is
// written then: the old job keeps running. When the checkpoint cannot be
// found or read, the update goes on with a warning.
func (r *deploymentResource) preflightRestore(ctx context.Context, plan, state *deploymentModel, unwritten []string, timeout time.Duration, diags *diag.Diagnostics) {
	u := preflight.Upgrade{Subject: plan.subject(), Prior: state.desired(ctx, unwritten), Planned: plan.desired(ctx, unwritten)}
	if diags.HasError() || !u.Applies() {
		return
	}
	var d diag.Diagnostics
	u.PriorConfig, u.PlannedConfig = stringMap(ctx, state.EffectiveConfig, &d), stringMap(ctx, plan.EffectiveConfig, &d)
	u.PreviousParallelism, u.Parallelism, u.JobID = int(state.Job.Parallelism.ValueInt64()), int(plan.Job.Parallelism.ValueInt64()), state.JobID.ValueString()
	if d.HasError() {
		return
	}
	cp, meta, why := r.newestCheckpoint(ctx, state, timeout)
	switch {
	case why != "":
		addNotices(diags, u.Skipped(why))
	case meta != nil: // else no job, checkpoint directory or completed checkpoint: the job starts without checkpointed state
		addNotices(diags, u.Findings(cp.Path, meta)...)
	}
}

// subject names the deployment in messages: "FlinkDeployment ns/name".
func (m *deploymentModel) subject() string {
	return "FlinkDeployment " + m.Namespace.ValueString() + "/" + m.Name.ValueString()
}

// preflightPath runs the restore pre-flight on a restore from a path
// (preflight.Path), target: job.initial_savepoint_path on a create or a
// redeploy, or the final savepoint a replacement carries (what names
// which). It runs after the path was proven complete (verifyRestoreTarget,
// verifyCarried) and reads its _metadata. Nothing is written when Flink
// would refuse the restore.
func (r *deploymentResource) preflightPath(ctx context.Context, plan *deploymentModel, target, what string, create, carried bool, timeout time.Duration, diags *diag.Diagnostics) {
	if diags.HasError() || plan.Job == nil || target == "" {
		return
	}
	var d diag.Diagnostics
	cfg := stringMap(ctx, plan.EffectiveConfig, &d)
	if d.HasError() || cfg == nil {
		return // unknown at this point: the rules need the configuration
	}
	a, err := r.meta.AWS(ctx)
	if err != nil {
		return // verifyRestoreTarget reported it
	}
	p := preflight.Path{Subject: plan.subject(), Target: target, What: what, Create: create, Carried: carried, Config: cfg,
		Parallelism: int(plan.Job.Parallelism.ValueInt64()), FlinkVersion: plan.FlinkVersion.ValueString()}
	actx, cancel := r.meta.boundAWS(ctx, timeout)
	defer cancel()
	meta, err := checkpoint.ReadMetadataAt(actx, a.S3, target)
	if err != nil {
		addNotices(diags, p.Skipped(awsErr(actx, err)))
		return
	}
	addNotices(diags, p.Findings(meta)...)
}

// preflightHandover is the pre-flight of a replacement that carries the
// job's state across: at plan, before the old job is stopped, it reads the
// newest completed checkpoint of the running job (state's job_id), which
// records the operators the final savepoint will record, and refuses the
// plan when Flink would refuse to restore that state with the new
// configuration (preflight.Handover).
func (r *deploymentResource) preflightHandover(ctx context.Context, plan, state *deploymentModel, diags *diag.Diagnostics) {
	if state == nil || state.Job == nil {
		return
	}
	r.preflightSavepointHandover(ctx, plan, state, state.finalSavepointFormat(ctx), savepointHandover{
		Subject: state.subject() + " is replaced",
		How:     "its job would be stopped with a final savepoint and the new deployment started from it",
		Skipped: "the create checks the savepoint itself",
	}, diags)
}

// savepointHandover words a handover through a savepoint of the running
// job for the pre-flight's messages (Subject, How, Skipped).
type savepointHandover = preflight.Handover

// preflightSavepointHandover is the pre-flight of a new job started from a
// savepoint of the running one (state's job), taken in format ("" for the
// deployment's own): preflight.Handover. An unreadable checkpoint skips the
// check with a warning; a job with none has no state to refuse.
func (b *resourceBase) preflightSavepointHandover(ctx context.Context, plan, state *deploymentModel, format string, h savepointHandover, diags *diag.Diagnostics) {
	if diags.HasError() || plan.Job == nil || state.Job == nil {
		return
	}
	var d diag.Diagnostics
	h.PriorConfig, h.PlannedConfig = stringMap(ctx, state.EffectiveConfig, &d), stringMap(ctx, plan.EffectiveConfig, &d)
	if d.HasError() || plan.EffectiveConfig.IsUnknown() || plan.Job.Parallelism.IsUnknown() {
		return
	}
	h.Parallelism, h.FlinkVersion, h.Format = int(plan.Job.Parallelism.ValueInt64()), plan.FlinkVersion.ValueString(), format
	cp, meta, why := b.newestCheckpoint(ctx, state, kube.RequestTimeout)
	switch {
	case why != "":
		addNotices(diags, h.SkippedWarning(why))
	case meta != nil:
		addNotices(diags, h.Findings(cp.Path, meta)...)
	}
}

// newestCheckpoint reads the newest completed checkpoint of m's job (its
// job_id, under its checkpoint directory) and its _metadata within d
// (checkpoint.ReadNewest). meta is nil when there is nothing to read (no
// job id, no s3:// checkpoint directory, no completed checkpoint); why
// says, worded, that a read failed.
func (r *resourceBase) newestCheckpoint(ctx context.Context, m *deploymentModel, d time.Duration) (cp *checkpoint.Checkpoint, meta *checkpoint.Metadata, why string) {
	bucket, dir, ok := m.checkpointStore(ctx)
	jobID := m.JobID.ValueString()
	if !ok || !checkpoint.ValidJobID(jobID) {
		return nil, nil, ""
	}
	a, err := r.meta.AWS(ctx)
	if err != nil {
		return nil, nil, err.Error()
	}
	actx, cancel := r.meta.boundAWS(ctx, d)
	defer cancel()
	return checkpoint.ReadNewest(actx, a.S3, bucket, dir, jobID, func(err error) string { return awsErr(actx, err) })
}
