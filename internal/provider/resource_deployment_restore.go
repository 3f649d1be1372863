package provider

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/deployop"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// Restore, upgrade, destroy and replace: the model read for the domain's
// decisions and words (flinkdeploy at plan, deployop at apply), and their
// findings and reports.

func (m *deploymentModel) restorePath() types.String {
	if m.Job == nil {
		return types.StringNull()
	}
	return m.Job.InitialSavepointPath
}

// redeploys: flinkdeploy.Redeploys; nextNonce: flinkdeploy.NextNonce.
func redeploys(plan, state *deploymentModel) bool {
	return flinkdeploy.Redeploys(state.shape(), plan.shape())
}

func nextNonce(state *deploymentModel) types.Int64 {
	return types.Int64Value(flinkdeploy.NextNonce(state.RedeployNonce.ValueInt64Pointer()))
}

// planRestore plans savepoint_redeploy_nonce and upgrade_savepoint_path and
// warns about what restoring does. state is nil on create; prior is
// state.desired; planned is the plan's, once the nonce is planned.
func planRestore(ctx context.Context, plan, state *deploymentModel, prior flinkdeploy.Desired, unwritten []string,
	diags *diag.Diagnostics) (planned flinkdeploy.Desired) {
	opts := flinkdeploy.RestoreOptions{PathSet: !plan.restorePath().IsNull()}
	if plan.Job != nil {
		opts.AllowNonRestoredState, opts.ClaimMode = plan.Job.AllowNonRestoredState.ValueBool(), plan.Job.ClaimMode.ValueString()
	}
	addNotices(diags, opts.Notices()...)
	if state == nil {
		// A create may be the second half of a replacement that carries a
		// final savepoint (planReplace): which one is known only at apply.
		plan.RedeployNonce, plan.UpgradeSavepoint = types.Int64Null(), types.StringNull()
		if plan.keepsState() && plan.restorePath().IsNull() {
			plan.UpgradeSavepoint = types.StringUnknown()
		}
		return planned
	}
	nonce, unknown, fs := flinkdeploy.PlanNonce(state.shape(), plan.shape(), state.RedeployNonce.ValueInt64Pointer(), plan.restorePath().IsUnknown())
	addNotices(diags, fs...)
	plan.RedeployNonce, plan.UpgradeSavepoint = types.Int64PointerValue(nonce), state.UpgradeSavepoint
	if unknown {
		plan.RedeployNonce = types.Int64Unknown()
	}
	if planned = plan.desired(ctx, unwritten); flinkdeploy.TakesUpgradeSavepoint(prior, planned) {
		plan.UpgradeSavepoint = types.StringUnknown()
	}
	addNotices(diags, flinkdeploy.UpgradeWarnings(prior, planned)...)
	return planned
}

// jobState: Desired.RunState.
func (m *deploymentModel) jobState() string { return m.shape().RunState() }

// checkRestoreTarget is checkpoint.CheckRestoreTarget, S3's errors worded
// by awsErr.
func checkRestoreTarget(ctx context.Context, s3 checkpoint.S3Reader, target string) *checkpoint.RestoreProblem {
	return checkpoint.CheckRestoreTarget(ctx, s3, target, func(err error) string { return awsErr(ctx, err) })
}

// verifyRestoreTarget checks job.initial_savepoint_path before a create or
// redeploy from it (deployop.RestoreTarget); after an earlier error, its
// form only. The cleanup's fate of a snapshot is cleanupFate's.
func (r *deploymentResource) verifyRestoreTarget(ctx context.Context, plan, state *deploymentModel, timeout time.Duration, diags *diag.Diagnostics) {
	if p := plan.restorePath(); !p.IsNull() {
		fs, halt := deployop.RestoreTarget{Subject: plan.subject(), Namespace: plan.Namespace.ValueString(), Name: plan.Name.ValueString(),
			Path: p.ValueString(), Unknown: p.IsUnknown(), Check: (state == nil || redeploys(plan, state)) && !diags.HasError(), Timeout: timeout,
			Fate: func(ctx context.Context, ns, deployment, snapshot string) (string, time.Time, error) {
				c, err := r.meta.Kube() // set up by Verify (Env.Kube) already: cached
				if err != nil {
					return "", time.Time{}, err
				}
				_, fate, after, err := cleanupFate(ctx, c, ns, deployment, snapshot)
				return fate, after, err
			}}.Verify(ctx, r.meta.env())
		addNotices(diags, fs...)
		addHalt(diags, halt)
	}
}

// verifyCarried: deployop.VerifyCarried, unless an earlier step failed.
func (r *deploymentResource) verifyCarried(ctx context.Context, plan *deploymentModel, carried string, timeout time.Duration, diags *diag.Diagnostics) {
	if !diags.HasError() {
		addHalt(diags, deployop.VerifyCarried(ctx, r.meta.env(), plan.subject(), carried, timeout))
	}
}

// addHalt reports a problem that stopped a deployop operation (nil: none).
func addHalt(diags *diag.Diagnostics, h *deployop.Report) {
	if h != nil {
		addReport(diags, h.Object, h.Report)
	}
}

// waitTimeoutCheck: savepoint_before_upgrade.timeout (deployop.CheckTimeout).
var waitTimeoutCheck = check("Invalid timeout", "a duration such as 10m, 90s or 1h30m", deployop.CheckTimeout)

// savepointBeforeUpgrade: deployop.UpgradeSavepoint from state (prior) to
// plan (planned, whose configuration in is), its path recorded in plan. An
// error means the caller must not apply.
func (r *deploymentResource) savepointBeforeUpgrade(ctx context.Context, c *kube.Client, plan, state *deploymentModel, prior, planned flinkdeploy.Desired,
	in flinkconf.Input, diags *diag.Diagnostics) {
	plan.UpgradeSavepoint = state.UpgradeSavepoint
	u := deployop.UpgradeSavepoint{Namespace: plan.Namespace.ValueString(), Name: plan.Name.ValueString(), Prior: prior, Planned: planned,
		Backend: state.stateSettings(ctx).Backend, HA: in.HAEnabled}
	u.FormatType, u.Timeout = plan.savepointFirst()
	p, fs := u.Take(ctx, c.Dynamic)
	if addNotices(diags, fs...); p != "" {
		plan.UpgradeSavepoint = types.StringValue(p)
	}
}

// savepointFirst: savepoint_before_upgrade's format_type and timeout.
func (m *deploymentModel) savepointFirst() (formatType, timeout string) {
	if m.SavepointFirst == nil {
		return "", ""
	}
	return m.SavepointFirst.FormatType.ValueString(), m.SavepointFirst.Timeout.ValueString()
}

// planNotRunningUpgrade: flinkdeploy.NotRunningNotice for the job state
// last read (none while unknown); recorded: kube.RecordedSavepoint.
func planNotRunningUpgrade(plan, state *deploymentModel, prior, planned flinkdeploy.Desired, recorded string, diags *diag.Diagnostics) {
	if state != nil {
		addNotices(diags, flinkdeploy.NotRunningNotice(plan.subject(), prior, planned, state.JobState.ValueString(), recorded)...)
	}
}

// flinkReason and namedOperator: deployop.FlinkReason and NamedOperator.
func (r *deploymentResource) flinkReason(ctx context.Context, c *kube.Client, ns, name string, o kube.WaitOutcome) string {
	return deployop.FlinkReason(ctx, r.meta.env(), c.REST, ns, name, o)
}

func (r *deploymentResource) namedOperator(ctx context.Context, cause string) string {
	return deployop.NamedOperator(ctx, r.meta.env(), cause)
}

// A replacement carries the final savepoint: Terraform plans it twice, the
// second time with a null prior state but the first call's private data
// (PriorPrivate = plannedPrivate, terraform node_resource_abstract_instance.go),
// which the destroy half gets (plans.ResourceInstanceChange.Simplify keeps
// Private): planReplace records where it comes from, planCarry where it goes,
// Delete annotates the savepoint (kube.CarryToAnnotation), Create finds it.

// keepsState: a final savepoint applies (flinkdeploy.Desired.KeepsState).
func (m *deploymentModel) keepsState() bool { return m.shape().KeepsState() }

// stateSettings is the state block as the provider writes it (zero when
// it cannot be read yet).
func (m *deploymentModel) stateSettings(ctx context.Context) flinkconf.State {
	var d diag.Diagnostics
	if in, ok := m.input(ctx, nil, &d); ok {
		return in.State
	}
	return flinkconf.State{}
}

// savepointDir is where the final savepoint goes, as the plan words it.
func (m *deploymentModel) savepointDir(ctx context.Context) string {
	return flinkdeploy.FinalDirsOf(m.stateSettings(ctx)).Savepoint
}

// planDestroy: flinkdeploy.PlanDestroy; failed: how the last destroy's
// final savepoint failed (kube.FinalSavepointFailedAnnotation).
func planDestroy(ctx context.Context, state *deploymentModel, failed string, diags *diag.Diagnostics) {
	if f, ok := flinkdeploy.PlanDestroy(state.shape(), state.finalFacts(ctx, failed)); ok {
		addNotices(diags, f.Notice())
	}
}

func (m *deploymentModel) finalFacts(ctx context.Context, failed string) flinkdeploy.FinalFacts {
	dirs := flinkdeploy.FinalDirsOf(m.stateSettings(ctx))
	return flinkdeploy.FinalFacts{Namespace: m.Namespace.ValueString(), Name: m.Name.ValueString(),
		JobState: m.JobState.ValueString(), JobStateKnown: !m.JobState.IsUnknown(), Lifecycle: m.LifecycleState.ValueString(),
		SavepointDir: dirs.Savepoint, CheckpointDir: dirs.Checkpoint, FinalSavepoint: m.FinalSavepoint.ValueBool(), Failed: failed}
}

// planReplace: flinkdeploy.PlanReplace, and in the private data what is
// replaced when the state is carried: the handover, or (the old job not
// running now) whatever final savepoint the destroy half can still record.
func planReplace(ctx context.Context, plan, state *deploymentModel, private *deploymentPrivate, diags *diag.Diagnostics) {
	kind, f, ok := flinkdeploy.PlanReplace(state.shape(), plan.shape(), plan.Namespace.ValueString(), plan.restorePath().IsUnknown(),
		state.finalFacts(ctx, ""))
	if kind.Carries() {
		private.ReplaceFrom = state.Namespace.ValueString() + "/" + state.Name.ValueString()
	}
	if ok {
		addNotices(diags, f.Notice())
	}
}

func planCarry(plan *deploymentModel, private *deploymentPrivate) {
	if private.ReplaceFrom != "" {
		private.CarryTo = plan.Namespace.ValueString() + "/" + plan.Name.ValueString()
	}
}

// takeFinalSavepoint: deployop.FinalSavepoint before the delete (an error:
// it must not happen); uid: the object this resource owns ("" for any).
func (r *deploymentResource) takeFinalSavepoint(ctx context.Context, c *kube.Client, state *deploymentModel, uid, carryTo string, timeout time.Duration, diags *diag.Diagnostics) {
	f := deployop.FinalSavepoint{Namespace: state.Namespace.ValueString(), Name: state.Name.ValueString(), UID: uid, Prior: state.shape(),
		State: state.stateSettings(ctx), CarryTo: carryTo, Timeout: timeout}
	f.FormatType, _ = state.savepointFirst()
	rep, ok, err := f.Take(ctx, c.Dynamic)
	if err != nil {
		tflog.Warn(ctx, "recording the failed final savepoint on the FlinkDeployment", map[string]any{"error": err.Error()})
	}
	if ok {
		addReport(diags, state.subject(), rep)
	}
}

// finalSavepointFormat: deployop.FinalFormat.
func (m *deploymentModel) finalSavepointFormat(ctx context.Context) string {
	formatType, _ := m.savepointFirst()
	return deployop.FinalFormat(m.stateSettings(ctx).Backend, formatType)
}

// findCarried: deployop.FindCarried (deploymentOp.CarriedPath).
func (r *deploymentResource) findCarried(ctx context.Context, c *kube.Client, plan *deploymentModel, diags *diag.Diagnostics) string {
	p, halt := deployop.FindCarried(ctx, c.Dynamic, plan.Namespace.ValueString(), plan.Name.ValueString(), plan.restorePath().IsNull() && plan.Job != nil)
	addHalt(diags, halt)
	return p
}

// consumeCarried: kube.CarryTarget.Consume of the path ns/name started from.
func consumeCarried(ctx context.Context, c *kube.Client, ns, name, path string, diags *diag.Diagnostics) {
	if rep, failed := (kube.CarryTarget{Namespace: ns, Name: name}).Consume(ctx, c.Dynamic, path); failed {
		addReport(diags, "", rep)
	}
}

// refuseSessionDelete: deployop.RefuseSessionDelete of a session cluster
// (no job); whether it refused.
func refuseSessionDelete(ctx context.Context, c *kube.Client, state *deploymentModel, timeout time.Duration, diags *diag.Diagnostics) bool {
	if state.Job != nil {
		return false
	}
	halt := deployop.RefuseSessionDelete(ctx, c.Dynamic, state.Namespace.ValueString(), state.Name.ValueString(),
		stringMap(ctx, state.FlinkConfiguration, diags), timeout)
	addHalt(diags, halt)
	return halt != nil
}
