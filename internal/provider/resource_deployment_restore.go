package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// Restore and upgrade: the savepointRedeployNonce, the restore-target check
// and the savepoint before an upgrade. The decisions and their words are
// flinkdeploy's, checkpoint's and kube's; this reads the model and reports.

func (m *deploymentModel) restorePath() types.String {
	if m.Job == nil {
		return types.StringNull()
	}
	return m.Job.InitialSavepointPath
}

// redeploys tells whether plan points an existing deployment (state) at a
// new restore path (flinkdeploy.Redeploys).
func redeploys(plan, state *deploymentModel) bool {
	return flinkdeploy.Redeploys(state.shape(), plan.shape())
}

// nextNonce is a new non-null nonce after the state's (flinkdeploy.NextNonce).
func nextNonce(state *deploymentModel) types.Int64 {
	return types.Int64Value(flinkdeploy.NextNonce(state.RedeployNonce.ValueInt64Pointer()))
}

// planRestore fills savepoint_redeploy_nonce and upgrade_savepoint_path in
// the plan and warns about what restoring does. state is nil on create;
// prior is its desired deployment with its spec (state.desired, once per
// plan). unwritten: the provider defaults an imported object lacked.
// planned is the plan's desired deployment with its spec, converted once
// the nonce is planned (the zero value on create).
func planRestore(ctx context.Context, plan, state *deploymentModel, prior flinkdeploy.Desired, unwritten []string,
	diags *diag.Diagnostics) (planned flinkdeploy.Desired) {
	opts := flinkdeploy.RestoreOptions{PathSet: !plan.restorePath().IsNull()}
	if plan.Job != nil {
		opts.AllowNonRestoredState, opts.ClaimMode = plan.Job.AllowNonRestoredState.ValueBool(), plan.Job.ClaimMode.ValueString()
	}
	addNotices(diags, opts.Notices()...)
	if state == nil {
		plan.RedeployNonce = types.Int64Null()
		plan.UpgradeSavepoint = types.StringNull()
		if plan.keepsState() && plan.restorePath().IsNull() {
			// A create may be the second half of a replacement that carries
			// the replaced deployment's final savepoint (resource_deployment_final.go);
			// which one is known only at apply, where the re-plan of the
			// create has neither prior state nor private data.
			plan.UpgradeSavepoint = types.StringUnknown()
		}
		return planned
	}
	// The spec changes the operator refuses on an existing deployment
	// (flinkdeploy.Refusals), refused at plan: its rejection would leave
	// the old spec running and the apply waiting out its timeout.
	addNotices(diags, flinkdeploy.RefusalFindings(state.shape(), plan.shape())...)
	plan.RedeployNonce = state.RedeployNonce
	switch {
	case plan.restorePath().IsUnknown():
		plan.RedeployNonce = types.Int64Unknown()
	case redeploys(plan, state):
		plan.RedeployNonce = nextNonce(state)
		addNotices(diags, flinkdeploy.RedeployNotice(plan.RedeployNonce.ValueInt64(), plan.restorePath().ValueString()))
	}
	plan.UpgradeSavepoint = state.UpgradeSavepoint
	planned = plan.desired(ctx, unwritten)
	if flinkdeploy.TakesUpgradeSavepoint(prior, planned) {
		plan.UpgradeSavepoint = types.StringUnknown()
	}
	if prior.Spec != nil && planned.Spec != nil {
		// That the job restarts, and with what state
		// (flinkdeploy.Spec.UpgradeChanges, flinkdeploy.UpgradeNotice).
		changes := prior.Spec.UpgradeChanges(*planned.Spec)
		if summary, detail := flinkdeploy.UpgradeNotice(prior, planned, changes); summary != "" {
			diags.AddWarning(summary, detail)
		}
	}
	return planned
}

// restoresOnUpdate tells whether an update restores state, and from which
// path ("" when the operator picks it): flinkdeploy.Restores.
func restoresOnUpdate(ctx context.Context, plan, state *deploymentModel, unwritten []string) (bool, string) {
	return flinkdeploy.Restores(state.desired(ctx, unwritten), plan.desired(ctx, unwritten))
}

// jobState is job.state, running when unset (flinkdeploy.Desired.RunState).
func (m *deploymentModel) jobState() string { return m.shape().RunState() }

// checkRestoreTarget is checkpoint.CheckRestoreTarget, with S3's errors
// worded as the provider words them (awsErr: the endpoint and the bound of
// the call).
func checkRestoreTarget(ctx context.Context, s3 checkpoint.S3Reader, target string) *checkpoint.RestoreProblem {
	return checkpoint.CheckRestoreTarget(ctx, s3, target, func(err error) string { return awsErr(ctx, err) })
}

// verifyRestoreTarget checks, before the deployment is created or
// redeployed from job.initial_savepoint_path, that Flink could restore from
// the path (checkRestoreTarget, checkpoint.RestoreProblem.PathRefusal),
// within the operation's timeout.
func (r *deploymentResource) verifyRestoreTarget(ctx context.Context, plan, state *deploymentModel, timeout time.Duration, diags *diag.Diagnostics) {
	p := plan.restorePath()
	if !p.IsNull() && !p.IsUnknown() {
		// Checked again here, not only by the schema's validator: nothing
		// planned to restore is deployed without its path.
		if msg := checkpoint.ValidateRestorePath(p.ValueString()); msg != "" {
			addNotices(diags, checkpoint.InvalidRestorePath(plan.subject(), p.ValueString(), msg))
			return
		}
	}
	if p.IsNull() || (state != nil && !redeploys(plan, state)) {
		return
	}
	c := r.meta.awsOrDiag(ctx, diags)
	if diags.HasError() {
		return
	}
	ctx, cancel := r.meta.boundAWS(ctx, timeout)
	defer cancel()
	if prob := checkRestoreTarget(ctx, c.S3, p.ValueString()); prob != nil {
		addNotices(diags, prob.PathRefusal(plan.subject()))
		return
	}
	r.checkDisposal(ctx, plan, p.ValueString(), diags)
}

// checkDisposal says when the savepoint a deployment is about to restore
// (target) is one the operator's savepoint history cleanup deletes with its
// data (kube.CleanupFate): a disposal due at the operator's next observe
// refuses the restore before anything changes; a later one is a warning
// (kube.Disposal).
func (r *deploymentResource) checkDisposal(ctx context.Context, plan *deploymentModel, target string, diags *diag.Diagnostics) {
	c := r.meta.kubeOrDiag(diags)
	if c == nil || diags.HasError() {
		return
	}
	ns, name := plan.Namespace.ValueString(), plan.Name.ValueString()
	entries, err := kube.SnapshotsAtPath(ctx, c.Dynamic, ns, target)
	if err != nil {
		addNotices(diags, kube.DisposalUnchecked(ns, name, target, readableAPIError(err)))
		return
	}
	addNotices(diags, kube.Disposals(ns, name, target, entries, time.Now(), func(e kube.SnapshotEntry) (string, time.Time, error) {
		_, fate, after, err := cleanupFate(ctx, c, ns, e.Deployment, e.Name)
		return fate, after, err
	})...)
}

// verifyCarried checks the final savepoint a replacement starts from
// (carried: deploymentOp.CarriedPath) as job.initial_savepoint_path is checked
// (checkRestoreTarget): the replaced deployment is gone, so a savepoint that
// could not be restored must stop the create
// (checkpoint.RestoreProblem.CarriedRefusal).
func (r *deploymentResource) verifyCarried(ctx context.Context, plan *deploymentModel, carried string, timeout time.Duration, diags *diag.Diagnostics) {
	a := r.meta.awsOrDiag(ctx, diags)
	if a == nil || diags.HasError() {
		return
	}
	ctx, cancel := r.meta.boundAWS(ctx, timeout)
	defer cancel()
	if prob := checkRestoreTarget(ctx, a.S3, carried); prob != nil {
		cause, todo := prob.CarriedRefusal()
		addProblem(diags, "Creating", plan.subject(), cause, todo)
	}
}

// waitTimeoutCheck: savepoint_before_upgrade.timeout is a Go duration, as
// the timeouts blocks' are.
var waitTimeoutCheck = check("Invalid timeout", "a duration such as 10m, 90s or 1h30m", func(s string) string {
	if d, err := time.ParseDuration(s); err != nil || d <= 0 {
		return fmt.Sprintf("%q is not a positive duration such as 10m, 90s or 1h30m", s)
	}
	return ""
})

// upgradeSnapshotPoll is how often the savepoint before an upgrade is read.
var upgradeSnapshotPoll = time.Second

// savepointBeforeUpgrade takes a savepoint of the running job when the
// update changes the job and savepoint_before_upgrade is set
// (flinkdeploy.TakesUpgradeSavepoint), and waits for COMPLETED
// (kube.SavepointBeforeUpgrade); it records the path in plan. An error
// leaves the deployment untouched: the caller must not apply.
func (r *deploymentResource) savepointBeforeUpgrade(ctx context.Context, c *kube.Client, plan, state *deploymentModel, unwritten []string, diags *diag.Diagnostics) {
	plan.UpgradeSavepoint = state.UpgradeSavepoint
	// A suspended job cannot take a savepoint; its suspend took one (savepoint
	// mode) or kept HA metadata (last-state).
	prior, planned := state.desired(ctx, unwritten), plan.desired(ctx, unwritten)
	if !flinkdeploy.TakesUpgradeSavepoint(prior, planned) {
		return
	}
	u := kube.SavepointBeforeUpgrade{Namespace: plan.Namespace.ValueString(), Name: plan.Name.ValueString(), Timeout: 10 * time.Minute,
		Every: upgradeSnapshotPoll, Redeploys: flinkdeploy.Redeploys(prior, planned), RestorePath: planned.RestorePath,
		UpgradeMode: planned.UpgradeMode, APIError: readableAPIError}
	if t := plan.SavepointFirst.Timeout.ValueString(); t != "" {
		d, err := time.ParseDuration(t)
		if err != nil {
			diags.AddAttributeError(path.Root("savepoint_before_upgrade").AtName("timeout"), "Invalid timeout", err.Error())
			return
		}
		u.Timeout = d
	}
	// The running job's backend takes the savepoint (ForSt: NATIVE only).
	u.Format, _ = flinkconf.SavepointFormatFor(state.backend(ctx), plan.SavepointFirst.FormatType.ValueString())
	if planned.Spec != nil {
		u.Hash = planned.Spec.Hash()
	}
	u.HA = func() bool {
		in, ok := plan.input(ctx, unwritten, diags)
		return ok && in.HAEnabled()
	}
	p, fs := u.Run(ctx, c.Dynamic)
	if addNotices(diags, fs...); p != "" {
		plan.UpgradeSavepoint = types.StringValue(p)
	}
}

// planNotRunningUpgrade says at plan, for an update savepoint_before_upgrade
// covers while the job is not running (job_state as last read), that no
// savepoint can be taken and what the new spec starts from
// (flinkdeploy.NotRunningNotice). recorded is the savepoint the operator
// had on record when the deployment was last read (kube.RecordedSavepoint).
// prior and planned: the state's and the plan's desired deployments.
func planNotRunningUpgrade(plan, state *deploymentModel, prior, planned flinkdeploy.Desired, recorded string, diags *diag.Diagnostics) {
	if state == nil || state.JobState.IsUnknown() {
		return
	}
	addNotices(diags, flinkdeploy.NotRunningNotice(plan.subject(), prior, planned, state.JobState.ValueString(), recorded)...)
}
