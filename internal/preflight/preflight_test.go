package preflight

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
)

// The snapshots are real: _metadata files Flink 2.2.1 wrote in the test bed
// for the repository's own test job (source "sequence" -> keyed counter
// "count" -> print sink, parallelism 1, no explicit max parallelism, so 128,
// KeyGroupRangeAssignment.computeDefaultMaxParallelism; RocksDB,
// incremental), recorded by internal/testbed's
// TestRealFlink_recordMetadataFixtures (internal/checkpoint/testdata,
// metadata_test.go says how to regenerate them).
func fixture(t *testing.T, name string) *checkpoint.Metadata {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "checkpoint", "testdata", name, "_metadata"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := checkpoint.ReadMetadata(f, "s3://acme-flink-state/flink/counts/"+name+"/_metadata")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

const (
	checkpointFixture = "incremental-rocksdb-checkpoint"
	canonicalFixture  = "canonical-savepoint"
	nativeFixture     = "native-savepoint"
	keyedOperatorID   = "b71731f1c0df9c3076c4a455334d0ad6" // uid "count"
)

func rules(fs []Finding, rule string) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Rule == rule {
			out = append(out, f)
		}
	}
	return out
}

func mustContain(t *testing.T, s string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(s, p) {
			t.Errorf("%q lacks %q", s, p)
		}
	}
}

// Every operator with state in the snapshot is checked, keyed or not: the
// source's split state too (StateAssignmentOperation checks every
// OperatorState of a vertex with state).
func TestCheck_parallelismAboveSnapshotMax(t *testing.T) {
	fs := rules(Check(fixture(t, checkpointFixture), Desired{Parallelism: 200, PreviousParallelism: 1}), "parallelism")
	if len(fs) != 3 {
		t.Fatalf("%d findings %+v, want one per operator (3)", len(fs), fs)
	}
	for _, f := range fs {
		mustContain(t, f.Detail(), "job.parallelism (200)", "StateAssignmentOperation.checkParallelismPreconditions",
			"The maximum parallelism (128) of the restored state is lower than the configured parallelism (200)", "at most 128")
	}
	mustContain(t, fs[1].Operator, `"KeyedProcess"`, `uid "count"`, keyedOperatorID)
}

func TestCheck_parallelismWithinSnapshotMax(t *testing.T) {
	if fs := Check(fixture(t, checkpointFixture), Desired{Parallelism: 128, PreviousParallelism: 1}); len(fs) != 0 {
		t.Errorf("parallelism 128 against max parallelism 128: %+v", fs)
	}
}

// Operators the snapshot records at another parallelism than the running
// spec's have their own: job.parallelism does not reach them.
func TestCheck_parallelismOwnParallelismSkipped(t *testing.T) {
	if fs := Check(fixture(t, checkpointFixture), Desired{Parallelism: 200, PreviousParallelism: 4}); len(fs) != 0 {
		t.Errorf("operators at parallelism 1 under a spec of 4: %+v", fs)
	}
}

// An override reaches the operator whose ID is the vertex ID.
func TestCheck_parallelismOverride(t *testing.T) {
	fs := Check(fixture(t, checkpointFixture), Desired{Parallelism: 1, PreviousParallelism: 1, Overrides: map[string]int{keyedOperatorID: 300}})
	if len(fs) != 1 || !strings.Contains(fs[0].Operator, keyedOperatorID) {
		t.Fatalf("findings %+v, want one for the overridden operator", fs)
	}
	mustContain(t, fs[0].Attribute, `flink_configuration["pipeline.jobvertex-parallelism-overrides"] (300)`)
}

func TestCheck_maxParallelismChanged(t *testing.T) {
	fs := rules(Check(fixture(t, canonicalFixture), Desired{MaxParallelism: 8}), "max-parallelism")
	if len(fs) != 3 {
		t.Fatalf("%d findings %+v, want 3", len(fs), fs)
	}
	mustContain(t, fs[0].Detail(), `flink_configuration["pipeline.max-parallelism"] (8)`,
		"The maximum parallelism (128) with which the latest checkpoint of the execution job vertex … has been taken and the current maximum parallelism (8) changed",
		`"pipeline.max-parallelism"] = "128"`)
}

func TestCheck_maxParallelismKept(t *testing.T) {
	for _, want := range []Desired{{MaxParallelism: 128}, {}, {MaxParallelism: 8, PreviousMaxParallelism: 64}} {
		if fs := Check(fixture(t, canonicalFixture), want); len(fs) != 0 {
			t.Errorf("%+v: %+v", want, fs)
		}
	}
}

func TestKeyedStateKindAndFormat(t *testing.T) {
	for name, want := range map[string][2]string{
		checkpointFixture: {"incremental", "checkpoint"},
		canonicalFixture:  {"canonical", "CANONICAL savepoint"},
		nativeFixture:     {"incremental", "NATIVE savepoint"},
	} {
		m := fixture(t, name)
		if k, f := KeyedStateKind(m), Format(m); k != want[0] || f != want[1] {
			t.Errorf("%s: kind %q, format %q; want %q, %q", name, k, f, want[0], want[1])
		}
	}
}

// RocksDB's checkpoint and native savepoint restored by the heap backend:
// HeapRestoreOperation's message. ForSt reads RocksDB's own files (measured
// on real Flink 2.2.1: the counters continue), so rocksdb -> forst from
// them is no finding.
func TestCheck_backendChangeFromRocksDBFiles(t *testing.T) {
	for _, name := range []string{checkpointFixture, nativeFixture} {
		fs := Check(fixture(t, name), Desired{Backend: "hashmap", PreviousBackend: "rocksdb"})
		if len(fs) != 1 || fs[0].Rule != "backend" {
			t.Fatalf("%s: %+v, want one backend finding", name, fs)
		}
		mustContain(t, fs[0].Detail(), "state.backend (hashmap, was rocksdb)", "HeapRestoreOperation",
			"but found: class org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle", `Keep state.backend = "rocksdb"`, "CANONICAL")
		if fs := Check(fixture(t, name), Desired{Backend: "forst", PreviousBackend: "rocksdb"}); len(fs) != 0 {
			t.Errorf("%s, rocksdb -> forst: %+v", name, fs)
		}
	}
}

// A CANONICAL savepoint restores into rocksdb and hashmap, not into ForSt
// (ForStKeyedStateBackendBuilder: "Not support restoring yet").
func TestCheck_backendChangeFromCanonicalSavepoint(t *testing.T) {
	for _, b := range []string{"hashmap", "rocksdb"} {
		if fs := Check(fixture(t, canonicalFixture), Desired{Backend: b, PreviousBackend: "rocksdb"}); len(fs) != 0 {
			t.Errorf("canonical savepoint, rocksdb -> %s: %+v", b, fs)
		}
	}
	fs := Check(fixture(t, canonicalFixture), Desired{Backend: "forst", PreviousBackend: "rocksdb"})
	if len(fs) != 1 {
		t.Fatalf("canonical savepoint, rocksdb -> forst: %+v, want one backend finding", fs)
	}
	mustContain(t, fs[0].Detail(), "state.backend (forst, was rocksdb)", "ForStKeyedStateBackendBuilder",
		"Not support restoring yet for ForStStateBackend", "a checkpoint or a NATIVE savepoint")
	if fs := Check(fixture(t, checkpointFixture), Desired{Backend: "rocksdb", PreviousBackend: "rocksdb"}); len(fs) != 0 {
		t.Errorf("same backend: %+v", fs)
	}
}

// The savepoint a savepoint-mode upgrade will take, read through the
// newest checkpoint: a CANONICAL one is canonical keyed state whatever the
// checkpoint holds, so it restores into hashmap and not into ForSt.
func TestCheck_backendChangeThroughCanonicalSavepointToBeTaken(t *testing.T) {
	m := fixture(t, checkpointFixture)
	if fs := Check(m, Desired{Backend: "hashmap", PreviousBackend: "rocksdb", TakenAs: "CANONICAL savepoint"}); len(fs) != 0 {
		t.Errorf("rocksdb -> hashmap through a CANONICAL savepoint: %+v", fs)
	}
	if fs := Check(m, Desired{Backend: "forst", PreviousBackend: "rocksdb", TakenAs: "CANONICAL savepoint"}); len(fs) != 1 {
		t.Errorf("rocksdb -> forst through a CANONICAL savepoint: %+v, want one finding", fs)
	}
}

// Flink 2.2.1 wrote version 6; 2.0 reads up to 5 and 1.20 up to 4.
func TestCheck_metadataVersion(t *testing.T) {
	m := fixture(t, checkpointFixture)
	for v, reads := range map[string]string{"1.20.1": "reads up to version 4", "2.0.2": "reads up to version 5"} {
		fs := Check(m, Desired{FlinkVersion: v})
		if len(fs) != 1 {
			t.Fatalf("%s: %+v, want one finding", v, fs)
		}
		mustContain(t, fs[0].Detail(), "flink_version ("+v+")", "MetadataSerializers.getSerializer", "Unrecognized checkpoint version number: 6",
			"Flink 2.1 or later", reads)
	}
	for _, v := range []string{"2.1.3", "2.2.1"} {
		if fs := Check(m, Desired{FlinkVersion: v}); len(fs) != 0 {
			t.Errorf("%s: %+v", v, fs)
		}
	}
}

// Operators with state and no uid are listed (their IDs are generated);
// the fixture's operators all have one. Metadata before version 5 records
// no uid: nothing is told.
func TestGeneratedUIDs(t *testing.T) {
	m := fixture(t, checkpointFixture)
	if ops := GeneratedUIDs(m); len(ops) != 0 {
		t.Fatalf("fixture operators all have a uid: %+v", ops)
	}
	m.Operators[1].UID = ""
	ops := GeneratedUIDs(m)
	if len(ops) != 1 || ops[0].ID != keyedOperatorID {
		t.Fatalf("%+v", ops)
	}
	mustContain(t, DescribeAll(ops), `"KeyedProcess" (no uid, ID `+keyedOperatorID+`)`)
	m.Version = 4
	if ops := GeneratedUIDs(m); ops != nil {
		t.Fatalf("version 4: %+v", ops)
	}
}

// A savepoint-mode upgrade whose savepoint the operator takes NATIVE: the
// newest checkpoint stands in for it, and a NATIVE savepoint keeps the
// backend's own files, so another backend is refused as from the
// checkpoint itself.
func TestCheck_backendChangeThroughNativeSavepoint(t *testing.T) {
	fs := Check(fixture(t, checkpointFixture), Desired{Backend: "hashmap", PreviousBackend: "rocksdb", TakenAs: "NATIVE savepoint"})
	if len(fs) != 1 || fs[0].Rule != "backend" {
		t.Fatalf("%+v, want one backend finding", fs)
	}
	mustContain(t, fs[0].Detail(), "The snapshot is a NATIVE savepoint (incremental keyed state", "HeapRestoreOperation",
		`In one apply: set flink_configuration["kubernetes.operator.savepoint.format.type"] = "CANONICAL"`)
}

// A last-state backend change that a savepoint-mode upgrade can carry in
// the same apply says so; without the route the way out is two steps.
func TestCheck_backendChangeOffersTheSavepointRoute(t *testing.T) {
	m := fixture(t, checkpointFixture)
	route := Check(m, Desired{Backend: "hashmap", PreviousBackend: "rocksdb", SavepointRoute: true})
	if len(route) != 1 {
		t.Fatalf("%+v, want one backend finding", route)
	}
	mustContain(t, route[0].WayOut, `In one apply: set job.upgrade_mode = "savepoint" together with state.backend = "hashmap"`,
		"CANONICAL savepoint", `Or keep state.backend = "rocksdb"`)
	plain := Check(m, Desired{Backend: "hashmap", PreviousBackend: "rocksdb"})
	if len(plain) != 1 || strings.Contains(plain[0].WayOut, "In one apply") {
		t.Errorf("without the route: %+v", plain)
	}
}

// The heap backend's own full snapshot (KeyGroupsStateHandles: a hashmap
// checkpoint or NATIVE savepoint) restores into hashmap alone: RocksDB
// fails reading it (ArrayIndexOutOfBoundsException) and ForSt does not
// restore it, as measured on real Flink 2.2.1.
func TestCheck_backendChangeFromHeapSnapshot(t *testing.T) {
	m := fixture(t, checkpointFixture)
	for i := range m.Operators {
		if len(m.Operators[i].KeyedHandles) > 0 {
			m.Operators[i].KeyedHandles = map[string]int{"KeyGroupsStateHandle": 1}
		}
	}
	if k := KeyedStateKind(m); k != "full" {
		t.Fatalf("kind %q, want full", k)
	}
	for target, says := range map[string]string{"rocksdb": "ArrayIndexOutOfBoundsException", "forst": "Not support restoring yet"} {
		fs := Check(m, Desired{Backend: target, PreviousBackend: "hashmap"})
		if len(fs) != 1 {
			t.Fatalf("hashmap -> %s from a full snapshot: %+v, want one finding", target, fs)
		}
		mustContain(t, fs[0].Detail(), says)
	}
	if fs := Check(m, Desired{Backend: "hashmap", PreviousBackend: "hashmap"}); len(fs) != 0 {
		t.Errorf("hashmap's own snapshot: %+v", fs)
	}
}

// From a path Flink refuses a changed max parallelism earlier, in
// Checkpoints.loadAndValidateCheckpoint, with words of its own (seen on
// real Flink 2.2.1).
func TestCheck_maxParallelismChangedFromPath(t *testing.T) {
	fs := rules(Check(fixture(t, canonicalFixture), Desired{MaxParallelism: 8, FromPath: true}), "max-parallelism")
	if len(fs) != 3 {
		t.Fatalf("%d findings %+v, want 3", len(fs), fs)
	}
	mustContain(t, fs[1].Detail(), "Checkpoints.loadAndValidateCheckpoint", "Max parallelism mismatch between checkpoint/savepoint state and new program",
		"Cannot map operator "+keyedOperatorID+" with max parallelism 128 to new program with max parallelism 8")
}
