package provider

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/deployop"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// Restore and upgrade: the savepointRedeployNonce, the restore-target check
// and the savepoint before an upgrade. The decisions and their words are
// the domain's (deployop/restore.go sequences the apply's); this reads the
// model and reports.

func (m *deploymentModel) restorePath() types.String {
	if m.Job == nil {
		return types.StringNull()
	}
	return m.Job.InitialSavepointPath
}

// redeploys: plan points the existing deployment (state) at a new restore
// path (flinkdeploy.Redeploys). nextNonce: flinkdeploy.NextNonce.
func redeploys(plan, state *deploymentModel) bool {
	return flinkdeploy.Redeploys(state.shape(), plan.shape())
}

func nextNonce(state *deploymentModel) types.Int64 {
	return types.Int64Value(flinkdeploy.NextNonce(state.RedeployNonce.ValueInt64Pointer()))
}

// planRestore fills savepoint_redeploy_nonce and upgrade_savepoint_path in
// the plan and warns about what restoring does. state is nil on create;
// prior is its desired deployment (state.desired, once per plan);
// unwritten: the provider defaults an imported object lacked. planned is
// the plan's desired deployment, converted once the nonce is planned (the
// zero value on create).
func planRestore(ctx context.Context, plan, state *deploymentModel, prior flinkdeploy.Desired, unwritten []string,
	diags *diag.Diagnostics) (planned flinkdeploy.Desired) {
	opts := flinkdeploy.RestoreOptions{PathSet: !plan.restorePath().IsNull()}
	if plan.Job != nil {
		opts.AllowNonRestoredState, opts.ClaimMode = plan.Job.AllowNonRestoredState.ValueBool(), plan.Job.ClaimMode.ValueString()
	}
	addNotices(diags, opts.Notices()...)
	if state == nil {
		// A create may be the second half of a replacement that carries the
		// replaced deployment's final savepoint (resource_deployment_final.go):
		// which one is known only at apply.
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

// restoresOnUpdate: flinkdeploy.Restores. jobState: job.state, running
// when unset (flinkdeploy.Desired.RunState).
func restoresOnUpdate(ctx context.Context, plan, state *deploymentModel, unwritten []string) (bool, string) {
	return flinkdeploy.Restores(state.desired(ctx, unwritten), plan.desired(ctx, unwritten))
}

func (m *deploymentModel) jobState() string { return m.shape().RunState() }

// checkRestoreTarget is checkpoint.CheckRestoreTarget, S3's errors worded
// by awsErr.
func checkRestoreTarget(ctx context.Context, s3 checkpoint.S3Reader, target string) *checkpoint.RestoreProblem {
	return checkpoint.CheckRestoreTarget(ctx, s3, target, func(err error) string { return awsErr(ctx, err) })
}

// verifyRestoreTarget checks job.initial_savepoint_path before a create or
// redeploy from it (deployop.RestoreTarget); after an earlier error, only
// its form.
func (r *deploymentResource) verifyRestoreTarget(ctx context.Context, plan, state *deploymentModel, timeout time.Duration, diags *diag.Diagnostics) {
	if p := plan.restorePath(); !p.IsNull() {
		fs, halt := deployop.RestoreTarget{Subject: plan.subject(), Namespace: plan.Namespace.ValueString(), Name: plan.Name.ValueString(),
			Path: p.ValueString(), Unknown: p.IsUnknown(), Check: (state == nil || redeploys(plan, state)) && !diags.HasError(),
			Timeout: timeout, Fate: r.restoreFate}.Verify(ctx, r.meta.env())
		addNotices(diags, fs...)
		addHalt(diags, halt)
	}
}

// restoreFate is deployop.RestoreTarget.Fate, by cleanupFate.
func (r *deploymentResource) restoreFate(ctx context.Context, ns, deployment, snapshot string) (string, time.Time, error) {
	c, err := r.meta.Kube()
	if err != nil {
		return "", time.Time{}, err
	}
	_, fate, after, err := cleanupFate(ctx, c, ns, deployment, snapshot)
	return fate, after, err
}

// verifyCarried checks the final savepoint a replacement starts from
// (deployop.VerifyCarried) unless an earlier step failed.
func (r *deploymentResource) verifyCarried(ctx context.Context, plan *deploymentModel, carried string, timeout time.Duration, diags *diag.Diagnostics) {
	if !diags.HasError() {
		addHalt(diags, deployop.VerifyCarried(ctx, r.meta.env(), plan.subject(), carried, timeout))
	}
}

func addHalt(diags *diag.Diagnostics, h *deployop.Halt) {
	if h != nil {
		addReport(diags, h.Object, h.Report)
	}
}

// waitTimeoutCheck: savepoint_before_upgrade.timeout (deployop.CheckTimeout).
var waitTimeoutCheck = check("Invalid timeout", "a duration such as 10m, 90s or 1h30m", deployop.CheckTimeout)

// savepointBeforeUpgrade takes the savepoint before an update that changes
// the job (deployop.UpgradeSavepoint) and records its path in plan. An
// error leaves the deployment untouched: the caller must not apply.
func (r *deploymentResource) savepointBeforeUpgrade(ctx context.Context, c *kube.Client, plan, state *deploymentModel, unwritten []string, diags *diag.Diagnostics) {
	plan.UpgradeSavepoint = state.UpgradeSavepoint
	u := deployop.UpgradeSavepoint{Namespace: plan.Namespace.ValueString(), Name: plan.Name.ValueString(), Prior: state.desired(ctx, unwritten),
		Planned: plan.desired(ctx, unwritten), Backend: state.stateSettings(ctx).Backend, HA: func() bool {
			in, ok := plan.input(ctx, unwritten, diags)
			return ok && in.HAEnabled()
		}}
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

// planNotRunningUpgrade: flinkdeploy.NotRunningNotice, for the job state
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
