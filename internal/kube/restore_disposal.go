package kube

import (
	"fmt"
	"time"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
)

// The words of the check that the savepoint a deployment is about to
// restore is not one the operator's savepoint history cleanup deletes
// with its data (SnapshotObserver.cleanupSavepointHistory: PERIODIC and
// UPGRADE FlinkStateSnapshots beyond history.max.count or older than
// max.age; with spec.savepoint.disposeOnDelete the data goes too,
// FlinkStateSnapshotController.cleanup; CleanupFate).

var disposalAttr = []string{"job", "initial_savepoint_path"}

// DisposalUnchecked is the warning when the snapshots at target could not
// be listed (err, worded) for FlinkDeployment ns/name.
func DisposalUnchecked(ns, name, target, err string) flinkconf.Finding {
	return flinkconf.Finding{Severity: flinkconf.Warning, Path: disposalAttr, Summary: "Savepoint cleanup not checked",
		Detail: fmt.Sprintf("FlinkDeployment %s/%s: whether the operator's savepoint history cleanup disposes %s could not be read (%s).",
			ns, name, target, err)}
}

// Disposal is the finding on FlinkDeployment ns/name restoring target,
// the savepoint of e, which the cleanup deletes with its data from after
// on: a disposal due at the operator's next observe (after not past now)
// refuses the restore before anything changes (Flink would find no
// savepoint once the old job is gone); a later one is a warning, since a
// later restore from the same path would fail.
func Disposal(ns, name, target string, e SnapshotEntry, after, now time.Time) flinkconf.Finding {
	ways := fmt.Sprintf("Ways out: take a savepoint of your own to restore from (a flinkstate_snapshot, dispose_on_delete = false, "+
		"which the cleanup never deletes: it cleans only PERIODIC and UPGRADE snapshots); or keep this one: set "+
		"kubernetes.operator.savepoint.history.max.count / max.age higher, or kubernetes.operator.savepoint.cleanup.enabled = "+
		"false, in the flink_configuration of FlinkDeployment %s/%s, or set spec.savepoint.disposeOnDelete false on "+
		"FlinkStateSnapshot %s/%s.", ns, e.Deployment, ns, e.Name)
	what := fmt.Sprintf("FlinkDeployment %s/%s: job.initial_savepoint_path %s is the savepoint of FlinkStateSnapshot %s/%s (trigger "+
		"type %s), which the operator's savepoint history cleanup deletes, and its data with it (disposeOnDelete)", ns, name, target,
		ns, e.Name, e.Trigger)
	if !after.After(now) {
		return flinkconf.Finding{Severity: flinkconf.Error, Path: disposalAttr, Summary: "Restore path about to be disposed",
			Detail: what + ", at its next observe of FlinkDeployment " + ns + "/" + e.Deployment + ": the job would find no savepoint to restore. " +
				"Nothing was changed. " + ways}
	}
	return flinkconf.Finding{Severity: flinkconf.Warning, Path: disposalAttr, Summary: "Restore path will be disposed",
		Detail: what + ", from " + after.UTC().Format(time.RFC3339) + " on: the job restores from it now, but a later restore from the same path " +
			"would find nothing. " + ways}
}

// Disposals are the findings on FlinkDeployment ns/name restoring target,
// for the FlinkStateSnapshots recording it (entries: SnapshotsAtPath):
// fate says what the cleanup does to one (CleanupFate's "delete_and_dispose",
// from after on; an error skips it). The first disposal due now ends the
// list: the restore is refused.
func Disposals(ns, name, target string, entries []SnapshotEntry, now time.Time,
	fate func(e SnapshotEntry) (string, time.Time, error)) []flinkconf.Finding {
	var out []flinkconf.Finding
	for _, e := range entries {
		what, after, err := fate(e)
		if err != nil || what != "delete_and_dispose" {
			continue
		}
		f := Disposal(ns, name, target, e, after, now)
		if out = append(out, f); f.Severity == flinkconf.Error {
			break
		}
	}
	return out
}
