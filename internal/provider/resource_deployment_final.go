package provider

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
)

// Destroy and replace keep a stateful deployment's state: a final savepoint
// before the FlinkDeployment is deleted, carried into the replacement.
//
// Deleting a FlinkDeployment makes the operator cancel a running job without
// a savepoint (kubernetes.operator.job.savepoint-on-deletion defaults to
// false) and delete its HA metadata (ApplicationReconciler.cleanupInternal,
// AbstractFlinkService.deleteClusterDeployment; flink-kubernetes-operator
// release-1.15.0), so the provider takes the savepoint itself first.
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

// savepointDir is where the final savepoint goes (for the plan's words).
func (m *deploymentModel) savepointDir(ctx context.Context) string {
	var d diag.Diagnostics
	if in, ok := m.input(ctx, nil, &d); ok && in.State.SavepointDir != "" {
		return in.State.SavepointDir
	}
	return "the deployment's savepoint directory"
}

func (m *deploymentModel) checkpointDir(ctx context.Context) string {
	var d diag.Diagnostics
	if in, ok := m.input(ctx, nil, &d); ok && in.State.CheckpointDir != "" {
		return in.State.CheckpointDir
	}
	return "the checkpoint directory"
}

// planDestroy says what state survives a destroy. failed is what the last
// destroy's final savepoint ended with, when it did not complete
// (kube.FinalSavepointFailedAnnotation, read into private state by Read).
func planDestroy(ctx context.Context, state *deploymentModel, failed string, diags *diag.Diagnostics) {
	id := state.Namespace.ValueString() + "/" + state.Name.ValueString()
	js := state.JobState.ValueString()
	notRunning := !state.JobState.IsUnknown() && js != "" && js != "RUNNING" && state.LifecycleState.ValueString() != "SUSPENDED"
	switch {
	case state.keepsState() && notRunning:
		// takeFinalSavepoint: no savepoint of a job that is not running
		// (the operator would abandon it).
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
	case state.keepsState() && failed != "":
		diags.AddWarning("Destroy takes a final savepoint, which failed last time",
			fmt.Sprintf("Before FlinkDeployment %s is deleted, a final savepoint of its job is taken into %s. The last destroy's did not "+
				"complete (%s); if this one fails too, the destroy is refused again and nothing is deleted. Set final_savepoint = false "+
				"(and apply) to destroy without one.", id, state.savepointDir(ctx), failed))
	case state.keepsState():
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
	case state.Job != nil && state.Job.UpgradeMode.ValueString() != "stateless" && state.Job.UpgradeMode.ValueString() != "":
		diags.AddWarning("Destroy without a final savepoint",
			fmt.Sprintf("final_savepoint = false: the operator cancels the job of %s without a savepoint and deletes its HA metadata "+
				"(ApplicationReconciler.cleanupInternal). Only the checkpoints retained under %s remain.", id, state.checkpointDir(ctx)))
	}
}

// planReplace says what state survives a replacement and records, in the
// plan's private data, what is replaced (see the comment at the top). What
// the new job starts from is the domain's (flinkdeploy.ReplacementRestores);
// a pinned job.initial_savepoint_path that would roll the state back past
// the handover is refused.
func planReplace(ctx context.Context, plan, state *deploymentModel, private *deploymentPrivate, diags *diag.Diagnostics) {
	from := state.Namespace.ValueString() + "/" + state.Name.ValueString()
	js := state.JobState.ValueString()
	oldHasState := state.JobState.IsUnknown() || js == "" || js == "RUNNING" || state.LifecycleState.ValueString() == "SUSPENDED"
	source, ambiguous := flinkdeploy.ReplacementRestores(state.shape(), plan.shape(), oldHasState)
	if plan.restorePath().IsUnknown() {
		// Known at apply only (a data source read then): the create
		// restores it, as configured.
		source, ambiguous = flinkdeploy.FromPinned, false
	}
	switch {
	case ambiguous:
		diags.AddAttributeError(path.Root("job").AtName("initial_savepoint_path"), "Replacement would roll the job's state back",
			fmt.Sprintf("FlinkDeployment %s is replaced (destroyed, then created). Its job is stopped with a final savepoint first, but "+
				"job.initial_savepoint_path still names %s, the path this deployment was created from, and a new deployment restores "+
				"job.initial_savepoint_path when it is set: the replacement would start from that older savepoint, dropping everything "+
				"the job did since (or be refused after the old job is gone, if that savepoint was cleaned up). Nothing was changed. "+
				"To carry the job's current state across, remove job.initial_savepoint_path from the configuration (and from "+
				"lifecycle.ignore_changes, if it is listed there): the replacement then starts from the final savepoint. To restore "+
				"%s on purpose, destroy this deployment first (terraform apply -destroy -target=...), then apply: the create restores it.",
				from, plan.restorePath().ValueString(), plan.restorePath().ValueString()))
	case source == flinkdeploy.FromPinned:
		what := "a final savepoint is taken first (kept)"
		if !state.keepsState() {
			what = fmt.Sprintf("without a final savepoint (upgrade_mode %q, final_savepoint %v)", state.Job.UpgradeMode.ValueString(),
				state.FinalSavepoint.ValueBool())
		} else if !oldHasState {
			what = "its job is not running, so no final savepoint is taken"
		}
		diags.AddWarning("Replacement starts from job.initial_savepoint_path",
			fmt.Sprintf("FlinkDeployment %s is replaced: %s, and the new deployment starts from job.initial_savepoint_path, as "+
				"configured, not from a final savepoint.", from, what))
	case !state.keepsState():
		diags.AddWarning("Replacement starts without state",
			fmt.Sprintf("FlinkDeployment %s is replaced (destroyed, then created): without a final savepoint (upgrade_mode %q, "+
				"final_savepoint %v) the new deployment's job starts from empty state, unless job.initial_savepoint_path says otherwise. "+
				"Retained checkpoints stay under %s.", from, state.Job.UpgradeMode.ValueString(), state.FinalSavepoint.ValueBool(), state.checkpointDir(ctx)))
	default:
		// The handover, or (the old job not running now) whatever final
		// savepoint the destroy half can still record.
		private.ReplaceFrom = from
		moved := ""
		if plan.Namespace.ValueString() != state.Namespace.ValueString() {
			// kube.CarriedSavepoint: the FlinkStateSnapshot stays with the
			// deployment it was taken of (JobReference has no namespace).
			moved = fmt.Sprintf(" Its FlinkStateSnapshot stays in %s, where the create in %s finds it by listing FlinkStateSnapshots in "+
				"all namespaces; without that permission the destroy is refused before the savepoint.", state.Namespace.ValueString(),
				plan.Namespace.ValueString())
		}
		if source == flinkdeploy.FromNothing {
			diags.AddWarning("Replacement may start without state",
				fmt.Sprintf("FlinkDeployment %s is replaced (destroyed, then created), but its job is %s (lifecycle %s), not running: no "+
					"final savepoint can be taken, and the new deployment's job starts from empty state. Retained checkpoints stay "+
					"under %s (data.flinkstate_latest_checkpoint with complete = true finds the newest complete one; set "+
					"job.initial_savepoint_path to it to start from it).%s", from, js, orNoneState(state.LifecycleState.ValueString()),
					state.checkpointDir(ctx), moved))
			return
		}
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

// takeFinalSavepoint runs before a FlinkDeployment is deleted. An error
// means the delete must not happen.
// Only the object this resource owns (uid; "" for any) is snapshotted:
// deleteOwned leaves another one of that name alone.
// finalStopNotRunningFor is how long the final stop waits for a job seen
// not running after the stop was asked (kube.StopOptions.NotRunningFor):
// long enough for a restart of the job, short of the destroy's timeout.
const finalStopNotRunningFor = 30 * time.Second

func (r *deploymentResource) takeFinalSavepoint(ctx context.Context, c *kube.Client, state *deploymentModel, uid, carryTo string, timeout time.Duration, diags *diag.Diagnostics) {
	if !state.keepsState() {
		return
	}
	ns, name := state.Namespace.ValueString(), state.Name.ValueString()
	live, err := kube.GetFlinkDeployment(ctx, c.Dynamic, ns, name)
	if notfound.Is(err) || (err == nil && uid != "" && string(live.GetUID()) != uid) {
		return
	}
	if err != nil {
		addProblem(diags, "Destroying", "FlinkDeployment "+ns+"/"+name, "reading it before its final savepoint: "+readableAPIError(err),
			"Nothing was deleted. Apply again once the API server answers.")
		return
	}
	st := kube.ReadDeploymentStatus(live)
	format := state.finalSavepointFormat(ctx)
	existing := ""
	if st.JobState != "RUNNING" {
		// A suspend took the savepoint already (savepoint mode) and the
		// operator recorded it (AbstractJobReconciler.setUpgradeSavepointPath);
		// a last-state suspend records the HA dummy, which is no savepoint.
		p, _, _ := unstructured.NestedString(live.Object, "status", "jobStatus", "upgradeSavepointPath")
		if st.LifecycleState != "SUSPENDED" || p == "" || p == kube.LastStateDummyPath {
			diags.AddWarning("No final savepoint",
				fmt.Sprintf("The job of FlinkDeployment %s/%s is %s (lifecycle %s), so no savepoint can be taken before it is deleted. "+
					"The checkpoints it retained stay under %s (data.flinkstate_latest_checkpoint finds them).",
					ns, name, orNoneState(st.JobState), orNoneState(st.LifecycleState), state.checkpointDir(ctx)))
			return
		}
		existing = p
	}
	if to, _, _ := strings.Cut(carryTo, "/"); carryTo != "" && to != ns {
		// The final savepoint stays in ns; the replacement in another
		// namespace finds it by listing every namespace
		// (kube.CarriedSavepoint). Without that permission it would start
		// from nothing: refuse before any savepoint or delete.
		if err := kube.SnapshotsListableEverywhere(ctx, c.Dynamic); err != nil {
			addProblem(diags, "Destroying", "FlinkDeployment "+ns+"/"+name,
				"its replacement "+carryTo+" is in another namespace, and would find the final savepoint (kept in "+ns+
					", with its deployment) by listing FlinkStateSnapshots in all namespaces, which failed: "+readableAPIError(err),
				"Nothing was deleted. Allow list on flinkstatesnapshots.flink.apache.org in all namespaces, or take a savepoint "+
					"(flinkstate_snapshot) and set job.initial_savepoint_path of the new deployment to its path.")
			return
		}
	}
	drained := false
	if existing == "" {
		// Stop, don't cancel: the operator stops the running job with a
		// savepoint (kube.StopWithSavepoint), so nothing is processed
		// after the state the next job starts from. A savepoint taken while
		// the job runs on, then a cancel, would have the next job process
		// again what the old one processed in between, and an exactly-once
		// sink commit it twice: an intermediate savepoint commits no side
		// effects (FLINK-25191, Flink 1.15), the old job's later
		// checkpoints do.
		drained = state.shape().FinalDrain(carryTo != "")
		res, err := kube.StopWithSavepoint(ctx, c.Dynamic, ns, name, kube.StopOptions{Drain: drained, FormatType: format, Retries: kube.FinalSavepointRetries, NotRunningFor: finalStopNotRunningFor}, timeout, upgradeSnapshotPoll)
		if err != nil {
			r.finalSavepointFailed(ctx, c, state, "the operator's stop of the job with a savepoint (job.state suspended, upgrade_mode savepoint)", err, diags)
			return
		}
		existing = res.Path
	}
	obj := kube.FinalSavepointObject(ns, name, format, existing, carryTo)
	created, err := kube.CreateSnapshot(ctx, c.Dynamic, ns, obj)
	if err != nil {
		addProblem(diags, "Destroying", "FlinkDeployment "+ns+"/"+name, "recording its final savepoint "+existing+
			" in a FlinkStateSnapshot: "+readableAPIError(err),
			"Nothing was deleted; the job is stopped (suspended) with that savepoint recorded in the FlinkDeployment's status, which the "+
				"next destroy records again. Fix the cause and apply again, or set final_savepoint = false (and apply) to delete it without one.")
		return
	}
	sp, err := kube.WaitSnapshot(ctx, c.Dynamic, ns, created.GetName(), timeout, upgradeSnapshotPoll)
	if err != nil || sp.Path == "" {
		if err == nil {
			err = fmt.Errorf("the operator reported no path")
		}
		r.finalSavepointFailed(ctx, c, state, "FlinkStateSnapshot "+ns+"/"+created.GetName(), err, diags)
		return
	}
	how := "The job was stopped with it: nothing was processed after it."
	if drained {
		how = "The job was stopped with it, drained (drain_on_destroy: every event-time timer and window fired first)."
	}
	next := "It is kept after the destroy; start a deployment from it with job.initial_savepoint_path."
	if carryTo != "" {
		next = "The replacement " + carryTo + " starts from it."
	}
	diags.AddWarning("Final savepoint taken",
		fmt.Sprintf("FlinkDeployment %s/%s: final savepoint %s (FlinkStateSnapshot %s/%s). %s %s", ns, name, sp.Path, ns, created.GetName(), how, next))
}

// finalSavepointFailed refuses a destroy whose final savepoint did not
// complete, saying what the operator reported (the snapshot's end and the
// deployment's status as it is now: a JobManager that stopped answering
// makes the operator abandon the savepoint after its trigger timed out,
// and move the job from RUNNING to RECONCILING — JobStatusObserver
// .ifRunningMoveToReconciling, FlinkStateSnapshotUtils
// .abandonSnapshotIfJobNotRunning), what survives and the choices. It
// records the failure on the FlinkDeployment
// (kube.FinalSavepointFailedAnnotation), so the next destroy's plan says
// that no final savepoint is possible now (planDestroy).
func (r *deploymentResource) finalSavepointFailed(ctx context.Context, c *kube.Client, state *deploymentModel, what string, cause error, diags *diag.Diagnostics) {
	ns, name := state.Namespace.ValueString(), state.Name.ValueString()
	now := "its status could not be read again"
	jobRunning := true
	if live, err := kube.GetFlinkDeployment(ctx, c.Dynamic, ns, name); err == nil {
		st := kube.ReadDeploymentStatus(live)
		jm, _, _ := unstructured.NestedString(live.Object, "status", "jobManagerDeploymentStatus")
		now = fmt.Sprintf("the operator now reports its job %s (lifecycle %s, JobManager %s)", orNoneState(st.JobState), orNoneState(st.LifecycleState), orNoneState(jm))
		jobRunning = st.JobState == "RUNNING"
	}
	note := fmt.Sprintf("%s %s: %s", time.Now().UTC().Format(time.RFC3339), what, cause)
	if err := kube.AnnotateDeployment(ctx, c.Dynamic, ns, name, kube.FinalSavepointFailedAnnotation, note); err != nil {
		tflog.Warn(ctx, "recording the failed final savepoint on the FlinkDeployment", map[string]any{"error": err.Error()})
	}
	next := "destroy again once it is fixed: a savepoint is taken then"
	if !jobRunning {
		next = "bring the JobManager back until the job runs again, then destroy again: a savepoint is taken then. A destroy " +
			"while the job is not running cannot take one: its plan says so, and it deletes the FlinkDeployment without a savepoint"
	}
	addProblem(diags, "Destroying", "FlinkDeployment "+ns+"/"+name,
		fmt.Sprintf("its final savepoint did not complete (%s): %s; %s", what, cause, now),
		fmt.Sprintf("Nothing was deleted. What survives today: the checkpoints the job retained under %s "+
			"(data.flinkstate_latest_checkpoint with complete = true finds the newest complete one), and its HA metadata (under %s and "+
			"in its ConfigMaps), which the operator deletes with the FlinkDeployment (ApplicationReconciler.cleanupInternal). Choices: "+
			"%s; or set final_savepoint = false (and apply), then destroy: the FlinkDeployment is deleted without a savepoint, and "+
			"a new deployment starts from the newest retained checkpoint through job.initial_savepoint_path.",
			state.checkpointDir(ctx), state.haDir(ctx), next))
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

// backend is the deployment's state.backend ("" when it cannot be read).
func (m *deploymentModel) backend(ctx context.Context) string {
	var d diag.Diagnostics
	if in, ok := m.input(ctx, nil, &d); ok {
		return in.State.Backend
	}
	return ""
}

// haDir is where the HA metadata goes (for the plan's words).
func (m *deploymentModel) haDir(ctx context.Context) string {
	var d diag.Diagnostics
	if in, ok := m.input(ctx, nil, &d); ok && in.State.HADir != "" {
		return in.State.HADir
	}
	return "the HA directory"
}

func orNoneState(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

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
