package preflight

import (
	"fmt"
	"regexp"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
)

// A job starts from existing state on more paths than an upgrade of a
// running job (issue 44): job.initial_savepoint_path on create and on a
// redeploy, a replacement's carried final savepoint, and a resume after
// suspend. Check applies to each; this file says what each restores and
// the one refusal that needs no snapshot (NoCheckpoint).

// lastStateDummyPath is the path the operator records for a last-state
// deployment from HA metadata (ApplicationReconciler.deploy,
// LAST_STATE_DUMMY_SP_PATH, flink-kubernetes-operator release-1.15.0): no
// snapshot of that name exists.
const lastStateDummyPath = "KUBERNETES_OPERATOR_LAST_STATE"

// ResumeRestores says what a job resumed after suspend (job.state
// suspended -> running) restores, as AbstractJobReconciler.restoreJob
// (release-1.15.0) picks it: in savepoint mode the savepoint the suspend
// took (status.jobStatus.upgradeSavepointPath, else
// savepointInfo.lastSavepoint: recorded), which it passes to
// ApplicationReconciler.deploy as execution.state-recovery.path; in
// last-state mode none: deploy restores through HA metadata, which names
// the newest completed checkpoint of the job (checkpoint true). An empty
// path with checkpoint false: nothing known is restored.
func ResumeRestores(mode, recorded string) (path string, checkpoint bool) {
	switch mode {
	case "savepoint":
		if recorded != "" && recorded != lastStateDummyPath {
			return recorded, false
		}
		return "", false
	case "last-state":
		return "", true
	}
	return "", false
}

// NoCheckpoint is the refusal of a last-state upgrade of a running job
// none of whose checkpoints is complete in dir. The operator then starts
// the new spec without state: ApplicationReconciler.deploy (release-1.15.0)
// sets the last-state path only when FlinkService.atLeastOneCheckpoint
// (FlinkUtils.isKubernetesHaMetadataAvailableWithCheckpoint: an HA
// ConfigMap with a checkpointID- key) holds, and otherwise removes
// execution.state-recovery.path ("Stateless deployment"): the job's state
// is gone without an error from Flink or the operator.
func NoCheckpoint(jobID, dir string) Finding {
	return Finding{Rule: "no-checkpoint", Attribute: "job.upgrade_mode (last-state)",
		FlinkClass: "ApplicationReconciler.deploy (flink-kubernetes-operator 1.15.0)",
		FlinkMessage: "no checkpoint in the HA metadata (FlinkService.atLeastOneCheckpoint false): the job is deployed as a " +
			"stateless deployment, without execution.state-recovery.path",
		WayOut: fmt.Sprintf("Job %s has no completed checkpoint under %s, so a last-state upgrade would start it from empty state. "+
			"Configure state.checkpoint_interval (Flink checkpoints only when it is set or the job's code enables it) and apply again "+
			"once a checkpoint has completed (data.flinkstate_latest_checkpoint shows it); or set job.upgrade_mode = \"savepoint\" "+
			"(the operator takes a savepoint of the running job first); or, to start from empty state on purpose, set "+
			"job.upgrade_mode = \"stateless\".", jobID, dir)}
}

// CrossesToFlink2 tells whether a job's state moves from Flink 1.x (from)
// to Flink 2.x (to): a restore across that line meets Flink 2.0's
// serializer changes (Flink2StateAdvice). False when either is not a
// version.
func CrossesToFlink2(from, to string) bool {
	f, err1 := flinkconf.ParseVersion(from)
	t, err2 := flinkconf.ParseVersion(to)
	return err1 == nil && err2 == nil && f.Major == 1 && t.Major >= 2
}

// WrittenByFlink1 tells whether a snapshot's _metadata was written by
// Flink 1.x: Flink 1.20 writes version 4, 2.0 version 5
// (MetadataSerializers; MaxMetadataVersion).
func WrittenByFlink1(meta *checkpoint.Metadata) bool {
	return meta != nil && meta.Version > 0 && meta.Version <= 4
}

// Flink2StateAdvice is what a restore of Flink 1.x state by Flink 2.x
// meets: Flink 2.0 upgraded its bundled Kryo from 2 to 5 (FLINK-3154), whose
// binary format differs, and serializes Java collections inside POJOs with
// serializers of their own instead of Kryo (FLIP-398), so state a 1.x job
// serialized with Kryo (generic types, collections in POJOs) does not
// restore in Flink 2; state with Flink's own serializers (basic types,
// Tuples, Rows, POJOs of such fields) or Avro does. The operator upgrades a
// flinkVersion change with a savepoint even in last-state mode
// (AbstractJobReconciler.getJobUpgrade: flinkVersionChanged → savepoint while
// the job runs with a savepoint directory, else a last-state cancel, else it
// waits).
const Flink2StateAdvice = "Flink 2.0 upgraded its bundled Kryo from version 2 to 5 (FLINK-3154), whose binary format differs, and " +
	"serializes Java collections inside POJOs with serializers of its own instead of Kryo (FLIP-398): state the Flink 1.x job " +
	"serialized with Kryo (generic types, collections in POJOs) cannot be restored by Flink 2, while state with Flink's own " +
	"serializers (basic types, Tuples, Rows, POJOs of such fields) or Avro can. Check the job's state types (or restore a savepoint " +
	"in a test deployment first) before the old job is stopped. The operator upgrades a flink_version change with a savepoint, " +
	"even in last-state mode (AbstractJobReconciler.getJobUpgrade)."

// missingOperatorRE matches Flink's refusal of a snapshot whose operator
// the new job graph lacks (Checkpoints.throwNonRestoredStateException,
// flink-runtime release-2.2.1: "Failed to rollback to checkpoint/savepoint
// <pointer>. Cannot map checkpoint/savepoint state for operator <id> to the
// new program, because the operator is not available in the new program.").
var missingOperatorRE = regexp.MustCompile(`Failed to rollback to checkpoint/savepoint (\S+?)\.? Cannot map checkpoint/savepoint state for operator ([0-9a-f]{32})`)

// MissingOperator finds that refusal in text: the snapshot and the
// operator's hexadecimal ID.
func MissingOperator(text string) (snapshot, operatorID string, ok bool) {
	m := missingOperatorRE.FindStringSubmatch(text)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// NameOperator says which operator of the snapshot id is, by the name and
// uid its _metadata records, for a message that has only Flink's hex ID:
// "" when the snapshot does not record it.
func NameOperator(meta *checkpoint.Metadata, id string) string {
	for _, op := range meta.Operators {
		if op.ID == id {
			return describe(op)
		}
	}
	return ""
}
