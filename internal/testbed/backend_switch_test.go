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
// the restore pre-flight's backend rule (preflight.Check: a backend change
// restores only from a CANONICAL savepoint) to it: every restore the rule
// lets through must restore with the counters continuing. A refusal of a
// restore Flink would accept is reported as a measurement (the rule is
// Flink's documented contract, which is stricter than what 2.2.1 happens to
// read), not as a failure.
//
// It starts three Flink clusters to take the snapshots and one per restore in turn (about 8 minutes on 2 cores), so it
// runs by hand: FLINKSTATE_BACKEND_TABLE=1 (a file name writes the table
// there too). ForSt is not measured: the test bed's Flink 2.2.1
// distribution has no flink-statebackend-forst (ClassNotFoundException:
// ForStStateBackendFactory).
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
	full := func(in *flinkconf.Input) { in.Values["state.incremental"] = "false" }

	type snap struct {
		what, backend, path string
		meta                *checkpoint.Metadata
	}
	var snaps []snap
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
			for _, format := range []string{"CANONICAL", "NATIVE"} {
				p, err := c.TriggerSavepoint(ctx, jobID, "", format, 2*time.Minute)
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
	take(flinkconf.BackendRocksDB, "incremental checkpoint", rocksdb, true)
	take(flinkconf.BackendRocksDB, "checkpoint, incremental off", full, false)
	take(flinkconf.BackendHashMap, "checkpoint", hashmap, true)

	var table []string
	for i := range snaps {
		s := &snaps[i]
		meta, err := checkpoint.ReadMetadataAt(ctx, b.ac.S3, s.path)
		if err != nil {
			t.Fatalf("%s (%s): %v", s.what, s.backend, err)
		}
		s.meta = meta
		for _, target := range []string{flinkconf.BackendRocksDB, flinkconf.BackendHashMap} {
			if target == s.backend && s.what != "NATIVE savepoint" && s.what != "CANONICAL savepoint" {
				continue // a checkpoint restored by its own backend: what every last-state upgrade does
			}
			edit := rocksdb
			if target == flinkconf.BackendHashMap {
				edit = hashmap
			}
			restored, outcome := restoreCopy(ctx, t, b, b.bucket, role, s.path, edit)
			refused := len(preflight.Check(meta, preflight.Desired{Backend: target, PreviousBackend: s.backend})) > 0
			table = append(table, fmt.Sprintf("%-22s %-7s (%s keyed state) -> %-7s | Flink 2.2.1: restored %-5v | pre-flight refuses: %-5v | %s",
				s.what, s.backend, preflight.KeyedStateKind(meta), target, restored, refused, firstLine(outcome)))
			if !restored && !refused {
				t.Errorf("%s of %s restored with %s: the pre-flight lets it through, Flink refused it: %s", s.what, s.backend, target, outcome)
			}
		}
	}
	t.Logf("backend/format restore table (Flink 2.2.1):\n%s", strings.Join(table, "\n"))
	if out != "1" {
		_ = os.WriteFile(out, []byte(strings.Join(table, "\n")+"\n"), 0o644)
	}
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	if len(first) > 160 {
		first = first[:160] + "…"
	}
	return first
}
