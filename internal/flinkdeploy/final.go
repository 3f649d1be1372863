package flinkdeploy

// What a destroy or replacement keeps of a job's state, decided at plan
// from the prior Desired (and the planned one, for a replacement) and the
// job's state as last read.

// FinalSavepointPossible tells whether a final savepoint can be had of a
// job last read as jobState (lifecycle lifecycle; known is false while the
// job state is unknown): the operator stops only a running job with a
// savepoint (AbstractJobReconciler.getJobUpgrade: SAVEPOINT mode needs
// ReconciliationUtils.isJobRunning; flink-kubernetes-operator
// release-1.15.0), and a suspended one has the savepoint its suspend took
// (AbstractJobReconciler.setUpgradeSavepointPath). An unknown or unread job
// state counts as running: the apply finds out (kube.FinalStop).
func FinalSavepointPossible(jobState string, known bool, lifecycle string) bool {
	return !known || jobState == "" || jobState == "RUNNING" || lifecycle == "SUSPENDED"
}

// DestroyKind is what a destroy keeps of the job's state (DestroyKeeps).
type DestroyKind int

const (
	// DestroyKeepsNothing: no job, or a stateless one: there is no state
	// to keep.
	DestroyKeepsNothing DestroyKind = iota
	// DestroyStops: the job is stopped with a final savepoint first
	// (drained as Desired.FinalDrain says).
	DestroyStops
	// DestroyStopsAgain: DestroyStops, after the last destroy's final
	// savepoint did not complete.
	DestroyStopsAgain
	// DestroyCannotStop: a final savepoint applies, but the job is not
	// running (FinalSavepointPossible): the destroy deletes it without
	// one; only the retained checkpoints stay.
	DestroyCannotStop
	// DestroyCancels: final_savepoint is off: the operator cancels the job
	// without a savepoint and deletes its HA metadata
	// (ApplicationReconciler.cleanupInternal); only the retained
	// checkpoints stay.
	DestroyCancels
)

// DestroyKeeps says what a destroy of prior keeps. possible: a final
// savepoint can be had (FinalSavepointPossible); failedBefore: the last
// destroy's final savepoint did not complete.
func DestroyKeeps(prior Desired, possible, failedBefore bool) DestroyKind {
	switch {
	case prior.KeepsState() && !possible:
		return DestroyCannotStop
	case prior.KeepsState() && failedBefore:
		return DestroyStopsAgain
	case prior.KeepsState():
		return DestroyStops
	case prior.HasJob && prior.UpgradeMode != "stateless" && prior.UpgradeMode != "":
		return DestroyCancels
	}
	return DestroyKeepsNothing
}

// ReplacementKind is what a replacement keeps of the old job's state and
// what the new job starts from (Replacement).
type ReplacementKind int

const (
	// ReplaceRollsBack: the new job would restore the
	// job.initial_savepoint_path the old deployment was created from, not
	// the handover (ReplacementRestores' ambiguous case): refused.
	ReplaceRollsBack ReplacementKind = iota
	// ReplacePinned: the old job is stopped with a final savepoint (kept),
	// and the new job starts from job.initial_savepoint_path.
	ReplacePinned
	// ReplacePinnedNoFinal: ReplacePinned, without a final savepoint
	// (Desired.KeepsState is false).
	ReplacePinnedNoFinal
	// ReplacePinnedNotRunning: ReplacePinned, but the old job is not
	// running, so no final savepoint is taken.
	ReplacePinnedNotRunning
	// ReplaceWithoutState: no final savepoint applies and no path is set:
	// the new job starts from empty state.
	ReplaceWithoutState
	// ReplaceHandover: the old job is stopped with a final savepoint
	// (never drained: Desired.FinalDrain), and the new job starts from it.
	ReplaceHandover
	// ReplaceNothingToCarry: a final savepoint applies, but the old job is
	// not running: the new job starts from empty state unless the destroy
	// half can still record one.
	ReplaceNothingToCarry
	// ReplaceNoJob: the old deployment has no job (a session cluster):
	// there is no job state to keep.
	ReplaceNoJob
)

// Carries tells whether the destroy half of the replacement records a final
// savepoint for the new deployment (the handover, or whatever final
// savepoint it can still record of a job not running now).
func (k ReplacementKind) Carries() bool {
	return k == ReplaceHandover || k == ReplaceNothingToCarry
}

// Replacement says what a replacement of prior by planned keeps.
// oldHasState: FinalSavepointPossible of the old job; restoreUnknown: the
// planned job.initial_savepoint_path is known at apply only (a data source
// read then), and the create restores it, as configured.
func Replacement(prior, planned Desired, oldHasState, restoreUnknown bool) ReplacementKind {
	source, ambiguous := ReplacementRestores(prior, planned, oldHasState)
	if restoreUnknown {
		source, ambiguous = FromPinned, false
	}
	switch {
	case !prior.HasJob:
		return ReplaceNoJob
	case ambiguous:
		return ReplaceRollsBack
	case source == FromPinned && !prior.KeepsState():
		return ReplacePinnedNoFinal
	case source == FromPinned && !oldHasState:
		return ReplacePinnedNotRunning
	case source == FromPinned:
		return ReplacePinned
	case !prior.KeepsState():
		return ReplaceWithoutState
	case source == FromNothing:
		return ReplaceNothingToCarry
	}
	return ReplaceHandover
}
