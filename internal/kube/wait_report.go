package kube

import "fmt"

// WaitReport is what a create's or update's wait says when it ends without
// reaching its target (ClassifyWait): an error (verb and advice) or, for a
// create that is kept, a warning (warning: its summary).
type WaitReport struct {
	verb, warning string
	detail        func(f WaitFacts) string
	advice        string
	// DeleteAgain: nothing of the created object ran, so it is deleted
	// again (by its UID) and the create fails without state: an error from
	// Create with state would taint it, and the next apply would replace
	// it. The next plan is a create of the fixed spec.
	DeleteAgain bool
}

// WaitFacts are what a WaitReport's words name: the wait's error (with
// Flink's reason), what became of a deleted object (Gone), the deployment
// and the wait's target.
type WaitFacts struct{ Err, Gone, Namespace, Name, Target string }

// Words is the report of f.
func (w WaitReport) Words(f WaitFacts) Report {
	return Report{Warning: w.warning, Verb: w.verb, Detail: w.detail(f), Advice: w.advice}
}

// WaitReportOf picks the report of a wait's end: by its kind (the tables
// below), and for the other ends of a create (create) by whether it
// restores state (restoring).
func WaitReportOf(o WaitOutcome, create, restoring bool) WaitReport {
	if !create {
		if rep, ok := updateWaitReports[o.Kind]; ok {
			return rep
		}
		return waitNotReady
	}
	if rep, ok := createWaitReports[o.Kind]; ok {
		return rep
	}
	if restoring && !o.TimedOut {
		// The restore failed in Flink (or the operator refused it): the
		// job is not running with the state it was meant to have.
		return waitRestoreFailed
	}
	return waitCreatedNotReady
}

// createWaitReports: the ends of a create's wait that say what became of
// the spec.
var createWaitReports = map[WaitKind]WaitReport{
	// The first deployment failed before its JobManager started (e.g. an
	// image that cannot be pulled): no job ran, so no checkpoint, savepoint
	// or HA metadata of it exists.
	WaitNeverRan: {verb: "Creating", DeleteAgain: true,
		detail: func(f WaitFacts) string {
			return f.Err + ". Its JobManager never started, so no job ran and no state of it exists, and " + f.Gone + "."
		},
		advice: "Fix what the operator names (the image, the pull secret, the pod template) and apply again: the next plan creates it."},
	// Nothing ran, and nothing will: the operator records nothing but its
	// refusal (RejectedBeforeFirstDeployment), so no job, no checkpoint and
	// no HA metadata exist.
	WaitNeverDeployed: {verb: "Creating", DeleteAgain: true,
		detail: func(f WaitFacts) string { return f.Err + ". Nothing was deployed, and " + f.Gone + "." },
		advice: "Fix what the operator names and apply again."},
	// Refused after something was deployed (an update of an adopted
	// object, say): kept, as the operator keeps the last spec in force.
	WaitRejected: {verb: "Creating", detail: func(f WaitFacts) string { return f.Err },
		advice: "Fix the setting the operator names and apply again."},
}

var (
	waitRestoreFailed = WaitReport{verb: "Restoring",
		detail: func(f WaitFacts) string { return "the job did not start from its restore path: " + f.Err },
		advice: "Check the path (job.initial_savepoint_path, or the replaced deployment's final savepoint) and the operator's events."}
	waitCreatedNotReady = WaitReport{warning: "FlinkDeployment created but not ready yet",
		detail: func(f WaitFacts) string {
			return fmt.Sprintf("%s\n\nThe FlinkDeployment %s/%s is kept (not replaced): the next plan shows it as an update, and that apply waits for %q again.",
				f.Err, f.Namespace, f.Name, f.Target)
		}}
	waitNotReady = WaitReport{verb: "Waiting for", detail: func(f WaitFacts) string { return "FlinkDeployment not ready: " + f.Err },
		advice: "The next plan shows this deployment as a pending update, whose apply waits again."}
)

// updateWaitReports: the ends of an update's wait that need more than
// another wait.
var updateWaitReports = map[WaitKind]WaitReport{
	// The operator gave up on this change and says so at every
	// reconciliation (ErrUpgradeFailed): waiting longer changes nothing.
	// The ways out are the two changes it applies without an upgradeable
	// state: a redeploy from a savepoint path
	// (AbstractJobReconciler.reconcileSpecChange handles SAVEPOINT_REDEPLOY
	// before getJobUpgrade) and a stateless upgrade (getJobUpgrade:
	// "Stateless job, ready for upgrade"; flink-kubernetes-operator
	// release-1.15.0).
	WaitUpgradeFailed: {verb: "Upgrading", detail: func(f WaitFacts) string { return f.Err }, advice: manualRestoreAdvice},
	WaitUpgradeable: {verb: "Waiting for", detail: func(f WaitFacts) string { return "FlinkDeployment not ready: " + f.Err },
		advice: "The operator applies the change by itself once the job runs, and the next plan shows this deployment as a pending " +
			"update whose apply waits again. If the job cannot run with the spec it last reconciled (this change is what fixes it), " +
			"it never will. " + manualRestoreAdvice},
}

// manualRestoreAdvice is what gets a change applied that the operator
// cannot apply as a stateful upgrade (ErrUpgradeFailed,
// ErrWaitingForUpgradeableState): the two changes it makes without an
// upgradeable state.
const manualRestoreAdvice = "Set job.initial_savepoint_path to a complete savepoint or checkpoint of this job " +
	"(data.flinkstate_latest_checkpoint with complete = true finds the newest retained checkpoint; a flinkstate_snapshot's path " +
	"is a savepoint) and apply again: the operator redeploys from a new path without a running job. If the job holds no state " +
	"worth keeping, set job.upgrade_mode = \"stateless\" instead: a stateless upgrade needs nothing from the old job and starts " +
	"from empty state."
