package testbed

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/preflight"
)

// TestRealFlink_backendSwitch measures, on real Flink 2.2.1, which
// snapshots restore with which state backend (issue 44's table), and holds
// the restore pre-flight's backend rule (preflight.Check: what each
// backend's restore operation reads, by the snapshot's handle kind) to it
// both ways: the pre-flight refuses exactly the restores Flink refuses.
//
// It starts four Flink clusters to take the snapshots and one per restore in turn (about 8 minutes on 2 cores), so it
// runs by hand: FLINKSTATE_BACKEND_TABLE=1 (a file name writes the table
// there too). ForSt is measured as it ships in Flink 2's distribution
// (tools/flink/pom.xml, flink.forst.version): its CANONICAL savepoint is
// asked for too, to show what Flink says (the provider never asks it:
// FLINK-37301).
func TestRealFlink_backendSwitch(t *testing.T) {
	out := os.Getenv("FLINKSTATE_BACKEND_TABLE")
	if out == "" {
		t.Skip("measures the backend/format restore table on real Flink (about 8 minutes): set FLINKSTATE_BACKEND_TABLE=1")
	}
	b := newRealBed(t, "backends-")
	ctx := context.Background()
	role := "arn:aws:iam::000000000000:role/backends"
	hashmap := func(in *flinkconf.Input) {
		in.State.Backend = flinkconf.BackendHashMap
		delete(in.Values, "state.incremental")
	}
	rocksdb := func(*flinkconf.Input) {}
	forst := func(in *flinkconf.Input) {
		in.State.Backend = flinkconf.BackendForSt
		delete(in.Values, "state.incremental") // ForSt always checkpoints incrementally
	}
	edits := map[string]func(*flinkconf.Input){flinkconf.BackendRocksDB: rocksdb, flinkconf.BackendHashMap: hashmap, flinkconf.BackendForSt: forst}
	full := func(in *flinkconf.Input) { in.Values["state.incremental"] = "false" }

	type snap struct {
		what, backend, path string
		meta                *checkpoint.Metadata
	}
	var snaps []snap
	var refusedSavepoints []string
	take := func(backend, kind string, edit func(*flinkconf.Input), savepoints bool) {
		conf, chkDir := realFlinkConf(t, b.bucket, "irsa", edit)
		c, jobID := b.run(t, b.irsaJob(t, conf, role))
		if _, err := c.WaitCheckpoints(ctx, jobID, 3, 2*time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.WaitCounts(ctx, 2, time.Minute); err != nil {
			t.Fatal(err)
		}
		if savepoints {
			formats := []string{"CANONICAL", "NATIVE"}
			if backend == flinkconf.BackendForSt {
				// NATIVE first: the CANONICAL one ForSt refuses must not
				// disturb the job before the one it takes.
				formats = []string{"NATIVE", "CANONICAL"}
			}
			for _, format := range formats {
				p, err := c.TriggerSavepoint(ctx, jobID, "", format, 2*time.Minute)
				if err != nil && backend == flinkconf.BackendForSt {
					// What Flink says when it is asked anyway.
					refusedSavepoints = append(refusedSavepoints, fmt.Sprintf("%s savepoint of %s: Flink 2.2.1 refused: %s", format, backend, deepest(err.Error())))
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				snaps = append(snaps, snap{what: format + " savepoint", backend: backend, path: p})
			}
		}
		n, _, err := c.CompletedCheckpoints(ctx, jobID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.WaitCheckpoints(ctx, jobID, n+1, 2*time.Minute); err != nil {
			t.Fatal(err)
		}
		c.Stop() // killed: its checkpoints are kept
		snaps = append(snaps, snap{what: kind, backend: backend, path: latestKept(ctx, t, b, chkDir, jobID)})
	}
	// FLINKSTATE_BACKEND_SOURCES (e.g. "forst") narrows the snapshots
	// taken to those backends' for a re-run.
	only := os.Getenv("FLINKSTATE_BACKEND_SOURCES")
	for _, s := range []struct {
		backend, kind string
		edit          func(*flinkconf.Input)
		savepoints    bool
	}{
		{flinkconf.BackendRocksDB, "incremental checkpoint", rocksdb, true},
		{flinkconf.BackendRocksDB, "checkpoint, incremental off", full, false},
		{flinkconf.BackendHashMap, "checkpoint", hashmap, true},
		{flinkconf.BackendForSt, "checkpoint", forst, true},
	} {
		if only == "" || strings.Contains(only, s.backend) {
			take(s.backend, s.kind, s.edit, s.savepoints)
		}
	}

	var table []string
	for i := range snaps {
		s := &snaps[i]
		meta, err := checkpoint.ReadMetadataAt(ctx, b.ac.S3, s.path)
		if err != nil {
			t.Fatalf("%s (%s): %v", s.what, s.backend, err)
		}
		s.meta = meta
		for _, target := range []string{flinkconf.BackendRocksDB, flinkconf.BackendHashMap, flinkconf.BackendForSt} {
			if target == s.backend && s.what != "NATIVE savepoint" && s.what != "CANONICAL savepoint" {
				continue // a checkpoint restored by its own backend: what every last-state upgrade does
			}
			restored, outcome := restoreCopy(ctx, t, b, b.bucket, role, s.path, edits[target])
			refused := len(preflight.Check(meta, preflight.Desired{Backend: target, PreviousBackend: s.backend})) > 0
			table = append(table, fmt.Sprintf("%-22s %-7s (%s keyed state) -> %-7s | Flink 2.2.1: restored %-5v | pre-flight refuses: %-5v | %s",
				s.what, s.backend, preflight.KeyedStateKind(meta), target, restored, refused, firstLine(outcome)))
			switch {
			case !restored && !refused:
				t.Errorf("%s of %s restored with %s: the pre-flight lets it through, Flink refused it: %s", s.what, s.backend, target, outcome)
			case restored && refused:
				t.Errorf("%s of %s restored with %s: the pre-flight refuses it, Flink restored it: %s", s.what, s.backend, target, outcome)
			}
		}
	}
	table = append(table, refusedSavepoints...)
	t.Logf("backend/format restore table (Flink 2.2.1):\n%s", strings.Join(table, "\n"))
	if out != "1" {
		_ = os.WriteFile(out, []byte(strings.Join(table, "\n")+"\n"), 0o644)
	}
}

// deepest is the last "Caused by" of a Java stack trace in s (what Flink
// could not do), else its first line.
func deepest(s string) string {
	cause := ""
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if c, ok := strings.CutPrefix(l, "Caused by: "); ok {
			cause = c
		}
	}
	if cause == "" {
		return firstLine(s)
	}
	if len(cause) > 300 {
		cause = cause[:300] + "…"
	}
	return cause
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	if len(first) > 160 {
		first = first[:160] + "…"
	}
	return first
}
