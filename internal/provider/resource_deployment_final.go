package provider

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// Destroy and replace keep a stateful deployment's state: a final savepoint
// before the FlinkDeployment is deleted (why, and how: kube.FinalStop),
// carried into the replacement. What a destroy or replacement keeps is the
// domain's (flinkdeploy.DestroyKeeps, flinkdeploy.Replacement); this file
// converts and reports.
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

// stateSettings is the deployment's state block as the provider writes it
// (the zero value when it cannot be read yet): for the plan's words.
func (m *deploymentModel) stateSettings(ctx context.Context) flinkconf.State {
	var d diag.Diagnostics
	if in, ok := m.input(ctx, nil, &d); ok {
		return in.State
	}
	return flinkconf.State{}
}

// savepointDir is where the final savepoint goes, checkpointDir where the
// checkpoints are retained, haDir where the HA metadata goes (for the
// plan's words); backend is state.backend ("" when it cannot be read).
func (m *deploymentModel) savepointDir(ctx context.Context) string {
	return orWords(m.stateSettings(ctx).SavepointDir, "the deployment's savepoint directory")
}

func (m *deploymentModel) checkpointDir(ctx context.Context) string {
	return orWords(m.stateSettings(ctx).CheckpointDir, "the checkpoint directory")
}

func (m *deploymentModel) haDir(ctx context.Context) string {
	return orWords(m.stateSettings(ctx).HADir, "the HA directory")
}

func (m *deploymentModel) backend(ctx context.Context) string { return m.stateSettings(ctx).Backend }

func orWords(s, words string) string {
	if s == "" {
		return words
	}
	return s
}

// planDestroy says what state survives a destroy
// (flinkdeploy.PlanDestroy). failed is what the last destroy's final
// savepoint ended with, when it did not complete
// (kube.FinalSavepointFailedAnnotation, read into private state by Read).
func planDestroy(ctx context.Context, state *deploymentModel, failed string, diags *diag.Diagnostics) {
	if f, ok := flinkdeploy.PlanDestroy(state.shape(), state.finalFacts(ctx, failed)); ok {
		addFinding(diags, f)
	}
}

// finalFacts is what the plan of a destroy or replacement of m names
// (flinkdeploy.FinalFacts).
func (m *deploymentModel) finalFacts(ctx context.Context, failed string) flinkdeploy.FinalFacts {
	return flinkdeploy.FinalFacts{Namespace: m.Namespace.ValueString(), Name: m.Name.ValueString(),
		JobState: m.JobState.ValueString(), JobStateKnown: !m.JobState.IsUnknown(), Lifecycle: m.LifecycleState.ValueString(),
		SavepointDir: m.savepointDir(ctx), CheckpointDir: m.checkpointDir(ctx), FinalSavepoint: m.FinalSavepoint.ValueBool(), Failed: failed}
}

// addFinding adds a plan's finding: a refusal names
// job.initial_savepoint_path.
func addFinding(diags *diag.Diagnostics, f flinkdeploy.Finding) {
	if f.Refused {
		diags.AddAttributeError(path.Root("job").AtName("initial_savepoint_path"), f.Summary, f.Detail)
		return
	}
	diags.AddWarning(f.Summary, f.Detail)
}

// planReplace says what state survives a replacement and records, in the
// plan's private data, what is replaced (see the comment at the top). What
// the new job starts from, and the refusal of a pinned
// job.initial_savepoint_path that would roll the state back past the
// handover, are the domain's (flinkdeploy.PlanReplace).
func planReplace(ctx context.Context, plan, state *deploymentModel, private *deploymentPrivate, diags *diag.Diagnostics) {
	kind, f, ok := flinkdeploy.PlanReplace(state.shape(), plan.shape(), plan.Namespace.ValueString(), plan.restorePath().IsUnknown(),
		state.finalFacts(ctx, ""))
	if kind.Carries() {
		// The handover, or (the old job not running now) whatever final
		// savepoint the destroy half can still record.
		private.ReplaceFrom = state.Namespace.ValueString() + "/" + state.Name.ValueString()
	}
	if ok {
		addFinding(diags, f)
	}
}

// planCarry runs in the second plan of a replacement (null prior state,
// the first call's private data): it records where the state goes.
func planCarry(plan *deploymentModel, private *deploymentPrivate) {
	if private.ReplaceFrom != "" {
		private.CarryTo = plan.Namespace.ValueString() + "/" + plan.Name.ValueString()
	}
}

// finalStopNotRunningFor is how long the final stop waits for a job seen
// not running after the stop was asked (kube.StopOptions.NotRunningFor):
// long enough for a restart of the job, short of the destroy's timeout.
const finalStopNotRunningFor = 30 * time.Second

// takeFinalSavepoint runs before a FlinkDeployment is deleted
// (kube.FinalStop) and reports its end (kube.FinalStopResult.Report). An error means
// the delete must not happen. Only the object this resource owns (uid; ""
// for any) is snapshotted: deleteOwned leaves another one of that name
// alone.
func (r *deploymentResource) takeFinalSavepoint(ctx context.Context, c *kube.Client, state *deploymentModel, uid, carryTo string, timeout time.Duration, diags *diag.Diagnostics) {
	if !state.keepsState() {
		return
	}
	q := kube.FinalStopRequest{Namespace: state.Namespace.ValueString(), Name: state.Name.ValueString(), UID: uid,
		Format: state.finalSavepointFormat(ctx), Drain: state.shape().FinalDrain(carryTo != ""), CarryTo: carryTo,
		NotRunningFor: finalStopNotRunningFor, Timeout: timeout, Every: upgradeSnapshotPoll}
	res := kube.FinalStop(ctx, c.Dynamic, q)
	if res.AnnotateErr != nil {
		tflog.Warn(ctx, "recording the failed final savepoint on the FlinkDeployment", map[string]any{"error": res.AnnotateErr.Error()})
	}
	at := kube.FinalStopPlaces{CheckpointDir: state.checkpointDir(ctx), HADir: state.haDir(ctx)}
	if rep, ok := res.Report(q, at); ok {
		addReport(diags, "FlinkDeployment "+q.Namespace+"/"+q.Name, rep)
	}
}

// finalSavepointFormat is the format the final stop asks for: the
// savepoint_before_upgrade format, or NATIVE for a ForSt job
// (flinkconf.SavepointFormatFor); "" leaves the deployment's own.
func (m *deploymentModel) finalSavepointFormat(ctx context.Context) string {
	requested := ""
	if m.SavepointFirst != nil {
		requested = m.SavepointFirst.FormatType.ValueString()
	}
	format, _ := flinkconf.SavepointFormatFor(m.backend(ctx), requested)
	return format
}

// findCarried is the path of a replacement's final savepoint that waits
// for this create (deploymentOp.CarriedPath, kube.CarryTarget.Find), when
// the create restores from nothing else; "" otherwise.
func (r *deploymentResource) findCarried(ctx context.Context, c *kube.Client, plan *deploymentModel, diags *diag.Diagnostics) string {
	if !plan.restorePath().IsNull() || plan.Job == nil {
		return ""
	}
	ns, name := plan.Namespace.ValueString(), plan.Name.ValueString()
	p, rep, ok := kube.CarryTarget{Namespace: ns, Name: name}.Find(ctx, c.Dynamic)
	if !ok {
		addReport(diags, "FlinkDeployment "+ns+"/"+name, rep)
	}
	return p
}

// consumeCarried marks the final savepoint the create of ns/name started
// from (path) as used (kube.CarryTarget.Consume).
func consumeCarried(ctx context.Context, c *kube.Client, ns, name, path string, diags *diag.Diagnostics) {
	if rep, failed := (kube.CarryTarget{Namespace: ns, Name: name}).Consume(ctx, c.Dynamic, path); failed {
		addReport(diags, "", rep)
	}
}
