package flinkdeploy

import "github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"

// FinalDirs are where a deployment's state goes, as the plan of a destroy
// or replacement and the final stop's report name it: the directory set in
// its state block, or what that directory is while it is unset (or not
// known yet).
type FinalDirs struct{ Savepoint, Checkpoint, HA string }

// FinalDirsOf is the FinalDirs of the state block s.
func FinalDirsOf(s flinkconf.State) FinalDirs {
	return FinalDirs{Savepoint: dirOr(s.SavepointDir, "the deployment's savepoint directory"),
		Checkpoint: dirOr(s.CheckpointDir, "the checkpoint directory"), HA: dirOr(s.HADir, "the HA directory")}
}

func dirOr(dir, words string) string {
	if dir == "" {
		return words
	}
	return dir
}

// Notice is the finding f as the provider reports it: a refusal is an
// error on job.initial_savepoint_path, anything else a warning on no
// attribute.
func (f Finding) Notice() flinkconf.Finding {
	if f.Refused {
		return flinkconf.Finding{Severity: flinkconf.Error, Path: []string{"job", "initial_savepoint_path"}, Summary: f.Summary, Detail: f.Detail}
	}
	return flinkconf.Finding{Severity: flinkconf.Warning, Summary: f.Summary, Detail: f.Detail}
}

// UpgradeWarnings is the plan's UpgradeNotice of an update from prior to
// planned (Spec.UpgradeChanges) as a warning on no attribute: that the job
// restarts, and with what state. None while either spec is unknown.
func UpgradeWarnings(prior, planned Desired) []flinkconf.Finding {
	if prior.Spec == nil || planned.Spec == nil {
		return nil
	}
	if summary, detail := UpgradeNotice(prior, planned, prior.Spec.UpgradeChanges(*planned.Spec)); summary != "" {
		return one(warning(nil, summary, detail))
	}
	return nil
}
