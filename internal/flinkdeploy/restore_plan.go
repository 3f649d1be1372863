package flinkdeploy

import (
	"fmt"
	"reflect"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
)

// The plan's words on what a job restores: the warnings and refusals the
// provider shows, as findings on the attribute they concern.

func warning(path []string, summary, detail string) flinkconf.Finding {
	return flinkconf.Finding{Severity: flinkconf.Warning, Path: path, Summary: summary, Detail: detail}
}

// CodeChanges tells whether planned runs other code than prior: a new
// image, jar, entry class or arguments. True while either spec is unknown.
func CodeChanges(prior, planned Desired) bool {
	a, b := prior.Spec, planned.Spec
	if a == nil || b == nil || a.Image != b.Image || (a.Job == nil) != (b.Job == nil) {
		return true
	}
	if a.Job == nil {
		return false
	}
	return a.Job.JarURI != b.Job.JarURI || !reflect.DeepEqual(a.Job.Fields["entryClass"], b.Job.Fields["entryClass"]) ||
		!reflect.DeepEqual(a.Job.Fields["args"], b.Job.Fields["args"])
}

// RestoreOptions are a job's settings on how it restores: job.
// allow_non_restored_state, job.claim_mode, and whether
// job.initial_savepoint_path is set (or unknown).
type RestoreOptions struct {
	AllowNonRestoredState bool
	ClaimMode             string
	PathSet               bool
}

// Notices are the plan's warnings about what restoring with these options
// does.
func (o RestoreOptions) Notices() []flinkconf.Finding {
	var out []flinkconf.Finding
	if o.AllowNonRestoredState {
		out = append(out, warning([]string{"job", "allow_non_restored_state"}, "State may be dropped on restore",
			"allow_non_restored_state = true lets the job start although state in the savepoint or checkpoint maps to no operator of the "+
				"new job: that state is silently dropped (execution.state-recovery.ignore-unclaimed-state). Set it only for a deliberate "+
				"topology change, and remove it afterwards."))
	}
	if o.ClaimMode == flinkconf.ClaimModeClaim && o.PathSet {
		out = append(out, warning([]string{"job", "claim_mode"}, "Flink may delete the restored snapshot",
			"claim_mode = \"CLAIM\" hands the snapshot at job.initial_savepoint_path to the job, which deletes it once newer checkpoints "+
				"subsume it. If a flinkstate_snapshot keeps that savepoint (dispose_on_delete = false or already_exists), or you need it "+
				"to roll back, use NO_CLAIM (Flink's default)."))
	}
	return out
}

// RedeployNotice is the plan's warning on a redeploy (Redeploys) from
// path with the new savepointRedeployNonce nonce.
func RedeployNotice(nonce int64, path string) flinkconf.Finding {
	return warning([]string{"job", "initial_savepoint_path"}, "The job will be redeployed from a snapshot",
		fmt.Sprintf("job.initial_savepoint_path changes on an existing deployment: the provider sets savepoint_redeploy_nonce to %d and "+
			"the operator redeploys the job from %s. The running job's current state is replaced by that snapshot's, and the "+
			"operator cannot roll this back.", nonce, path))
}

// RefusalFindings are the Refusals as errors on their attributes.
func RefusalFindings(prior, planned Desired) []flinkconf.Finding {
	var out []flinkconf.Finding
	for _, r := range Refusals(prior, planned) {
		out = append(out, flinkconf.Finding{Severity: flinkconf.Error, Path: []string{r.Attr}, Summary: r.Summary, Detail: r.Detail})
	}
	return out
}

// NotRunningNotice is the plan's warning (none: nil) for an update
// savepoint_before_upgrade covers while the job is not running (observed:
// the job state the operator last reported, "" unknown): no savepoint can
// be taken and the new spec starts from NotRunningStart; the apply reads
// the operator's status again and decides (kube.NotRunningUpgrade).
// subject names the deployment ("FlinkDeployment ns/name").
func NotRunningNotice(subject string, prior, planned Desired, observed, recorded string) []flinkconf.Finding {
	if !planned.SavepointFirst || prior.RunState() == JobSuspended || observed == "RUNNING" || observed == "" {
		return nil
	}
	if changed, known := JobChanged(prior, planned); !known || !changed {
		return nil
	}
	return one(warning([]string{"savepoint_before_upgrade"}, "No savepoint can be taken before this change",
		fmt.Sprintf("The job of %s is %s, not running, so no savepoint can be taken first (the operator abandons a "+
			"savepoint of a job that is not running). The new spec starts from %s.", subject, observed,
			NotRunningStart(prior, planned, recorded))))
}

// one is f as a list of findings.
func one(f flinkconf.Finding) []flinkconf.Finding { return []flinkconf.Finding{f} }
