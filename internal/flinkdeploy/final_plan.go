package flinkdeploy

import "fmt"

// What the plan of a destroy or replacement says about the job's state
// (DestroyKeeps, Replacement), worded once.

// Finding is what a plan says: a warning (Summary, Detail) or, when
// Refused, an error on job.initial_savepoint_path (nothing is applied).
type Finding struct {
	Summary, Detail string
	Refused         bool
}

// FinalFacts are what a destroy's or replacement's words name, as last
// read: the deployment, its job's state, and the words for where its
// state goes (savepoint and checkpoint directories, as the plan words them).
type FinalFacts struct {
	Namespace, Name     string
	JobState, Lifecycle string
	// JobStateKnown is false while the job state is unknown
	// (FinalSavepointPossible).
	JobStateKnown               bool
	SavepointDir, CheckpointDir string
	// FinalSavepoint is final_savepoint as set (false when unset).
	FinalSavepoint bool
	// Failed is what the last destroy's final savepoint ended with, when
	// it did not complete ("" otherwise; kube.FinalSavepointFailedAnnotation).
	Failed string
}

func (f FinalFacts) id() string { return f.Namespace + "/" + f.Name }

// possible is FinalSavepointPossible of the job as last read.
func (f FinalFacts) possible() bool {
	return FinalSavepointPossible(f.JobState, f.JobStateKnown, f.Lifecycle)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// PlanDestroy says what state survives a destroy of prior (DestroyKeeps);
// false: nothing to say (no job state to keep).
func PlanDestroy(prior Desired, f FinalFacts) (Finding, bool) {
	id := f.id()
	switch DestroyKeeps(prior, f.possible(), f.Failed != "") {
	case DestroyCannotStop:
		last := ""
		if f.Failed != "" {
			last = " The last destroy's final savepoint did not complete (" + f.Failed + ")."
		}
		return Finding{Summary: "No final savepoint is possible now",
			Detail: fmt.Sprintf("The job of FlinkDeployment %s is %s (lifecycle %s), not running, so no final savepoint can be taken before "+
				"it is deleted.%s This destroy deletes it without a savepoint: the checkpoints it retained stay under %s "+
				"(data.flinkstate_latest_checkpoint with complete = true finds the newest complete one), and the operator deletes its "+
				"HA metadata with it. To keep a savepoint instead, do not apply this destroy: bring the job back to running and plan "+
				"again.", id, f.JobState, orNone(f.Lifecycle), last, f.CheckpointDir)}, true
	case DestroyStopsAgain:
		return Finding{Summary: "Destroy takes a final savepoint, which failed last time",
			Detail: fmt.Sprintf("Before FlinkDeployment %s is deleted, a final savepoint of its job is taken into %s. The last destroy's did not "+
				"complete (%s); if this one fails too, the destroy is refused again and nothing is deleted. Set final_savepoint = false "+
				"(and apply) to destroy without one.", id, f.SavepointDir, f.Failed)}, true
	case DestroyStops:
		drain := "not drained (drain_on_destroy = false)"
		if prior.FinalDrain(false) {
			drain = "drained first (drain_on_destroy: every event-time timer and window fires)"
		}
		return Finding{Summary: "Destroy stops the job with a final savepoint",
			Detail: fmt.Sprintf("Before FlinkDeployment %s is deleted, the operator stops its running job with a savepoint into %s, %s, and "+
				"the provider waits for it: nothing is processed after it. It is recorded in FlinkStateSnapshot %s-final-*, kept after "+
				"the destroy; its path is reported. If the stop fails, the job runs on and the destroy is refused. Retained checkpoints "+
				"stay under %s. Set final_savepoint = false (and apply) to destroy without one.",
				id, f.SavepointDir, drain, f.Name, f.CheckpointDir)}, true
	case DestroyCancels:
		// ApplicationReconciler.cleanupInternal (flink-kubernetes-operator
		// release-1.15.0) cancels without a savepoint and deletes the HA
		// metadata.
		return Finding{Summary: "Destroy without a final savepoint",
			Detail: fmt.Sprintf("final_savepoint = false: the operator cancels the job of %s without a savepoint and deletes its HA metadata "+
				"(ApplicationReconciler.cleanupInternal). Only the checkpoints retained under %s remain.", id, f.CheckpointDir)}, true
	}
	return Finding{}, false
}

// PlanReplace says what state survives a replacement of prior (f) by
// planned in newNamespace (Replacement); restoreUnknown: the planned
// job.initial_savepoint_path is known at apply only. kind.Carries() tells
// the caller to record the handover; ok is false when there is nothing to
// say.
func PlanReplace(prior, planned Desired, newNamespace string, restoreUnknown bool, f FinalFacts) (kind ReplacementKind, finding Finding, ok bool) {
	from := f.id()
	kind = Replacement(prior, planned, f.possible(), restoreUnknown)
	pinned := func(what string) (ReplacementKind, Finding, bool) {
		return kind, Finding{Summary: "Replacement starts from job.initial_savepoint_path",
			Detail: fmt.Sprintf("FlinkDeployment %s is replaced: %s, and the new deployment starts from job.initial_savepoint_path, as "+
				"configured, not from a final savepoint.", from, what)}, true
	}
	moved := ""
	if kind.Carries() && newNamespace != f.Namespace {
		// kube.CarriedSavepoint: the FlinkStateSnapshot stays with the
		// deployment it was taken of (JobReference has no namespace).
		moved = fmt.Sprintf(" Its FlinkStateSnapshot stays in %s, where the create in %s finds it by listing FlinkStateSnapshots in "+
			"all namespaces; without that permission the destroy is refused before the savepoint.", f.Namespace, newNamespace)
	}
	switch kind {
	case ReplaceRollsBack:
		return kind, Finding{Refused: true, Summary: "Replacement would roll the job's state back",
			Detail: fmt.Sprintf("FlinkDeployment %s is replaced (destroyed, then created). Its job is stopped with a final savepoint first, but "+
				"job.initial_savepoint_path still names %s, the path this deployment was created from, and a new deployment restores "+
				"job.initial_savepoint_path when it is set: the replacement would start from that older savepoint, dropping everything "+
				"the job did since (or be refused after the old job is gone, if that savepoint was cleaned up). Nothing was changed. "+
				"To carry the job's current state across, remove job.initial_savepoint_path from the configuration (and from "+
				"lifecycle.ignore_changes, if it is listed there): the replacement then starts from the final savepoint. To restore "+
				"%s on purpose, destroy this deployment first (terraform apply -destroy -target=...), then apply: the create restores it.",
				from, planned.RestorePath, planned.RestorePath)}, true
	case ReplacePinned:
		return pinned("a final savepoint is taken first (kept)")
	case ReplacePinnedNoFinal:
		return pinned(fmt.Sprintf("without a final savepoint (upgrade_mode %q, final_savepoint %v)", prior.UpgradeMode, f.FinalSavepoint))
	case ReplacePinnedNotRunning:
		return pinned("its job is not running, so no final savepoint is taken")
	case ReplaceWithoutState:
		return kind, Finding{Summary: "Replacement starts without state",
			Detail: fmt.Sprintf("FlinkDeployment %s is replaced (destroyed, then created): without a final savepoint (upgrade_mode %q, "+
				"final_savepoint %v) the new deployment's job starts from empty state, unless job.initial_savepoint_path says otherwise. "+
				"Retained checkpoints stay under %s.", from, prior.UpgradeMode, f.FinalSavepoint, f.CheckpointDir)}, true
	case ReplaceNothingToCarry:
		return kind, Finding{Summary: "Replacement may start without state",
			Detail: fmt.Sprintf("FlinkDeployment %s is replaced (destroyed, then created), but its job is %s (lifecycle %s), not running: no "+
				"final savepoint can be taken, and the new deployment's job starts from empty state. Retained checkpoints stay "+
				"under %s (data.flinkstate_latest_checkpoint with complete = true finds the newest complete one; set "+
				"job.initial_savepoint_path to it to start from it).%s", from, f.JobState, orNone(f.Lifecycle), f.CheckpointDir, moved)}, true
	case ReplaceHandover:
		return kind, Finding{Summary: "Replacement carries the job's state across",
			Detail: fmt.Sprintf("FlinkDeployment %s is replaced (destroyed, then created): the operator stops its running job with a savepoint "+
				"into %s (never drained) before the delete, and the new deployment's job starts from it (upgrade_savepoint_path shows "+
				"the path): nothing the old job processed after the savepoint is processed again. If the stop fails, the job runs on "+
				"and nothing is deleted.%s", from, f.SavepointDir, moved)}, true
	}
	return kind, Finding{}, false
}
