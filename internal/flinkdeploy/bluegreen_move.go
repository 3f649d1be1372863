package flinkdeploy

// A `moved` block from a flinkstate_deployment to a
// flinkstate_blue_green_deployment hands the old FlinkDeployment's job over
// to the first child of a new FlinkBlueGreenDeployment: the old job is
// stopped with a savepoint, the old FlinkDeployment deleted, and the
// FlinkBlueGreenDeployment created with that savepoint as its template's
// job.initialSavepointPath, which the operator's first deployment of the
// blue child restores (InitializingBlueStateHandler.handle →
// initiateDeployment(..., isFirstDeployment = true);
// BlueGreenUtils.prepareFlinkDeployment keeps the template's
// initialSavepointPath for a first deployment; release-1.15.0). The rules
// below decide, from what is known of the old deployment, what the move
// does with the job's state.

// MoveFacts is what a move's plan and apply know of the old deployment and
// of the template.
type MoveFacts struct {
	// OldDeleted: an earlier apply of the move stopped the old job and
	// deleted its FlinkDeployment; Carried is the savepoint that stop
	// recorded ("": none yet).
	OldDeleted bool
	Carried    string
	// KeepsState: the old deployment's job keeps state across a stop
	// (Desired.KeepsState, with final_savepoint on: a handover of a
	// stateful job always takes the savepoint).
	KeepsState bool
	// Pinned: the template sets job.initialSavepointPath, to PinnedPath;
	// OldPath is the path the old deployment was created from ("": none).
	Pinned              bool
	PinnedPath, OldPath string
	// The old FlinkDeployment's status while it exists (not OldDeleted):
	// jobStatus.state, lifecycleState and jobStatus.upgradeSavepointPath.
	JobState, LifecycleState, UpgradeSavepointPath string
}

// MoveStart is what a move does with the job's state, as its plan says.
type MoveStart int

const (
	// MoveResumes: an earlier apply stopped the old job and deleted the
	// old FlinkDeployment; the blue child starts from ResumeSource.
	MoveResumes MoveStart = iota
	// MoveWithoutState: the old job keeps no state (upgrade mode stateless,
	// or no job): the old FlinkDeployment is deleted without a savepoint,
	// and the blue child starts from job.initialSavepointPath or empty.
	MoveWithoutState
	// MoveRefusedNotRunning: refused, the old job neither runs nor is
	// stopped with a savepoint, so no savepoint of it can be taken (the
	// operator abandons a snapshot of a job that is not running:
	// FlinkStateSnapshotUtils.abandonSnapshotIfJobNotRunning,
	// release-1.15.0).
	MoveRefusedNotRunning
	// MoveRefusedRollback: refused, job.initialSavepointPath names the path
	// the old deployment was created from; the blue child would start from
	// that older savepoint, dropping everything the job did since.
	MoveRefusedRollback
	// MoveFromPinned: the old job is stopped with a savepoint (kept), and
	// the blue child starts from job.initialSavepointPath, as configured.
	MoveFromPinned
	// MoveFromStopped: the old job is stopped with a savepoint already
	// (StoppedWith); the blue child starts from it.
	MoveFromStopped
	// MoveFromStop: the operator stops the running old job with a
	// savepoint, and the blue child starts from it.
	MoveFromStop
)

// PlanMove decides what the move does with the job's state.
func PlanMove(f MoveFacts) MoveStart {
	switch {
	case f.OldDeleted:
		return MoveResumes
	case !f.KeepsState:
		return MoveWithoutState
	}
	_, stopped := f.StoppedWith()
	switch {
	case f.JobState != "RUNNING" && !stopped:
		return MoveRefusedNotRunning
	case f.Pinned && f.PinnedPath == f.OldPath:
		return MoveRefusedRollback
	case f.Pinned:
		return MoveFromPinned
	case stopped:
		return MoveFromStopped
	}
	return MoveFromStop
}

// StoppedWith is the savepoint the old job is stopped with already: a
// suspend in savepoint mode (lifecycle SUSPENDED:
// CommonStatus.getLifecycleState) recorded it in
// jobStatus.upgradeSavepointPath (AbstractJobReconciler
// .setUpgradeSavepointPath); a last-state suspend records
// LastStateDummyPath there, which is no savepoint.
func (f MoveFacts) StoppedWith() (string, bool) {
	p := f.UpgradeSavepointPath
	if f.JobState == "RUNNING" || f.LifecycleState != "SUSPENDED" || p == "" || p == LastStateDummyPath {
		return "", false
	}
	return p, true
}

// ResumeSource is what the blue child of a move whose old FlinkDeployment
// is gone starts from: FromPinned (job.initialSavepointPath), FromHandover
// (Carried, the savepoint the old job was stopped with) or FromNothing.
func (f MoveFacts) ResumeSource() string {
	switch {
	case f.Pinned:
		return FromPinned
	case f.Carried != "":
		return FromHandover
	}
	return FromNothing
}

// TakesStop tells whether the apply stops the old job with a savepoint: it
// keeps state, still exists, and no stop recorded its savepoint yet (a job
// stopped already with one, by a failed apply, is recorded again). A
// pinned job.initialSavepointPath does not spare the stop: its savepoint
// is kept.
func (f MoveFacts) TakesStop() bool {
	return !f.OldDeleted && f.KeepsState && f.Carried == ""
}

// RestoresHandover tells whether the blue child starts from the savepoint
// the old job was stopped with: the old job keeps state and the template
// pins no job.initialSavepointPath (which the first deployment would
// restore instead).
func (f MoveFacts) RestoresHandover() bool {
	return f.KeepsState && !f.Pinned
}
