package provider

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/deployop"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// Destroy and replace keep a stateful deployment's state: a final savepoint
// before the FlinkDeployment is deleted (deployop.FinalSavepoint), carried
// into the replacement. What they keep is the domain's
// (flinkdeploy.PlanDestroy, flinkdeploy.PlanReplace); this file converts
// and reports.
//
// How the replacement learns of it: Terraform plans a replacement twice,
// the second time with a null prior state but the first call's private data
// (PriorPrivate = plannedPrivate, terraform internal/terraform
// node_resource_abstract_instance.go), and hands that plan's private data to
// the destroy half (plans.ResourceInstanceChange.Simplify keeps Private). So
// the first call records where the replacement comes from, the second where
// it goes, and Delete annotates the final savepoint with the new
// deployment's namespace/name (kube.CarryToAnnotation), which Create finds.

// keepsState: a final savepoint applies (flinkdeploy.Desired.KeepsState).
func (m *deploymentModel) keepsState() bool { return m.shape().KeepsState() }

// stateSettings is the state block as the provider writes it (the zero
// value when it cannot be read yet).
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

// planDestroy says what state survives a destroy; failed: how the last
// destroy's final savepoint failed (kube.FinalSavepointFailedAnnotation).
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

// planReplace says what state survives a replacement and records in the
// plan's private data what is replaced (see the comment at the top).
func planReplace(ctx context.Context, plan, state *deploymentModel, private *deploymentPrivate, diags *diag.Diagnostics) {
	kind, f, ok := flinkdeploy.PlanReplace(state.shape(), plan.shape(), plan.Namespace.ValueString(), plan.restorePath().IsUnknown(),
		state.finalFacts(ctx, ""))
	if kind.Carries() {
		// The handover, or (the old job not running now) whatever final
		// savepoint the destroy half can still record.
		private.ReplaceFrom = state.Namespace.ValueString() + "/" + state.Name.ValueString()
	}
	if ok {
		addNotices(diags, f.Notice())
	}
}

// planCarry runs in the second plan of a replacement: it records where the
// state goes.
func planCarry(plan *deploymentModel, private *deploymentPrivate) {
	if private.ReplaceFrom != "" {
		private.CarryTo = plan.Namespace.ValueString() + "/" + plan.Name.ValueString()
	}
}

// takeFinalSavepoint runs before a FlinkDeployment is deleted
// (deployop.FinalSavepoint): an error means the delete must not happen.
// uid: the object this resource owns ("" for any).
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

// consumeCarried marks the final savepoint the create of ns/name started
// from (path) as used (kube.CarryTarget.Consume).
func consumeCarried(ctx context.Context, c *kube.Client, ns, name, path string, diags *diag.Diagnostics) {
	if rep, failed := (kube.CarryTarget{Namespace: ns, Name: name}).Consume(ctx, c.Dynamic, path); failed {
		addReport(diags, "", rep)
	}
}

// refuseSessionDelete: deployop.RefuseSessionDelete of a deployment
// without a job; whether it refused.
func refuseSessionDelete(ctx context.Context, c *kube.Client, state *deploymentModel, timeout time.Duration, diags *diag.Diagnostics) bool {
	if state.Job != nil {
		return false
	}
	halt := deployop.RefuseSessionDelete(ctx, c.Dynamic, state.Namespace.ValueString(), state.Name.ValueString(),
		stringMap(ctx, state.FlinkConfiguration, diags), timeout)
	addHalt(diags, halt)
	return halt != nil
}
