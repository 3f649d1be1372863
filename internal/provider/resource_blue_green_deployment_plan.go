package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
)

// blueGreenSavepointDirCheck: a transition of a stateful job needs a savepoint
// directory in the child's configuration (BlueGreenUtils.triggerSavepoint:
// Preconditions.checkNotNull(CheckpointingOptions.SAVEPOINT_DIRECTORY), for
// every upgrade mode but stateless: isSavepointRequired); without one the
// operator fails the transition ("Could not trigger Savepoint").
func blueGreenSavepointDirCheck(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var mode types.String
	var st types.Object
	var d diag.Diagnostics
	d.Append(req.Config.GetAttribute(ctx, path.Root("job").AtName("upgrade_mode"), &mode)...)
	d.Append(req.Config.GetAttribute(ctx, path.Root("state"), &st)...)
	if resp.Diagnostics.Append(d...); d.HasError() || mode.IsUnknown() || st.IsUnknown() || mode.ValueString() == flinkconf.UpgradeStateless {
		return
	}
	b := newStateBlock(st)
	if b.str("savepoint_dir").IsNull() && b.str("store_id").IsNull() {
		if mode.IsNull() {
			return // the operator's default, stateless
		}
		what := "upgrade_mode " + mode.ValueString()
		resp.Diagnostics.AddAttributeError(path.Root("state").AtName("savepoint_dir"), "A stateful blue/green deployment needs a savepoint directory",
			"With "+what+" every transition starts the new child from a savepoint of the running one, which the operator writes to the "+
				"savepoint directory (execution.checkpointing.savepoint-dir); without one it fails the transition. Set state.savepoint_dir or state.store_id.")
	}
}

// blueGreenCreateSuspended: the operator does not deploy a new
// FlinkBlueGreenDeployment whose job.state is suspended; it stays
// INITIALIZING_BLUE with its job SUSPENDED until the state is running
// (InitializingBlueStateHandler.handle: "Block initial deployment if
// job.state is SUSPENDED"), so a create would only wait for its timeout.
func blueGreenCreateSuspended(plan *blueGreenModel, diags *diag.Diagnostics) {
	if plan.Job == nil || plan.Job.State.ValueString() != flinkdeploy.JobSuspended {
		return
	}
	diags.AddAttributeError(path.Root("job").AtName("state"), "A blue/green deployment starts running",
		"job.state = \"suspended\" on a new FlinkBlueGreenDeployment: the operator deploys no child until job.state is running. "+
			"Create it running, then suspend it with job.state = \"suspended\" (the active child is suspended in place).")
}
