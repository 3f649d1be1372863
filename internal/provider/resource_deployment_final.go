package provider

import (
	"context"
	"fmt"
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
// (flinkdeploy.DestroyKeeps). failed is what the last destroy's final
// savepoint ended with, when it did not complete
// (kube.FinalSavepointFailedAnnotation, read into private state by Read).
func planDestroy(ctx context.Context, state *deploymentModel, failed string, diags *diag.Diagnostics) {
	id := state.Namespace.ValueString() + "/" + state.Name.ValueString()
	js := state.JobState.ValueString()
	switch flinkdeploy.DestroyKeeps(state.shape(), state.finalSavepointPossible(), failed != "") {
	case flinkdeploy.DestroyCannotStop:
		last := ""
		if failed != "" {
			last = " The last destroy's final savepoint did not complete (" + failed + ")."
		}
		diags.AddWarning("No final savepoint is possible now",
			fmt.Sprintf("The job of FlinkDeployment %s is %s (lifecycle %s), not running, so no final savepoint can be taken before "+
				"it is deleted.%s This destroy deletes it without a savepoint: the checkpoints it retained stay under %s "+
				"(data.flinkstate_latest_checkpoint with complete = true finds the newest complete one), and the operator deletes its "+
				"HA metadata with it. To keep a savepoint instead, do not apply this destroy: bring the job back to running and plan "+
				"again.", id, js, orNoneState(state.LifecycleState.ValueString()), last, state.checkpointDir(ctx)))
	case flinkdeploy.DestroyStopsAgain:
		diags.AddWarning("Destroy takes a final savepoint, which failed last time",
			fmt.Sprintf("Before FlinkDeployment %s is deleted, a final savepoint of its job is taken into %s. The last destroy's did not "+
				"complete (%s); if this one fails too, the destroy is refused again and nothing is deleted. Set final_savepoint = false "+
				"(and apply) to destroy without one.", id, state.savepointDir(ctx), failed))
	case flinkdeploy.DestroyStops:
		drain := "not drained (drain_on_destroy = false)"
		if state.shape().FinalDrain(false) {
			drain = "drained first (drain_on_destroy: every event-time timer and window fires)"
		}
		diags.AddWarning("Destroy stops the job with a final savepoint",
			fmt.Sprintf("Before FlinkDeployment %s is deleted, the operator stops its running job with a savepoint into %s, %s, and "+
				"the provider waits for it: nothing is processed after it. It is recorded in FlinkStateSnapshot %s-final-*, kept after "+
				"the destroy; its path is reported. If the stop fails, the job runs on and the destroy is refused. Retained checkpoints "+
				"stay under %s. Set final_savepoint = false (and apply) to destroy without one.",
				id, state.savepointDir(ctx), drain, state.Name.ValueString(), state.checkpointDir(ctx)))
	case flinkdeploy.DestroyCancels:
		diags.AddWarning("Destroy without a final savepoint",
			fmt.Sprintf("final_savepoint = false: the operator cancels the job of %s without a savepoint and deletes its HA metadata "+
				"(ApplicationReconciler.cleanupInternal). Only the checkpoints retained under %s remain.", id, state.checkpointDir(ctx)))
	}
}

// finalSavepointPossible: the job as last read can give a final savepoint
// (flinkdeploy.FinalSavepointPossible).
func (m *deploymentModel) finalSavepointPossible() bool {
	return flinkdeploy.FinalSavepointPossible(m.JobState.ValueString(), !m.JobState.IsUnknown(), m.LifecycleState.ValueString())
}

// planReplace says what state survives a replacement and records, in the
// plan's private data, what is replaced (see the comment at the top). What
// the new job starts from is the domain's (flinkdeploy.Replacement); a
// pinned job.initial_savepoint_path that would roll the state back past
// the handover is refused.
func planReplace(ctx context.Context, plan, state *deploymentModel, private *deploymentPrivate, diags *diag.Diagnostics) {
	from := state.Namespace.ValueString() + "/" + state.Name.ValueString()
	js := state.JobState.ValueString()
	kind := flinkdeploy.Replacement(state.shape(), plan.shape(), state.finalSavepointPossible(), plan.restorePath().IsUnknown())
	pinned := func(what string) {
		diags.AddWarning("Replacement starts from job.initial_savepoint_path",
			fmt.Sprintf("FlinkDeployment %s is replaced: %s, and the new deployment starts from job.initial_savepoint_path, as "+
				"configured, not from a final savepoint.", from, what))
	}
	moved := ""
	if kind.Carries() {
		// The handover, or (the old job not running now) whatever final
		// savepoint the destroy half can still record.
		private.ReplaceFrom = from
		if plan.Namespace.ValueString() != state.Namespace.ValueString() {
			// kube.CarriedSavepoint: the FlinkStateSnapshot stays with the
			// deployment it was taken of (JobReference has no namespace).
			moved = fmt.Sprintf(" Its FlinkStateSnapshot stays in %s, where the create in %s finds it by listing FlinkStateSnapshots in "+
				"all namespaces; without that permission the destroy is refused before the savepoint.", state.Namespace.ValueString(),
				plan.Namespace.ValueString())
		}
	}
	switch kind {
	case flinkdeploy.ReplaceRollsBack:
		diags.AddAttributeError(path.Root("job").AtName("initial_savepoint_path"), "Replacement would roll the job's state back",
			fmt.Sprintf("FlinkDeployment %s is replaced (destroyed, then created). Its job is stopped with a final savepoint first, but "+
				"job.initial_savepoint_path still names %s, the path this deployment was created from, and a new deployment restores "+
				"job.initial_savepoint_path when it is set: the replacement would start from that older savepoint, dropping everything "+
				"the job did since (or be refused after the old job is gone, if that savepoint was cleaned up). Nothing was changed. "+
				"To carry the job's current state across, remove job.initial_savepoint_path from the configuration (and from "+
				"lifecycle.ignore_changes, if it is listed there): the replacement then starts from the final savepoint. To restore "+
				"%s on purpose, destroy this deployment first (terraform apply -destroy -target=...), then apply: the create restores it.",
				from, plan.restorePath().ValueString(), plan.restorePath().ValueString()))
	case flinkdeploy.ReplacePinned:
		pinned("a final savepoint is taken first (kept)")
	case flinkdeploy.ReplacePinnedNoFinal:
		pinned(fmt.Sprintf("without a final savepoint (upgrade_mode %q, final_savepoint %v)", state.Job.UpgradeMode.ValueString(),
			state.FinalSavepoint.ValueBool()))
	case flinkdeploy.ReplacePinnedNotRunning:
		pinned("its job is not running, so no final savepoint is taken")
	case flinkdeploy.ReplaceWithoutState:
		diags.AddWarning("Replacement starts without state",
			fmt.Sprintf("FlinkDeployment %s is replaced (destroyed, then created): without a final savepoint (upgrade_mode %q, "+
				"final_savepoint %v) the new deployment's job starts from empty state, unless job.initial_savepoint_path says otherwise. "+
				"Retained checkpoints stay under %s.", from, state.Job.UpgradeMode.ValueString(), state.FinalSavepoint.ValueBool(), state.checkpointDir(ctx)))
	case flinkdeploy.ReplaceNothingToCarry:
		diags.AddWarning("Replacement may start without state",
			fmt.Sprintf("FlinkDeployment %s is replaced (destroyed, then created), but its job is %s (lifecycle %s), not running: no "+
				"final savepoint can be taken, and the new deployment's job starts from empty state. Retained checkpoints stay "+
				"under %s (data.flinkstate_latest_checkpoint with complete = true finds the newest complete one; set "+
				"job.initial_savepoint_path to it to start from it).%s", from, js, orNoneState(state.LifecycleState.ValueString()),
				state.checkpointDir(ctx), moved))
	case flinkdeploy.ReplaceHandover:
		diags.AddWarning("Replacement carries the job's state across",
			fmt.Sprintf("FlinkDeployment %s is replaced (destroyed, then created): the operator stops its running job with a savepoint "+
				"into %s (never drained) before the delete, and the new deployment's job starts from it (upgrade_savepoint_path shows "+
				"the path): nothing the old job processed after the savepoint is processed again. If the stop fails, the job runs on "+
				"and nothing is deleted.%s", from, state.savepointDir(ctx), moved))
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

func orNoneState(s string) string { return kube.OrNone(s) }

// findCarried is the path of a replacement's final savepoint that waits
// for this create (deploymentOp.CarriedPath), when the create restores from
// nothing else; "" otherwise.
func (r *deploymentResource) findCarried(ctx context.Context, c *kube.Client, plan *deploymentModel, diags *diag.Diagnostics) string {
	if !plan.restorePath().IsNull() || plan.Job == nil {
		return ""
	}
	carried, err := kube.CarriedSavepoint(ctx, c.Dynamic, plan.Namespace.ValueString(), plan.Name.ValueString())
	if err != nil {
		addProblem(diags, "Creating", "FlinkDeployment "+plan.Namespace.ValueString()+"/"+plan.Name.ValueString(),
			"looking for the final savepoint of the deployment it replaces: "+err.Error(), "Nothing was created. Apply again.")
		return ""
	}
	return carried.Path
}

// consumeCarried marks the final savepoint a create started from (path) as used.
func consumeCarried(ctx context.Context, c *kube.Client, plan *deploymentModel, path string, diags *diag.Diagnostics) {
	ns, name := plan.Namespace.ValueString(), plan.Name.ValueString()
	carried, err := kube.CarriedSavepoint(ctx, c.Dynamic, ns, name)
	if err == nil && carried.Snapshot != "" && carried.Path == path {
		err = kube.ConsumeCarry(ctx, c.Dynamic, carried.Namespace, carried.Snapshot)
	}
	if err != nil {
		diags.AddWarning("Final savepoint not marked as used",
			fmt.Sprintf("FlinkDeployment %s/%s started from %s, but its FlinkStateSnapshot still names it as its replacement: %s. Remove "+
				"the annotation %s from it, or a later create of %s/%s would start from it again.", ns, name, path, err,
				kube.CarryToAnnotation, ns, name))
	}
}
