package preflight

import "testing"

// A restore from a path (job.initial_savepoint_path, a carried final
// savepoint) does not know the backend that wrote the snapshot; its
// handles do: RocksDB's own files with the heap backend are refused, a
// CANONICAL savepoint and a RocksDB target are not.
func TestCheck_restoreFromPathBackendFromHandles(t *testing.T) {
	for _, name := range []string{checkpointFixture, nativeFixture} {
		fs := rules(Check(fixture(t, name), Desired{Backend: "hashmap"}), "backend")
		if len(fs) != 1 {
			t.Fatalf("%s restored with hashmap: %+v, want one backend finding", name, fs)
		}
		mustContain(t, fs[0].Detail(), "state.backend (hashmap)", "HeapRestoreOperation",
			"but found: class org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle", `format_type = "CANONICAL"`)
	}
	for _, c := range []struct{ name, backend string }{{canonicalFixture, "hashmap"}, {checkpointFixture, "rocksdb"}, {checkpointFixture, ""}} {
		if fs := rules(Check(fixture(t, c.name), Desired{Backend: c.backend}), "backend"); len(fs) != 0 {
			t.Errorf("%s restored with %q: %+v", c.name, c.backend, fs)
		}
	}
}

// A restore from a path at a parallelism above the snapshot's max
// parallelism (128 for the fixtures) is refused as an upgrade's is.
func TestCheck_restoreFromPathParallelism(t *testing.T) {
	fs := rules(Check(fixture(t, canonicalFixture), Desired{Parallelism: 200}), "parallelism")
	if len(fs) == 0 {
		t.Fatal("parallelism 200 from a snapshot with max parallelism 128: no finding")
	}
	mustContain(t, fs[0].Detail(), "job.parallelism (200)", "The maximum parallelism (128) of the restored state is lower than the configured parallelism (200)")
}

func TestResumeRestores(t *testing.T) {
	for _, c := range []struct {
		mode, recorded, path string
		checkpoint           bool
	}{
		{"savepoint", "s3://b/sp/savepoint-1", "s3://b/sp/savepoint-1", false},
		{"savepoint", lastStateDummyPath, "", false},
		{"savepoint", "", "", false},
		{"last-state", "s3://b/sp/savepoint-1", "", true},
		{"stateless", "s3://b/sp/savepoint-1", "", false},
	} {
		p, cp := ResumeRestores(c.mode, c.recorded)
		if p != c.path || cp != c.checkpoint {
			t.Errorf("ResumeRestores(%q, %q) = %q, %v; want %q, %v", c.mode, c.recorded, p, cp, c.path, c.checkpoint)
		}
	}
}

func TestNoCheckpoint(t *testing.T) {
	f := NoCheckpoint("0123456789abcdef0123456789abcdef", "s3://b/flink/checkpoints")
	mustContain(t, f.Detail(), "job.upgrade_mode (last-state)", "ApplicationReconciler.deploy", "atLeastOneCheckpoint",
		"0123456789abcdef0123456789abcdef", "s3://b/flink/checkpoints", "state.checkpoint_interval", `"savepoint"`, `"stateless"`)
}

func TestCrossesToFlink2(t *testing.T) {
	for _, c := range []struct {
		from, to string
		want     bool
	}{
		{"1.20.1", "2.2.1", true},
		{"1.20.1", "1.20.2", false},
		{"2.0.0", "2.2.1", false},
		{"2.2.1", "1.20.1", false},
		{"", "2.2.1", false},
	} {
		if got := CrossesToFlink2(c.from, c.to); got != c.want {
			t.Errorf("CrossesToFlink2(%q, %q) = %v, want %v", c.from, c.to, got, c.want)
		}
	}
}

// Flink 2.x writes _metadata version 5 and up, 1.20 version 4.
func TestWrittenByFlink1(t *testing.T) {
	m := fixture(t, checkpointFixture)
	if WrittenByFlink1(m) {
		t.Fatalf("a Flink 2.2.1 checkpoint (version %d) taken for Flink 1.x's", m.Version)
	}
	m.Version = 4
	if !WrittenByFlink1(m) {
		t.Fatal("version 4 not taken for Flink 1.x's")
	}
}

// Flink's refusal of state for an operator the new code lacks names only
// the operator's hex ID; the snapshot's _metadata names it.
func TestMissingOperator(t *testing.T) {
	msg := "java.lang.IllegalStateException: Failed to rollback to checkpoint/savepoint s3://b/flink/counts/savepoints/savepoint-4f1a2b-0123456789ab. " +
		"Cannot map checkpoint/savepoint state for operator " + keyedOperatorID + " to the new program, because the operator is not available " +
		"in the new program. If you want to allow to skip this, you can set the --allowNonRestoredState option on the CLI."
	snap, id, ok := MissingOperator(msg)
	if !ok || snap != "s3://b/flink/counts/savepoints/savepoint-4f1a2b-0123456789ab" || id != keyedOperatorID {
		t.Fatalf("%q %q %v", snap, id, ok)
	}
	if got := NameOperator(fixture(t, checkpointFixture), id); got != `"KeyedProcess" (uid "count", ID `+keyedOperatorID+`)` {
		t.Fatalf("%q", got)
	}
	if got := NameOperator(fixture(t, checkpointFixture), "00000000000000000000000000000000"); got != "" {
		t.Fatalf("%q", got)
	}
	if _, _, ok := MissingOperator("java.lang.ClassNotFoundException: x"); ok {
		t.Fatal("matched another failure")
	}
}
