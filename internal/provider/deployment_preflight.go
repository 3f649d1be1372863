package provider

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/deployop"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
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

// subject names the deployment in messages: "FlinkDeployment ns/name".
func (m *deploymentModel) subject() string {
	return "FlinkDeployment " + m.Namespace.ValueString() + "/" + m.Name.ValueString()
}

// effectiveConfig is effective_flink_configuration, nil when it does not convert.
func (m *deploymentModel) effectiveConfig(ctx context.Context) map[string]string {
	var d diag.Diagnostics
	if cfg := stringMap(ctx, m.EffectiveConfig, &d); !d.HasError() {
		return cfg
	}
	return nil
}

// preflightRestore is deployop.Env.PreflightUpgrade: plan (planned) updates
// state's (prior) running job.
func (r *deploymentResource) preflightRestore(ctx context.Context, plan, state *deploymentModel, prior, planned flinkdeploy.Desired, timeout time.Duration, diags *diag.Diagnostics) {
	u := preflight.Upgrade{Subject: plan.subject(), Prior: prior, Planned: planned}
	if diags.HasError() || !u.Applies() { // Applies: both have a job block
		return
	}
	u.PriorConfig, u.PlannedConfig = state.effectiveConfig(ctx), plan.effectiveConfig(ctx)
	u.PreviousParallelism, u.Parallelism, u.JobID = int(state.Job.Parallelism.ValueInt64()), int(plan.Job.Parallelism.ValueInt64()), state.JobID.ValueString()
	addNotices(diags, r.meta.env().PreflightUpgrade(ctx, u, timeout)...)
}

// preflightPath is deployop.Env.PreflightPath: plan restores target (what names it).
func (r *deploymentResource) preflightPath(ctx context.Context, plan *deploymentModel, target, what string, create, carried bool, timeout time.Duration, diags *diag.Diagnostics) {
	if !diags.HasError() && plan.Job != nil {
		addNotices(diags, r.meta.env().PreflightPath(ctx, preflight.Path{Subject: plan.subject(), Target: target, What: what, Create: create,
			Carried: carried, Config: plan.effectiveConfig(ctx), Parallelism: int(plan.Job.Parallelism.ValueInt64()), FlinkVersion: plan.FlinkVersion.ValueString()}, timeout)...)
	}
}

// preflightHandover is the pre-flight of a replacement that carries the job's state across.
func (r *deploymentResource) preflightHandover(ctx context.Context, plan, state *deploymentModel, diags *diag.Diagnostics) {
	if state != nil && state.Job != nil {
		r.preflightSavepointHandover(ctx, plan, state, state.finalSavepointFormat(ctx), preflight.Replacement(state.subject()), diags)
	}
}

// savepointHandover words a handover through a savepoint of the running job.
type savepointHandover = preflight.Handover

// preflightSavepointHandover is deployop.Env.PreflightHandover: plan's job starts from a
// savepoint of state's running one, taken in format ("" for the deployment's own).
func (b *resourceBase) preflightSavepointHandover(ctx context.Context, plan, state *deploymentModel, format string, h savepointHandover, diags *diag.Diagnostics) {
	if diags.HasError() || plan.Job == nil || state.Job == nil || plan.EffectiveConfig.IsUnknown() || plan.Job.Parallelism.IsUnknown() {
		return
	}
	h.PriorConfig, h.PlannedConfig = state.effectiveConfig(ctx), plan.effectiveConfig(ctx)
	h.Parallelism, h.FlinkVersion, h.Format = int(plan.Job.Parallelism.ValueInt64()), plan.FlinkVersion.ValueString(), format
	addNotices(diags, b.meta.env().PreflightHandover(ctx, h, state.JobID.ValueString(), kube.RequestTimeout)...)
}

// baseline is deployop.Env.Baseline, read before the spec is written.
func (r *deploymentResource) baseline(ctx context.Context, plan *deploymentModel, live *unstructured.Unstructured, diags *diag.Diagnostics) checkpoint.Baseline {
	b, warning := r.meta.env().Baseline(ctx, plan.shape(), live, plan.effectiveConfig(ctx))
	if warning != "" {
		diags.AddWarning("Checkpoint baseline not read", warning)
	}
	return b
}

// waitCheckpoint is deployop.Env.WaitCheckpoint, the end of wait_for = "checkpoint":
// false, with the error in diags, when none completed before until or the job failed.
func (r *deploymentResource) waitCheckpoint(ctx context.Context, c *kube.Client, plan *deploymentModel, base checkpoint.Baseline, jobID string, until time.Time, diags *diag.Diagnostics) bool {
	cp, rep, err := r.meta.env().WaitCheckpoint(ctx, c.Dynamic, deployop.CheckpointWait{Namespace: plan.Namespace.ValueString(),
		Name: plan.Name.ValueString(), JobID: jobID, Config: plan.effectiveConfig(ctx), Base: base, Until: until})
	switch {
	case err != nil:
		addProblem(diags, "Setting up", "the AWS clients", err.Error(), "")
	case rep != nil:
		addReport(diags, plan.subject(), *rep)
	default:
		tflog.Info(ctx, "wait_for checkpoint: a checkpoint completed after the change", map[string]any{"path": cp.Path, "id": cp.ID})
	}
	return err == nil && rep == nil
}
