package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// Restore and upgrade: the savepointRedeployNonce, the restore-target check
// and the savepoint before an upgrade.

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
// the plan and warns about what restoring does. state is nil on create.
// unwritten: the provider defaults an imported object lacked.
func planRestore(ctx context.Context, plan, state *deploymentModel, unwritten []string, diags *diag.Diagnostics) {
	at := path.Root("job")
	if plan.Job != nil && plan.Job.AllowNonRestoredState.ValueBool() {
		diags.AddAttributeWarning(at.AtName("allow_non_restored_state"), "State may be dropped on restore",
			"allow_non_restored_state = true lets the job start although state in the savepoint or checkpoint maps to no operator of the "+
				"new job: that state is silently dropped (execution.state-recovery.ignore-unclaimed-state). Set it only for a deliberate "+
				"topology change, and remove it afterwards.")
	}
	if plan.Job != nil && plan.Job.ClaimMode.ValueString() == flinkconf.ClaimModeClaim && !plan.restorePath().IsNull() {
		diags.AddAttributeWarning(at.AtName("claim_mode"), "Flink may delete the restored snapshot",
			"claim_mode = \"CLAIM\" hands the snapshot at job.initial_savepoint_path to the job, which deletes it once newer checkpoints "+
				"subsume it. If a flinkstate_snapshot keeps that savepoint (dispose_on_delete = false or already_exists), or you need it "+
				"to roll back, use NO_CLAIM (Flink's default).")
	}
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
		return
	}
	planSpecChange(plan, state, diags)
	plan.RedeployNonce = state.RedeployNonce
	switch {
	case plan.restorePath().IsUnknown():
		plan.RedeployNonce = types.Int64Unknown()
	case redeploys(plan, state):
		plan.RedeployNonce = nextNonce(state)
		diags.AddAttributeWarning(at.AtName("initial_savepoint_path"), "The job will be redeployed from a snapshot",
			fmt.Sprintf("job.initial_savepoint_path changes on an existing deployment: the provider sets savepoint_redeploy_nonce to %d and "+
				"the operator redeploys the job from %s. The running job's current state is replaced by that snapshot's, and the "+
				"operator cannot roll this back.", plan.RedeployNonce.ValueInt64(), plan.restorePath().ValueString()))
	}
	plan.UpgradeSavepoint = state.UpgradeSavepoint
	prior, planned := state.desired(ctx, unwritten), plan.desired(ctx, unwritten)
	if flinkdeploy.TakesUpgradeSavepoint(prior, planned) {
		plan.UpgradeSavepoint = types.StringUnknown()
	}
	if prior.Spec != nil && planned.Spec != nil {
		planUpgradeWarning(plan, state, prior.Spec.UpgradeChanges(*planned.Spec), diags)
	}
}

// planSpecChange refuses, at plan, the spec changes the operator refuses
// on an existing deployment (flinkdeploy.Refusals): its rejection would
// leave the old spec running and the apply waiting out its timeout.
func planSpecChange(plan, state *deploymentModel, diags *diag.Diagnostics) {
	for _, r := range flinkdeploy.Refusals(state.shape(), plan.shape()) {
		diags.AddAttributeError(path.Root(r.Attr), r.Summary, r.Detail)
	}
}

// restoresOnUpdate tells whether an update restores state, and from which
// path ("" when the operator picks it): flinkdeploy.Restores.
func restoresOnUpdate(ctx context.Context, plan, state *deploymentModel, unwritten []string) (bool, string) {
	return flinkdeploy.Restores(state.desired(ctx, unwritten), plan.desired(ctx, unwritten))
}

// jobState is job.state, running when unset (flinkdeploy.Desired.RunState).
func (m *deploymentModel) jobState() string { return m.shape().RunState() }

// planUpgradeWarning says, for an update the operator applies as an
// upgrade (flinkdeploy.Spec.UpgradeChanges), that the job restarts and what
// state it restarts with (flinkdeploy.UpgradeNotice).
func planUpgradeWarning(plan, state *deploymentModel, changes []string, diags *diag.Diagnostics) {
	if summary, detail := flinkdeploy.UpgradeNotice(state.shape(), plan.shape(), changes); summary != "" {
		diags.AddWarning(summary, detail)
	}
}

// checkRestoreTarget is checkpoint.CheckRestoreTarget, with S3's errors
// worded as the provider words them (awsErr: the endpoint and the bound of
// the call).
func checkRestoreTarget(ctx context.Context, s3 checkpoint.S3Reader, target string) *checkpoint.RestoreProblem {
	return checkpoint.CheckRestoreTarget(ctx, s3, target, func(err error) string { return awsErr(ctx, err) })
}

// verifyRestoreTarget checks, before the deployment is created or
// redeployed from job.initial_savepoint_path, that Flink could restore from
// the path (checkRestoreTarget), within the operation's timeout.
func (r *deploymentResource) verifyRestoreTarget(ctx context.Context, plan, state *deploymentModel, timeout time.Duration, diags *diag.Diagnostics) {
	p := plan.restorePath()
	at := path.Root("job").AtName("initial_savepoint_path")
	ns, name := plan.Namespace.ValueString(), plan.Name.ValueString()
	if !p.IsNull() && !p.IsUnknown() {
		// Checked again here, not only by the schema's validator: nothing
		// planned to restore is deployed without its path.
		if msg := checkpoint.ValidateRestorePath(p.ValueString()); msg != "" {
			diags.AddAttributeError(at, "Invalid restore path", fmt.Sprintf("FlinkDeployment %s/%s was not changed: job.initial_savepoint_path %q %s.",
				ns, name, p.ValueString(), msg))
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
	prob := checkRestoreTarget(ctx, c.S3, p.ValueString())
	if prob == nil {
		r.checkDisposal(ctx, plan, p.ValueString(), diags)
		return
	}
	advice := ""
	switch prob.Kind {
	case checkpoint.RestoreUnreadable:
		advice = " Point job.initial_savepoint_path at another checkpoint or savepoint, e.g. data.flinkstate_latest_checkpoint's path " +
			"(with complete = true) or a flinkstate_snapshot's path."
	case checkpoint.RestoreNoMetadata:
		advice = " Point at one that has it, e.g. data.flinkstate_latest_checkpoint's path or a flinkstate_snapshot's path."
	case checkpoint.RestoreElsewhere:
		advice = "\n\nPoint job.initial_savepoint_path at a savepoint (canonical or native: Flink names a savepoint's files relative " +
			"to its directory, so a copy restores on its own), e.g. data.flinkstate_restorable_snapshot's path read in this bucket, or " +
			"at a checkpoint written to this bucket by the job itself."
	case checkpoint.RestoreIncomplete:
		advice = "\n\nPoint job.initial_savepoint_path at a complete snapshot: data.flinkstate_latest_checkpoint with complete = true " +
			"returns the newest checkpoint whose files all exist, or use a savepoint (a flinkstate_snapshot's path). Files under shared/ " +
			"are referenced by later checkpoints too: do not expire or delete them on your own."
	}
	end := "."
	if prob.Kind == checkpoint.RestoreUnchecked || prob.Kind == checkpoint.RestoreIncomplete || prob.Kind == checkpoint.RestoreElsewhere {
		end = "" // ends with an error or a list of files
	}
	diags.AddAttributeError(at, prob.Summary, fmt.Sprintf("FlinkDeployment %s/%s was not changed: %s%s%s", ns, name, prob.Detail, end, advice))
}

// checkDisposal says when the savepoint a deployment is about to restore
// (target) is one the operator's savepoint history cleanup deletes with its
// data (SnapshotObserver.cleanupSavepointHistory: PERIODIC and UPGRADE
// FlinkStateSnapshots beyond history.max.count or older than max.age; with
// spec.savepoint.disposeOnDelete the data goes too,
// FlinkStateSnapshotController.cleanup; kube.CleanupFate): a disposal due at
// the operator's next observe refuses the restore before anything changes
// (Flink would find no savepoint once the old job is gone); a later one is a
// warning, since a later restore from the same path would fail.
func (r *deploymentResource) checkDisposal(ctx context.Context, plan *deploymentModel, target string, diags *diag.Diagnostics) {
	c := r.meta.kubeOrDiag(diags)
	if c == nil || diags.HasError() {
		return
	}
	ns, name := plan.Namespace.ValueString(), plan.Name.ValueString()
	at := path.Root("job").AtName("initial_savepoint_path")
	entries, err := kube.SnapshotsAtPath(ctx, c.Dynamic, ns, target)
	if err != nil {
		diags.AddAttributeWarning(at, "Savepoint cleanup not checked",
			fmt.Sprintf("FlinkDeployment %s/%s: whether the operator's savepoint history cleanup disposes %s could not be read (%s).", ns, name,
				target, readableAPIError(err)))
		return
	}
	now := time.Now()
	for _, e := range entries {
		_, fate, after, err := cleanupFate(ctx, c, ns, e.Deployment, e.Name)
		if err != nil || fate != "delete_and_dispose" {
			continue
		}
		ways := fmt.Sprintf("Ways out: take a savepoint of your own to restore from (a flinkstate_snapshot, dispose_on_delete = false, "+
			"which the cleanup never deletes: it cleans only PERIODIC and UPGRADE snapshots); or keep this one: set "+
			"kubernetes.operator.savepoint.history.max.count / max.age higher, or kubernetes.operator.savepoint.cleanup.enabled = "+
			"false, in the flink_configuration of FlinkDeployment %s/%s, or set spec.savepoint.disposeOnDelete false on "+
			"FlinkStateSnapshot %s/%s.", ns, e.Deployment, ns, e.Name)
		what := fmt.Sprintf("FlinkDeployment %s/%s: job.initial_savepoint_path %s is the savepoint of FlinkStateSnapshot %s/%s (trigger "+
			"type %s), which the operator's savepoint history cleanup deletes, and its data with it (disposeOnDelete)", ns, name, target,
			ns, e.Name, e.Trigger)
		if !after.After(now) {
			diags.AddAttributeError(at, "Restore path about to be disposed",
				what+", at its next observe of FlinkDeployment "+ns+"/"+e.Deployment+": the job would find no savepoint to restore. "+
					"Nothing was changed. "+ways)
			return
		}
		diags.AddAttributeWarning(at, "Restore path will be disposed",
			what+", from "+after.UTC().Format(time.RFC3339)+" on: the job restores from it now, but a later restore from the same path "+
				"would find nothing. "+ways)
	}
}

// verifyCarried checks the final savepoint a replacement starts from
// (carried: deploymentOp.CarriedPath) as job.initial_savepoint_path is checked
// (checkRestoreTarget): the replaced deployment is gone, so a savepoint that
// could not be restored must stop the create, not start a job that fails or
// runs without its state.
func (r *deploymentResource) verifyCarried(ctx context.Context, plan *deploymentModel, carried string, timeout time.Duration, diags *diag.Diagnostics) {
	a := r.meta.awsOrDiag(ctx, diags)
	if a == nil || diags.HasError() {
		return
	}
	ctx, cancel := r.meta.boundAWS(ctx, timeout)
	defer cancel()
	prob := checkRestoreTarget(ctx, a.S3, carried)
	if prob == nil {
		return
	}
	todo := "Nothing was created. Set job.initial_savepoint_path to a complete savepoint or checkpoint to start from " +
		"(data.flinkstate_latest_checkpoint with complete = true finds the newest complete checkpoint); the final savepoint's " +
		"FlinkStateSnapshot is kept."
	if prob.Kind == checkpoint.RestoreUnchecked {
		todo = "Nothing was created. Apply again once S3 answers: the final savepoint's FlinkStateSnapshot is kept and the create starts from it."
	}
	addProblem(diags, "Creating", "FlinkDeployment "+plan.Namespace.ValueString()+"/"+plan.Name.ValueString(),
		prob.Summary+": the final savepoint of the deployment it replaces cannot be restored: "+prob.Detail, todo)
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
// update changes the job and savepoint_before_upgrade is set, and waits for
// COMPLETED; it records the path in plan. An error leaves the deployment
// untouched: the caller must not apply.
func (r *deploymentResource) savepointBeforeUpgrade(ctx context.Context, c *kube.Client, plan, state *deploymentModel, unwritten []string, diags *diag.Diagnostics) {
	plan.UpgradeSavepoint = state.UpgradeSavepoint
	// A suspended job cannot take a savepoint; its suspend took one (savepoint
	// mode) or kept HA metadata (last-state).
	if plan.SavepointFirst == nil || state.jobState() == "suspended" {
		return
	}
	ps, okP := plan.spec(ctx, unwritten, diags)
	ss, okS := state.spec(ctx, unwritten, diags)
	if okP && okS && !ss.JobChanged(ps) {
		return
	}
	at := path.Root("savepoint_before_upgrade")
	timeout := 10 * time.Minute
	if t := plan.SavepointFirst.Timeout.ValueString(); t != "" {
		d, err := time.ParseDuration(t)
		if err != nil {
			diags.AddAttributeError(at.AtName("timeout"), "Invalid timeout", err.Error())
			return
		}
		timeout = d
	}
	// The running job's backend takes the savepoint (ForSt: NATIVE only).
	format, _ := flinkconf.SavepointFormatFor(state.backend(ctx), plan.SavepointFirst.FormatType.ValueString())
	ns, name := plan.Namespace.ValueString(), plan.Name.ValueString()
	live, err := kube.GetFlinkDeployment(ctx, c.Dynamic, ns, name)
	if err != nil {
		diags.AddAttributeError(at, "Savepoint before upgrade failed",
			fmt.Sprintf("FlinkDeployment %s/%s was not changed: reading it: %s", ns, name, readableAPIError(err)))
		return
	}
	// The savepoint an interrupted apply of this same change started (same
	// target spec, nothing applied since), or a new FlinkStateSnapshot of the
	// deployment's job, kept (not disposed) when the object is deleted;
	// backoffLimit 0: one attempt, its failure is the update's
	// (FlinkStateSnapshotSpec, operator release-1.15.0).
	hash := ""
	if okP {
		hash = ps.Hash()
	}
	// Only this object's, of its running job (kube.UpgradeTarget): a kept
	// savepoint of an earlier FlinkDeployment of the same name is another
	// job's state.
	if st := kube.ReadDeploymentStatus(live); st.JobState != "RUNNING" {
		notRunningUpgrade(ctx, c, plan, state, unwritten, live, diags)
		return
	}
	target := kube.UpgradeTargetOf(live, hash)
	snapshot, err := kube.PendingUpgradeSavepoint(ctx, c.Dynamic, ns, target)
	if err == nil && snapshot == "" {
		var created *unstructured.Unstructured
		created, err = kube.CreateSnapshot(ctx, c.Dynamic, ns, kube.UpgradeSavepointObject(ns, format, target))
		if err == nil {
			snapshot = created.GetName()
		}
	}
	if err != nil {
		diags.AddAttributeError(at, "Savepoint before upgrade failed",
			fmt.Sprintf("FlinkDeployment %s/%s was not changed: creating the FlinkStateSnapshot: %s", ns, name, readableAPIError(err)))
		return
	}
	st, err := kube.WaitSnapshot(ctx, c.Dynamic, ns, snapshot, timeout, upgradeSnapshotPoll)
	if err != nil {
		diags.AddAttributeError(at, "Savepoint before upgrade failed",
			fmt.Sprintf("FlinkDeployment %s/%s was not changed and keeps running its current spec: %s. Fix the cause and apply again "+
				"(if this savepoint is still under way, that apply waits for it rather than taking another), or remove "+
				"savepoint_before_upgrade to upgrade without one.", ns, name, err))
		return
	}
	plan.UpgradeSavepoint = types.StringValue(st.Path)
}

// notRunningUpgrade is savepoint_before_upgrade for a job that is not
// running: no savepoint can be taken (the operator abandons a savepoint of
// a job that is not running: SnapshotObserver, "… is not running"), so
// none is asked for; the change goes ahead where the operator restores the
// new spec by itself (kube.NotRunningRestore) and is refused, with the way
// out, where it would wait for ever or refuse it. A redeploy from a new
// job.initial_savepoint_path needs no upgradeable state (the operator
// handles SAVEPOINT_REDEPLOY before getJobUpgrade:
// AbstractJobReconciler.reconcileSpecChange).
func notRunningUpgrade(ctx context.Context, c *kube.Client, plan, state *deploymentModel, unwritten []string, live *unstructured.Unstructured, diags *diag.Diagnostics) {
	at := path.Root("savepoint_before_upgrade")
	ns, name := plan.Namespace.ValueString(), plan.Name.ValueString()
	st := kube.ReadDeploymentStatus(live)
	jm, _, _ := unstructured.NestedString(live.Object, "status", "jobManagerDeploymentStatus")
	job := fmt.Sprintf("its job is %s (lifecycle %s, JobManager %s)", orNoneState(st.JobState), orNoneState(st.LifecycleState), orNoneState(jm))
	if redeploys(plan, state) {
		diags.AddAttributeWarning(at, "No savepoint before this redeploy",
			fmt.Sprintf("FlinkDeployment %s/%s: %s, so no savepoint can be taken first; the job is redeployed from job.initial_savepoint_path %s.",
				ns, name, job, plan.restorePath().ValueString()))
		return
	}
	mode := ""
	if plan.Job != nil {
		mode = plan.Job.UpgradeMode.ValueString()
	}
	ha := false
	if in, ok := plan.input(ctx, unwritten, diags); ok {
		ha = in.HAEnabled()
	}
	src, err := kube.NotRunningRestore(ctx, c.Dynamic, live, mode, ha)
	if err != nil {
		diags.AddAttributeError(at, "Savepoint before upgrade failed",
			fmt.Sprintf("FlinkDeployment %s/%s was not changed: %s, so no savepoint can be taken, and what the operator would restore "+
				"from could not be read: %s. Apply again.", ns, name, job, readableAPIError(err)))
		return
	}
	if src.Proceeds {
		diags.AddAttributeWarning(at, "No savepoint before this upgrade",
			fmt.Sprintf("FlinkDeployment %s/%s: %s, so no savepoint can be taken (the operator abandons a savepoint of a job that is "+
				"not running). The change goes ahead: the new spec starts from %s (%s).", ns, name, job, src.From, src.Why))
		return
	}
	from := "a complete savepoint or checkpoint of this job (data.flinkstate_latest_checkpoint with complete = true finds the newest " +
		"retained checkpoint)"
	if p := kube.RecordedSavepoint(live); p != "" && p != kube.LastStateDummyPath {
		from = "the savepoint the operator recorded, " + p + ", or another complete savepoint or checkpoint (data.flinkstate_latest_checkpoint " +
			"with complete = true finds the newest retained checkpoint)"
	}
	diags.AddAttributeError(at, "No savepoint can be taken before this upgrade",
		fmt.Sprintf("FlinkDeployment %s/%s was not changed: %s, so no savepoint can be taken (the operator abandons a savepoint of a job "+
			"that is not running), and the operator would not restore the new spec by itself: it has %s (%s).\n\nWays out: set "+
			"job.initial_savepoint_path to %s: the operator redeploys from it without a running job. Or, if the job holds no state worth "+
			"keeping, set job.upgrade_mode = \"stateless\": the job starts from empty state.", ns, name, job, src.From, src.Why, from))
}

// planNotRunningUpgrade says at plan, for an update savepoint_before_upgrade
// covers while the job is not running (job_state as last read), that no
// savepoint can be taken and what the new spec starts from; the apply
// reads the operator's status again and decides (notRunningUpgrade).
// recorded is the savepoint the operator had on record when the
// deployment was last read (kube.RecordedSavepoint).
func planNotRunningUpgrade(ctx context.Context, plan, state *deploymentModel, unwritten []string, recorded string, diags *diag.Diagnostics) {
	if plan.SavepointFirst == nil || state == nil || state.jobState() == "suspended" || state.JobState.IsUnknown() ||
		state.JobState.ValueString() == "RUNNING" || state.JobState.ValueString() == "" {
		return
	}
	prior, planned := state.desired(ctx, unwritten), plan.desired(ctx, unwritten)
	if changed, known := flinkdeploy.JobChanged(prior, planned); !known || !changed {
		return
	}
	diags.AddAttributeWarning(path.Root("savepoint_before_upgrade"), "No savepoint can be taken before this change",
		fmt.Sprintf("The job of FlinkDeployment %s/%s is %s, not running, so no savepoint can be taken first (the operator abandons a "+
			"savepoint of a job that is not running). The new spec starts from %s.", plan.Namespace.ValueString(), plan.Name.ValueString(),
			state.JobState.ValueString(), flinkdeploy.NotRunningStart(prior, planned, recorded)))
}
