package kube

import "fmt"

// FinalStopPlaces are the words for where a job's state stays, as the
// plan words them: the checkpoint directory and the HA directory.
type FinalStopPlaces struct{ CheckpointDir, HADir string }

// Report words the end of the final stop q: a warning, or the refusal of
// the destroy (verb "Destroying"); false: nothing to say (FinalStopGone).
func (res FinalStopResult) Report(q FinalStopRequest, at FinalStopPlaces) (Report, bool) {
	w, ok := finalStopReports[res.Kind]
	if !ok {
		return Report{}, false
	}
	f := finalStopFacts{q: q, res: res, at: at}
	rep := Report{Warning: w.warning, Detail: w.message(f)}
	if w.warning == "" {
		rep.Verb, rep.Advice = "Destroying", w.advice(f)
	}
	return rep, true
}

// finalStopFacts is what a final stop's report reads.
type finalStopFacts struct {
	q   FinalStopRequest
	res FinalStopResult
	at  FinalStopPlaces
}

func (f finalStopFacts) id() string { return f.q.Namespace + "/" + f.q.Name }

// finalStopReport words one end of a final stop: a warning (its summary
// and message), or a refusal of the destroy (no warning: message is its
// cause and advice what to do).
type finalStopReport struct {
	warning         string
	message, advice func(f finalStopFacts) string
}

// finalStopReports words each end of FinalStop; FinalStopGone says
// nothing.
var finalStopReports = map[FinalStopKind]finalStopReport{
	FinalStopUnreadable: {
		message: func(f finalStopFacts) string {
			return "reading it before its final savepoint: " + ReadableError(f.res.Err)
		},
		advice: func(finalStopFacts) string {
			return "Nothing was deleted. Apply again once the API server answers."
		},
	},
	FinalStopNotRunning: {
		warning: "No final savepoint",
		message: func(f finalStopFacts) string {
			return fmt.Sprintf("The job of FlinkDeployment %s is %s (lifecycle %s), so no savepoint can be taken before it is deleted. "+
				"The checkpoints it retained stay under %s (data.flinkstate_latest_checkpoint finds them).",
				f.id(), OrNone(f.res.Before.JobState), OrNone(f.res.Before.LifecycleState), f.at.CheckpointDir)
		},
	},
	FinalStopCarryUnlistable: {
		message: func(f finalStopFacts) string {
			return "its replacement " + f.q.CarryTo + " is in another namespace, and would find the final savepoint (kept in " +
				f.q.Namespace + ", with its deployment) by listing FlinkStateSnapshots in all namespaces, which failed: " + ReadableError(f.res.Err)
		},
		advice: func(finalStopFacts) string {
			return "Nothing was deleted. Allow list on flinkstatesnapshots.flink.apache.org in all namespaces, or take a savepoint " +
				"(flinkstate_snapshot) and set job.initial_savepoint_path of the new deployment to its path."
		},
	},
	FinalStopUnrecorded: {
		message: func(f finalStopFacts) string {
			return "recording its final savepoint " + f.res.Path + " in a FlinkStateSnapshot: " + ReadableError(f.res.Err)
		},
		advice: func(finalStopFacts) string {
			return "Nothing was deleted; the job is stopped (suspended) with that savepoint recorded in the FlinkDeployment's status, which the " +
				"next destroy records again. Fix the cause and apply again, or set final_savepoint = false (and apply) to delete it without one."
		},
	},
	// A final savepoint that did not complete: what the operator reported
	// (the step's end and the deployment's status as it is now), what
	// survives and the choices; the next destroy's plan says that no
	// final savepoint is possible now (flinkdeploy.DestroyCannotStop).
	// The operator deletes the HA metadata with the FlinkDeployment
	// (ApplicationReconciler.cleanupInternal, flink-kubernetes-operator
	// release-1.15.0).
	FinalStopFailed: {
		message: func(f finalStopFacts) string {
			now := "its status could not be read again"
			if f.res.AfterRead {
				now = fmt.Sprintf("the operator now reports its job %s (lifecycle %s, JobManager %s)", OrNone(f.res.After.JobState),
					OrNone(f.res.After.LifecycleState), OrNone(f.res.AfterJobManager))
			}
			return fmt.Sprintf("its final savepoint did not complete (%s): %s; %s", f.res.Step, f.res.Err, now)
		},
		advice: func(f finalStopFacts) string {
			next := "destroy again once it is fixed: a savepoint is taken then"
			if f.res.AfterRead && f.res.After.JobState != "RUNNING" {
				next = "bring the JobManager back until the job runs again, then destroy again: a savepoint is taken then. A destroy " +
					"while the job is not running cannot take one: its plan says so, and it deletes the FlinkDeployment without a savepoint"
			}
			return fmt.Sprintf("Nothing was deleted. What survives today: the checkpoints the job retained under %s "+
				"(data.flinkstate_latest_checkpoint with complete = true finds the newest complete one), and its HA metadata (under %s and "+
				"in its ConfigMaps), which the operator deletes with the FlinkDeployment (ApplicationReconciler.cleanupInternal). Choices: "+
				"%s; or set final_savepoint = false (and apply), then destroy: the FlinkDeployment is deleted without a savepoint, and "+
				"a new deployment starts from the newest retained checkpoint through job.initial_savepoint_path.",
				f.at.CheckpointDir, f.at.HADir, next)
		},
	},
	FinalStopTaken: {
		warning: "Final savepoint taken",
		message: func(f finalStopFacts) string {
			how := "The job was stopped with it: nothing was processed after it."
			if f.res.Drained {
				how = "The job was stopped with it, drained (drain_on_destroy: every event-time timer and window fired first)."
			}
			next := "It is kept after the destroy; start a deployment from it with job.initial_savepoint_path."
			if f.q.CarryTo != "" {
				next = "The replacement " + f.q.CarryTo + " starts from it."
			}
			return fmt.Sprintf("FlinkDeployment %s: final savepoint %s (FlinkStateSnapshot %s/%s). %s %s", f.id(), f.res.Path, f.q.Namespace,
				f.res.Snapshot, how, next)
		},
	},
}
