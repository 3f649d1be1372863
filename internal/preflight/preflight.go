// Package preflight proves from a snapshot's _metadata, before a job is
// restored from it, that Flink will accept the restore with the new
// configuration. Flink checks this only when the new job starts, after the
// operator has stopped the old one (issue 44); each rule here follows the
// Flink 2.2.1 code that would refuse the restore, and says what Flink
// would say.
package preflight

import (
	"fmt"
	"sort"
	"strings"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
)

// Desired is what the new spec asks of the restore, and what the running
// spec had (the Previous fields, zero when unknown).
type Desired struct {
	// Parallelism is job.parallelism (parallelism.default: every operator
	// whose code sets no parallelism of its own gets it); 0: unknown.
	Parallelism int
	// PreviousParallelism is the running spec's job.parallelism. An operator
	// the snapshot records at another parallelism has one of its own (code,
	// an override, the autoscaler) and is not measured against Parallelism.
	PreviousParallelism int
	// Overrides are pipeline.jobvertex-parallelism-overrides (vertex ID in
	// hexadecimal to parallelism).
	Overrides map[string]int
	// MaxParallelism is an explicit pipeline.max-parallelism, 0 for none;
	// PreviousMaxParallelism the running spec's.
	MaxParallelism, PreviousMaxParallelism int
	// Backend and PreviousBackend are state.backend (rocksdb, hashmap,
	// forst; "" unknown).
	Backend, PreviousBackend string
	// FlinkVersion is the Flink version the job is restored with ("2.2.1";
	// "" unknown).
	FlinkVersion string
	// TakenAs is the format of the snapshot the job will restore when the
	// snapshot read stands in for one not taken yet: "NATIVE savepoint"
	// for a savepoint-mode upgrade whose savepoint the operator takes in
	// the NATIVE format (read from the job's newest checkpoint, whose keyed
	// state a NATIVE savepoint shares: both are the backend's own files,
	// SavepointType/SnapshotType.isSavepoint with format NATIVE); "" reads
	// the format from the snapshot.
	TakenAs string
	// SavepointRoute says the change is a last-state upgrade that a
	// savepoint-mode upgrade in the same apply could carry instead: the
	// operator upgrades with the new spec's upgrade mode
	// (AbstractJobReconciler.getJobUpgrade reads
	// resource.getSpec().getJob().getUpgradeMode(), flink-kubernetes-operator
	// release-1.15.0), and takes that savepoint in the format
	// kubernetes.operator.savepoint.format.type of its observe
	// configuration, CANONICAL by default (KubernetesOperatorConfigOptions.
	// OPERATOR_SAVEPOINT_FORMAT_TYPE, AbstractFlinkService.cancelJob,
	// FlinkConfigManager.getObserveConfig). Set it only when a savepoint
	// directory is configured and that format is CANONICAL.
	SavepointRoute bool
	// FromPath says the job restores the snapshot from a path
	// (execution.savepoint.path: a savepoint-mode upgrade,
	// job.initial_savepoint_path, a handover), which
	// Checkpoints.loadAndValidateCheckpoint checks before the state is
	// assigned; false: a last-state upgrade, whose checkpoint the
	// CheckpointCoordinator restores from the HA metadata
	// (StateAssignmentOperation alone).
	FromPath bool
}

// Finding is one reason Flink would refuse the restore.
type Finding struct {
	// Rule names it: "parallelism", "max-parallelism", "backend",
	// "metadata-version", "no-checkpoint".
	Rule string
	// Attribute is the attribute that asks for what Flink refuses, as the
	// user writes it (job.parallelism, flink_configuration["..."]).
	Attribute string
	// Operator names the snapshot's operator ("" when the rule is about
	// the whole snapshot): its name, uid and ID as the snapshot records them.
	Operator string
	// FlinkClass is where Flink refuses (class.method), and FlinkMessage
	// what it says, "…" for what the snapshot cannot tell (a job vertex ID).
	FlinkClass, FlinkMessage string
	// WayOut says what to do instead.
	WayOut string
}

// Detail is the finding as one paragraph.
func (f Finding) Detail() string {
	s := f.Attribute + ": "
	if f.Operator != "" {
		s += "for the operator " + f.Operator + ", "
	}
	return s + "Flink would refuse the restore (" + f.FlinkClass + ": \"" + f.FlinkMessage + "\"). " + f.WayOut
}

// describe names an operator for a message: name, uid (or that it has
// none: its ID is generated from the job graph), ID.
func describe(op checkpoint.OperatorState) string {
	uid := "no uid"
	if op.UID != "" {
		uid = fmt.Sprintf("uid %q", op.UID)
	}
	name := op.Name
	if name == "" {
		name = "(unnamed)"
	}
	return fmt.Sprintf("%q (%s, ID %s)", name, uid, op.ID)
}

// restored are the snapshot's operators whose parallelism Flink checks on
// restore. StateAssignmentOperation.assignStates runs assignAttemptState,
// and with it checkParallelismPreconditions for every OperatorState of the
// vertex, only for a vertex with non-finished state
// (TaskStateAssignment.hasNonFinishedState: an operator with collected
// subtask states); a fully finished operator has none. This is every
// operator with state, keyed or not (the source's split state counts as
// much as a keyed operator's). Operators with max parallelism 1 are left
// out: Flink gives that to a non-parallel operator
// (SingleOutputStreamOperator.forceNonParallel sets parallelism and max
// parallelism to 1), which keeps parallelism 1 whatever job.parallelism is.
func restored(meta *checkpoint.Metadata) []checkpoint.OperatorState {
	var out []checkpoint.OperatorState
	for _, op := range meta.Operators {
		if op.FullyFinished || len(op.Subtasks) == 0 || op.MaxParallelism <= 1 {
			continue
		}
		out = append(out, op)
	}
	return out
}

// Check returns the reasons Flink would refuse to restore the snapshot with
// the desired configuration, nil when it finds none.
func Check(meta *checkpoint.Metadata, want Desired) []Finding {
	var fs []Finding
	fs = append(fs, checkVersion(meta, want)...)
	ops := restored(meta)
	fs = append(fs, checkParallelism(ops, want)...)
	fs = append(fs, checkMaxParallelism(ops, want)...)
	fs = append(fs, checkBackend(meta, want)...)
	return fs
}

// checkParallelism: StateAssignmentOperation.checkParallelismPreconditions
// (flink-runtime release-2.2.1) throws IllegalStateException when a
// restored operator's max parallelism is below its vertex's new
// parallelism. With no explicit pipeline.max-parallelism Flink adopts the
// snapshot's max parallelism first (SchedulerBase.
// computeVertexParallelismStore lets an auto-configured one be rescaled),
// so raising the parallelism past it cannot work however the
// configuration is written.
func checkParallelism(ops []checkpoint.OperatorState, want Desired) []Finding {
	var fs []Finding
	for _, op := range ops {
		p, attr := 0, "job.parallelism"
		// Dispatcher.applyParallelismOverrides sets a vertex's parallelism
		// by its JobVertexID, which is its chain head's OperatorID
		// (StreamingJobGraphGenerator: the vertex ID is the head's hash;
		// OperatorID.fromJobVertexID): the same hexadecimal ID.
		if o, ok := want.Overrides[op.ID]; ok {
			p, attr = o, fmt.Sprintf("flink_configuration[%q]", flinkconf.ParallelismOverridesKey)
		} else if want.PreviousParallelism == 0 || int(op.Parallelism) == want.PreviousParallelism {
			p = want.Parallelism
		}
		if p == 0 || p <= int(op.MaxParallelism) {
			continue
		}
		fs = append(fs, Finding{Rule: "parallelism", Attribute: fmt.Sprintf("%s (%d)", attr, p), Operator: describe(op),
			FlinkClass: "StateAssignmentOperation.checkParallelismPreconditions",
			FlinkMessage: fmt.Sprintf("The state for task … can not be restored. The maximum parallelism (%d) of the restored state is lower "+
				"than the configured parallelism (%d). Please reduce the parallelism of the task to be lower or equal to the maximum "+
				"parallelism.", op.MaxParallelism, p),
			WayOut: fmt.Sprintf("The snapshot's state is divided into %d key groups, its max parallelism, which can never be raised for "+
				"this state. Set %s to at most %d; or start the job without this state (a new job, or upgrade_mode \"stateless\"), "+
				"with pipeline.max-parallelism set to what the job will ever need.", op.MaxParallelism, attr, op.MaxParallelism)})
	}
	return fs
}

// checkMaxParallelism: a snapshot whose max parallelism differs from the
// vertex's configured one (pipeline.max-parallelism: the rescale validator
// of SchedulerBase.computeVertexParallelismStore, "Cannot override a
// configured max parallelism.") is refused with IllegalStateException: by
// Checkpoints.loadAndValidateCheckpoint for a restore from a path (seen on
// real Flink 2.2.1: internal/testbed TestRealFlink_maxParallelismRulesAreFlinks),
// by StateAssignmentOperation.checkParallelismPreconditions' second check
// for a restore from HA metadata (flink-runtime release-2.2.1).
func checkMaxParallelism(ops []checkpoint.OperatorState, want Desired) []Finding {
	if want.MaxParallelism == 0 {
		return nil
	}
	var fs []Finding
	for _, op := range ops {
		// An operator whose max parallelism the old configuration did not
		// give it has its own (code): pipeline.max-parallelism does not reach it.
		if want.PreviousMaxParallelism != 0 && int(op.MaxParallelism) != want.PreviousMaxParallelism {
			continue
		}
		if int(op.MaxParallelism) == want.MaxParallelism {
			continue
		}
		fs = append(fs, Finding{Rule: "max-parallelism",
			Attribute: fmt.Sprintf("flink_configuration[%q] (%d)", flinkconf.MaxParallelismKey, want.MaxParallelism), Operator: describe(op),
			FlinkClass: "StateAssignmentOperation.checkParallelismPreconditions",
			FlinkMessage: fmt.Sprintf("The maximum parallelism (%d) with which the latest checkpoint of the execution job vertex … has been "+
				"taken and the current maximum parallelism (%d) changed. This is currently not supported.", op.MaxParallelism, want.MaxParallelism),
			WayOut: fmt.Sprintf("Set flink_configuration[%q] = \"%d\", the max parallelism the snapshot was written with, or remove it "+
				"(Flink then adopts the snapshot's).", flinkconf.MaxParallelismKey, op.MaxParallelism)})
		if want.FromPath {
			f := &fs[len(fs)-1]
			f.FlinkClass = "Checkpoints.loadAndValidateCheckpoint"
			f.FlinkMessage = fmt.Sprintf("Failed to rollback to checkpoint/savepoint …. Max parallelism mismatch between checkpoint/savepoint "+
				"state and new program. Cannot map operator %s with max parallelism %d to new program with max parallelism %d. This "+
				"indicates that the program has been changed in a non-compatible way after the checkpoint/savepoint.", op.ID,
				op.MaxParallelism, want.MaxParallelism)
		}
	}
	return fs
}

// KeyedStateKind says which kind of keyed state a snapshot holds, from its
// handle classes (MetadataV2V3SerializerBase.deserializeKeyedStateHandle):
// "incremental" (IncrementalRemoteKeyedStateHandle: RocksDB's or ForSt's
// own files, a checkpoint or a NATIVE savepoint), "full"
// (KeyGroupsStateHandle: a hashmap checkpoint, or RocksDB's with
// incremental checkpoints off), "canonical" (KeyGroupsSavepointStateHandle:
// a CANONICAL savepoint), "changelog" (the changelog backend's handles),
// "mixed", or "none" when no operator holds keyed state.
func KeyedStateKind(meta *checkpoint.Metadata) string {
	kinds := map[string]bool{}
	for _, op := range meta.Operators {
		for c := range op.KeyedHandles {
			switch c {
			case "IncrementalRemoteKeyedStateHandle":
				kinds["incremental"] = true
			case "KeyGroupsStateHandle":
				kinds["full"] = true
			case "KeyGroupsSavepointStateHandle":
				kinds["canonical"] = true
			default:
				kinds["changelog"] = true
			}
		}
	}
	switch len(kinds) {
	case 0:
		return "none"
	case 1:
		for k := range kinds {
			return k
		}
	}
	return "mixed"
}

// Format says what the snapshot is, from its CheckpointProperties
// (MetadataV4Serializer.serializeProperties): "CANONICAL savepoint",
// "NATIVE savepoint", "checkpoint", or "" when a version 2 or 3 file does
// not record it.
func Format(meta *checkpoint.Metadata) string {
	p := meta.Properties
	switch {
	case p == nil:
		return ""
	case p.IsSavepoint():
		return p.SavepointFormat + " savepoint"
	}
	return "checkpoint"
}

// checkBackend: a backend restores only the keyed-state handles its
// restore operation reads, whichever backend wrote them; what decides is
// the snapshot's handle kind, not its name. Measured on real Flink 2.2.1
// (internal/testbed TestRealFlink_backendSwitch; the table is in the
// plan-time checks guide) and read from the restore operations:
//   - hashmap reads KeyGroupsStateHandles only: a full snapshot or a
//     CANONICAL savepoint (HeapRestoreOperation.restore,
//     StateUtil.unexpectedStateHandleException for RocksDB's or ForSt's
//     IncrementalRemoteKeyedStateHandles);
//   - rocksdb reads its own files (IncrementalRemoteKeyedStateHandle,
//     ForSt's among them) and the full-snapshot format of a CANONICAL
//     savepoint (RocksDBKeyedStateBackendBuilder.getRocksDBRestoreOperation);
//     the heap backend's full snapshot fails in RocksDBFullRestoreOperation
//     ("ArrayIndexOutOfBoundsException: Index 0 out of bounds for length 0");
//   - forst reads IncrementalRemoteKeyedStateHandles only, RocksDB's too,
//     and refuses anything else ("Not support restoring yet for
//     ForStStateBackend": ForStKeyedStateBackendBuilder.getForStRestoreOperation,
//     flink-statebackend-forst 2.2.0; only with the non-default
//     state.backend.forst.timer-service.factory = HEAP does it take a
//     full-restore branch, which its own comment says awaits canonical
//     savepoint support, so it is not counted on here).
//
// Flink's documentation promises a backend change only from a CANONICAL
// savepoint ("Checkpoints vs. Savepoints"); the rule follows what Flink 2.2
// does, which is less (no CANONICAL savepoint restores into ForSt) and
// more (RocksDB's and ForSt's own files restore into each other).
// Changelog and mixed handles are not classified: they are let through
// only by the backend that wrote them.
func checkBackend(meta *checkpoint.Metadata, want Desired) []Finding {
	kind, format := KeyedStateKind(meta), Format(meta)
	if want.TakenAs != "" {
		format = want.TakenAs
		if format == "CANONICAL savepoint" && kind != "none" {
			kind = "canonical" // the savepoint is written anew in the canonical format
		}
	}
	target := strings.ToLower(strings.TrimSpace(want.Backend))
	if target == "" || kind == "none" {
		return nil
	}
	attr := fmt.Sprintf("state.backend (%s)", target)
	if want.PreviousBackend != "" && want.PreviousBackend != target {
		attr = fmt.Sprintf("state.backend (%s, was %s)", target, want.PreviousBackend)
	}
	var f Finding
	switch {
	case kind == "changelog" || kind == "mixed":
		if want.PreviousBackend == "" || want.PreviousBackend == target {
			return nil
		}
		f = Finding{FlinkClass: "Flink documentation, Checkpoints vs. Savepoints",
			FlinkMessage: "State backend change: supported by canonical savepoints only",
			WayOut: fmt.Sprintf("The snapshot is a %s (%s keyed state), which only the backend that wrote it restores. %s", what(format), kind,
				canonicalWay(want))}
	case target == flinkconf.BackendHashMap && kind == "incremental":
		f = Finding{FlinkClass: heapClass, FlinkMessage: heapMessage,
			WayOut: fmt.Sprintf("The snapshot is a %s (%s keyed state, RocksDB's or ForSt's own files): the hashmap backend cannot read "+
				"it. %s", what(format), kind, canonicalWay(want))}
	case target == flinkconf.BackendRocksDB && kind == "full":
		f = Finding{FlinkClass: "RocksDBFullRestoreOperation (RocksDBKeyedStateBackendBuilder.getRocksDBRestoreOperation)",
			FlinkMessage: "java.lang.ArrayIndexOutOfBoundsException: Index 0 out of bounds for length 0",
			WayOut: fmt.Sprintf("The snapshot is a %s (%s keyed state, the hashmap backend's own format): RocksDB cannot read it. %s",
				what(format), kind, canonicalWay(want))}
	case target == flinkconf.BackendForSt && (kind == "full" || kind == "canonical"):
		f = Finding{FlinkClass: "ForStKeyedStateBackendBuilder.getForStRestoreOperation",
			FlinkMessage: "java.lang.UnsupportedOperationException: Not support restoring yet for ForStStateBackend",
			WayOut: fmt.Sprintf("The snapshot is a %s (%s keyed state): ForSt restores only RocksDB's or its own files (a checkpoint or a "+
				"NATIVE savepoint of a rocksdb or forst job), not a CANONICAL savepoint or a hashmap snapshot. From rocksdb: let "+
				"the job restore a checkpoint (upgrade_mode = \"last-state\") or a NATIVE savepoint; from hashmap: move to rocksdb "+
				"first (from a CANONICAL savepoint), then to forst.", what(format), kind)}
	default:
		return nil
	}
	f.Rule, f.Attribute = "backend", attr
	return []Finding{f}
}

// canonicalWay is the way out of a backend change the snapshot cannot
// carry: a CANONICAL savepoint, in one apply when the route is open.
func canonicalWay(want Desired) string {
	if want.TakenAs == "NATIVE savepoint" && want.PreviousBackend != flinkconf.BackendForSt && want.Backend != flinkconf.BackendForSt {
		// The operator reads the new spec's kubernetes.operator.* keys for
		// the upgrade's savepoint (FlinkConfigManager.getObserveConfig,
		// addOperatorConfigsFromSpec).
		return fmt.Sprintf("In one apply: set flink_configuration[%q] = \"CANONICAL\" together with state.backend = %q; the operator "+
			"takes the upgrade's savepoint with the new spec's operator settings, and the new backend restores a CANONICAL one. Or keep "+
			"state.backend = %q for this upgrade.", flinkconf.SavepointFormatKey, want.Backend, want.PreviousBackend)
	}
	if want.SavepointRoute && want.Backend != flinkconf.BackendForSt {
		return fmt.Sprintf("In one apply: set job.upgrade_mode = \"savepoint\" together with state.backend = %q. The operator upgrades "+
			"with the new spec's upgrade mode: it stops the job with a CANONICAL savepoint (its default savepoint format) and starts "+
			"the new backend from it; upgrade_mode can go back to \"last-state\" in a later apply without a restart (the operator "+
			"ignores a change of upgrade mode alone). Or keep state.backend = %q for this upgrade.", want.Backend, want.PreviousBackend)
	}
	keep := "the backend that wrote it"
	if want.PreviousBackend != "" {
		keep = fmt.Sprintf("state.backend = %q", want.PreviousBackend)
	}
	return fmt.Sprintf("Keep %s for this restore; to change the backend, take a CANONICAL savepoint of that job (flinkstate_snapshot "+
		"with format_type = \"CANONICAL\"; a ForSt job cannot take one) and start with state.backend = %q and "+
		"job.initial_savepoint_path set to it.", keep, want.Backend)
}

// heapClass and heapMessage: what the heap backend says of a RocksDB or
// ForSt snapshot (HeapRestoreOperation.restore, StateUtil.
// unexpectedStateHandleException, flink-runtime release-2.2.1).
const (
	heapClass   = "HeapRestoreOperation.restore (StateUtil.unexpectedStateHandleException)"
	heapMessage = "Unexpected state handle type, expected one of: class org.apache.flink.runtime.state.KeyGroupsStateHandle, but " +
		"found: class org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle. This can mostly happen when a different " +
		"StateBackend from the one that was used for taking a checkpoint/savepoint is used when restoring."
)

func what(format string) string {
	if format == "" {
		return "snapshot of unrecorded format"
	}
	return format
}

// MaxMetadataVersion is the newest _metadata version a Flink minor version
// reads: the serializers MetadataSerializers registers (flink-runtime
// release-1.20.1: versions 1 to 4; 2.0.0: 1 to 5; 2.1.0 and 2.2.1: 1 to 6).
// 0 when unknown.
func MaxMetadataVersion(v flinkconf.Version) int {
	switch {
	case v.Major == 1 && v.Minor == 20:
		return 4
	case v.Major == 2 && v.Minor == 0:
		return 5
	case v.Major == 2 && (v.Minor == 1 || v.Minor == 2):
		return 6
	}
	return 0
}

// checkVersion: Checkpoints.loadCheckpointMetadata reads the version and
// MetadataSerializers.getSerializer throws IllegalArgumentException
// "Unrecognized checkpoint version number: <v>" for one it does not
// register (the same text in 1.20.1 and 2.2.1).
func checkVersion(meta *checkpoint.Metadata, want Desired) []Finding {
	v, err := flinkconf.ParseVersion(want.FlinkVersion)
	if err != nil {
		return nil
	}
	readable := MaxMetadataVersion(v)
	if readable == 0 || int(meta.Version) <= readable {
		return nil
	}
	var newer []string
	for _, m := range []struct {
		minor string
		max   int
	}{{"2.0", 5}, {"2.1", 6}} {
		if m.max >= int(meta.Version) {
			newer = append(newer, m.minor)
		}
	}
	sort.Strings(newer)
	from := "a newer Flink"
	if len(newer) > 0 {
		from = "Flink " + newer[0] + " or later"
	}
	return []Finding{{Rule: "metadata-version", Attribute: fmt.Sprintf("flink_version (%s)", want.FlinkVersion),
		FlinkClass:   "MetadataSerializers.getSerializer",
		FlinkMessage: fmt.Sprintf("Unrecognized checkpoint version number: %d", meta.Version),
		WayOut: fmt.Sprintf("The snapshot's _metadata is version %d, written by %s; Flink %d.%d reads up to version %d. Keep a "+
			"flink_version that reads it, or start the older Flink without this state.", meta.Version, from, v.Major, v.Minor, readable)}}
}

// GeneratedUIDs are the snapshot's operators with state whose ID Flink
// generated (no uid() set in the job's code): StreamGraphHasherV2 derives
// such an ID from the operator's place in the job graph, so a change to the
// job's code can give it another one, and the restore then refuses the
// operator's state ("Failed to rollback to checkpoint/savepoint … Cannot map
// checkpoint/savepoint state for operator … to the new program, because the
// operator is not available in the new program":
// Checkpoints.throwNonRestoredStateException) unless non-restored state is
// allowed, which drops it. The name and uid are recorded from metadata
// version 5 on (MetadataV5Serializer); for older files nil is returned, as
// nothing can be told.
func GeneratedUIDs(meta *checkpoint.Metadata) []checkpoint.OperatorState {
	if meta == nil || meta.Version < 5 {
		return nil
	}
	var out []checkpoint.OperatorState
	for _, op := range meta.Operators {
		if op.UID == "" && !op.FullyFinished && len(op.Subtasks) > 0 {
			out = append(out, op)
		}
	}
	return out
}

// DescribeAll names operators for a message.
func DescribeAll(ops []checkpoint.OperatorState) string {
	names := make([]string, 0, len(ops))
	for _, op := range ops {
		names = append(names, describe(op))
	}
	return strings.Join(names, ", ")
}
