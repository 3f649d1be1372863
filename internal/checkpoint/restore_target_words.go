package checkpoint

import (
	"fmt"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
)

// The words of a refused restore target: what the provider says when
// job.initial_savepoint_path, or the final savepoint a replacement
// carries, cannot be restored (CheckRestoreTarget).

// restorePathAttr is job.initial_savepoint_path.
var restorePathAttr = []string{"job", "initial_savepoint_path"}

// InvalidRestorePath is the refusal of a restore path ValidateRestorePath
// refuses (msg), on subject ("FlinkDeployment ns/name"): nothing planned
// to restore is deployed without its path.
func InvalidRestorePath(subject, path, msg string) flinkconf.Finding {
	return flinkconf.Finding{Severity: flinkconf.Error, Path: restorePathAttr, Summary: "Invalid restore path",
		Detail: fmt.Sprintf("%s was not changed: job.initial_savepoint_path %q %s.", subject, path, msg)}
}

// PathRefusal is the refusal of job.initial_savepoint_path for p on
// subject ("FlinkDeployment ns/name"), with what to point it at instead.
func (p *RestoreProblem) PathRefusal(subject string) flinkconf.Finding {
	advice := ""
	switch p.Kind {
	case RestoreUnreadable:
		advice = " Point job.initial_savepoint_path at another checkpoint or savepoint, e.g. data.flinkstate_latest_checkpoint's path " +
			"(with complete = true) or a flinkstate_snapshot's path."
	case RestoreNoMetadata:
		advice = " Point at one that has it, e.g. data.flinkstate_latest_checkpoint's path or a flinkstate_snapshot's path."
	case RestoreElsewhere:
		advice = "\n\nPoint job.initial_savepoint_path at a savepoint (canonical or native: Flink names a savepoint's files relative " +
			"to its directory, so a copy restores on its own), e.g. data.flinkstate_restorable_snapshot's path read in this bucket, or " +
			"at a checkpoint written to this bucket by the job itself."
	case RestoreIncomplete:
		advice = "\n\nPoint job.initial_savepoint_path at a complete snapshot: data.flinkstate_latest_checkpoint with complete = true " +
			"returns the newest checkpoint whose files all exist, or use a savepoint (a flinkstate_snapshot's path). Files under shared/ " +
			"are referenced by later checkpoints too: do not expire or delete them on your own."
	}
	end := "."
	if p.Kind == RestoreUnchecked || p.Kind == RestoreIncomplete || p.Kind == RestoreElsewhere {
		end = "" // ends with an error or a list of files
	}
	return flinkconf.Finding{Severity: flinkconf.Error, Path: restorePathAttr, Summary: p.Summary,
		Detail: fmt.Sprintf("%s was not changed: %s%s%s", subject, p.Detail, end, advice)}
}

// CarriedRefusal is the refusal of a create that starts from the final
// savepoint of the deployment it replaces (carried), on subject: the
// replaced deployment is gone, so a savepoint that could not be restored
// must stop the create, not start a job that fails or runs without its
// state. Its cause and what to do, as the provider's problem words them.
func (p *RestoreProblem) CarriedRefusal() (cause, todo string) {
	todo = "Nothing was created. Set job.initial_savepoint_path to a complete savepoint or checkpoint to start from " +
		"(data.flinkstate_latest_checkpoint with complete = true finds the newest complete checkpoint); the final savepoint's " +
		"FlinkStateSnapshot is kept."
	if p.Kind == RestoreUnchecked {
		todo = "Nothing was created. Apply again once S3 answers: the final savepoint's FlinkStateSnapshot is kept and the create starts from it."
	}
	return p.Summary + ": the final savepoint of the deployment it replaces cannot be restored: " + p.Detail, todo
}
