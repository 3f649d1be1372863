package flinkdeploy

import "strings"

// ActiveState is the FlinkBlueGreenDeploymentState in which child serves:
// ACTIVE_BLUE or ACTIVE_GREEN (FlinkBlueGreenDeploymentState,
// flink-kubernetes-operator-api release-1.15.0).
func ActiveState(child string) string { return "ACTIVE_" + strings.ToUpper(child) }

// BlueGreenOutcome is where an update of a FlinkBlueGreenDeployment ends
// once the operator has applied it: what its plan shows.
type BlueGreenOutcome struct {
	// Child is the active child after the update.
	Child string
	// State is the state the apply waits for; "": the recorded one stays.
	State string
	// NewChild: Child is not the active child but the other one, started
	// from a savepoint of the active one's job (a transition): its
	// configuration names it, and the transition's savepoint is known only
	// after the apply.
	NewChild bool
	// JobChanges: the operator writes a child, so the job's id and state
	// are known only after the apply.
	JobChanges bool
}

// UpdateOutcome is where the operator takes a change it classifies as diff
// (ClassifyBlueGreen), active being the active child
// (BlueGreenDeploymentService.checkAndInitiateDeployment, release-1.15.0):
// a TRANSITION (startTransition, after a savepoint of the active child's
// job) or a SAVEPOINT_REDEPLOY (startSavepointRedeployTransition, from
// job.initialSavepointPath) starts the other child, and the deployment ends
// ACTIVE with it; SUSPEND, RESUME and PATCH_CHILD rewrite the active child
// in place (patchFlinkDeployment), whose own spec diff decides whether its
// job restarts; IGNORE changes nothing.
func UpdateOutcome(diff BlueGreenDiff, active string) BlueGreenOutcome {
	switch diff {
	case DiffIgnore:
		return BlueGreenOutcome{Child: active}
	case DiffTransition, DiffSavepointRedeploy:
		to := Other(active)
		return BlueGreenOutcome{Child: to, State: ActiveState(to), NewChild: true, JobChanges: true}
	}
	return BlueGreenOutcome{Child: active, JobChanges: true}
}

// ResumedWaitOutcome is where an update ends whose apply writes nothing and
// waits again for target, the state the last apply's wait did not reach
// (the change is written and the operator goes on with it). A target that
// is no ACTIVE state of a child stands for the active child's.
func ResumedWaitOutcome(target, active string) BlueGreenOutcome {
	to := strings.ToLower(strings.TrimPrefix(target, "ACTIVE_"))
	if to != Blue && to != Green {
		to, target = active, ActiveState(active)
	}
	return BlueGreenOutcome{Child: to, State: target, NewChild: to != active, JobChanges: true}
}
