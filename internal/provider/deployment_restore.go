package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
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
// new restore path: the operator then needs a new savepointRedeployNonce.
func redeploys(plan, state *deploymentModel) bool {
	p := plan.restorePath()
	return !p.IsNull() && !p.IsUnknown() && p.ValueString() != "" && !p.Equal(state.restorePath())
}

// nextNonce is a new non-null nonce after the state's (the operator redeploys
// on a change to a different non-null value: JobSpec.savepointRedeployNonce,
// flink-kubernetes-operator-api release-1.15.0).
func nextNonce(state *deploymentModel) types.Int64 {
	return types.Int64Value(state.RedeployNonce.ValueInt64() + 1)
}

// planRestore fills savepoint_redeploy_nonce and upgrade_savepoint_path in
// the plan and warns about what restoring does. state is nil on create.
func planRestore(ctx context.Context, plan, state *deploymentModel, diags *diag.Diagnostics) {
	at := path.Root("job")
	if plan.Job != nil && plan.Job.AllowNonRestoredState.ValueBool() {
		diags.AddAttributeWarning(at.AtName("allow_non_restored_state"), "State may be dropped on restore",
			"allow_non_restored_state = true lets the job start although state in the savepoint or checkpoint maps to no operator of the "+
				"new job: that state is silently dropped (execution.state-recovery.ignore-unclaimed-state). Set it only for a deliberate "+
				"topology change, and remove it afterwards.")
	}
	if plan.Job != nil && plan.Job.ClaimMode.ValueString() == "CLAIM" && !plan.restorePath().IsNull() {
		diags.AddAttributeWarning(at.AtName("claim_mode"), "Flink may delete the restored snapshot",
			"claim_mode = \"CLAIM\" hands the snapshot at job.initial_savepoint_path to the job, which deletes it once newer checkpoints "+
				"subsume it. If a flinkstate_snapshot keeps that savepoint (dispose_on_delete = false or already_exists), or you need it "+
				"to roll back, use NO_CLAIM (Flink's default).")
	}
	if state == nil {
		plan.RedeployNonce = types.Int64Null()
		plan.UpgradeSavepoint = types.StringNull()
		return
	}
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
	if plan.SavepointFirst != nil {
		var d diag.Diagnostics
		ps, okP := plan.spec(ctx, &d)
		ss, okS := state.spec(ctx, &d)
		if !okP || !okS || ss.JobChanged(ps) {
			plan.UpgradeSavepoint = types.StringUnknown()
		}
	}
}

// verifyRestoreTarget checks, before the deployment is created or
// redeployed from job.initial_savepoint_path, that the path holds _metadata.
func (r *deploymentResource) verifyRestoreTarget(ctx context.Context, plan, state *deploymentModel, diags *diag.Diagnostics) {
	p := plan.restorePath()
	at := path.Root("job").AtName("initial_savepoint_path")
	if !p.IsNull() && !p.IsUnknown() {
		// Checked again here, not only by the schema's validator: nothing
		// planned to restore is deployed without its path.
		if msg := checkpoint.ValidateRestorePath(p.ValueString()); msg != "" {
			diags.AddAttributeError(at, "Invalid restore path", fmt.Sprintf("FlinkDeployment %s/%s was not changed: job.initial_savepoint_path %q %s.",
				plan.Namespace.ValueString(), plan.Name.ValueString(), p.ValueString(), msg))
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
	if err := checkpoint.VerifyRestoreTarget(ctx, c.S3, p.ValueString()); err != nil {
		diags.AddAttributeError(at, "Restore target is not a completed snapshot",
			fmt.Sprintf("FlinkDeployment %s/%s was not changed: %s.", plan.Namespace.ValueString(), plan.Name.ValueString(), err))
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
// update changes the job and savepoint_before_upgrade is set, and waits for
// COMPLETED; it records the path in plan. An error leaves the deployment
// untouched: the caller must not apply.
func (r *deploymentResource) savepointBeforeUpgrade(ctx context.Context, c *kube.Client, plan, state *deploymentModel, diags *diag.Diagnostics) {
	plan.UpgradeSavepoint = state.UpgradeSavepoint
	if plan.SavepointFirst == nil || (state.Job != nil && state.Job.State.ValueString() == "suspended") {
		return
	}
	ps, okP := plan.spec(ctx, diags)
	ss, okS := state.spec(ctx, diags)
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
	format := plan.SavepointFirst.FormatType.ValueString()
	if format == "" {
		format = "CANONICAL"
	}
	ns, name := plan.Namespace.ValueString(), plan.Name.ValueString()
	// A new FlinkStateSnapshot of the deployment's job, kept (not disposed)
	// when the object is deleted; backoffLimit 0: one attempt, its failure is
	// the update's (FlinkStateSnapshotSpec, operator release-1.15.0).
	spec := kube.SnapshotSpec{DeploymentName: name, Type: "savepoint", FormatType: format, DisposeOnDelete: false, BackoffLimit: 0}
	created, err := c.Dynamic.Resource(kube.FlinkStateSnapshotGVR).Namespace(ns).Create(ctx,
		spec.Object(ns, "", name+"-upgrade-"), metav1.CreateOptions{FieldManager: kube.FieldManager})
	if err != nil {
		diags.AddAttributeError(at, "Savepoint before upgrade failed",
			fmt.Sprintf("FlinkDeployment %s/%s was not changed: creating the FlinkStateSnapshot: %s", ns, name, readableAPIError(err)))
		return
	}
	st, err := kube.WaitSnapshot(ctx, c.Dynamic, ns, created.GetName(), timeout, upgradeSnapshotPoll)
	if err != nil {
		diags.AddAttributeError(at, "Savepoint before upgrade failed",
			fmt.Sprintf("FlinkDeployment %s/%s was not changed and keeps running its current spec: %s. Fix the cause and apply again "+
				"(a new savepoint is taken), or remove savepoint_before_upgrade to upgrade without one.", ns, name, err))
		return
	}
	plan.UpgradeSavepoint = types.StringValue(st.Path)
}
