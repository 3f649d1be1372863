package flinkconf

import (
	"strings"
	"testing"
)

func parallelismInput(p int64, extra map[string]string) Input {
	return Input{FlinkVersion: "2.2.1", Identity: "irsa", UpgradeMode: UpgradeLastState, HasJob: true, Parallelism: &p,
		State: State{Backend: BackendRocksDB, CheckpointDir: "s3://acme-flink-state/p/c"}, Extra: extra}
}

func parallelismFindings(in Input) []Finding {
	_, fs := Derive(in)
	var out []Finding
	for _, f := range fs {
		if f.Severity == Error && strings.Contains(f.Summary, "max parallelism") {
			out = append(out, f)
		}
	}
	return out
}

// job.parallelism above an explicit pipeline.max-parallelism is refused on
// job.parallelism, with Flink's message and its numbers.
func TestParallelismRules_aboveExplicitMax(t *testing.T) {
	fs := parallelismFindings(parallelismInput(12, map[string]string{MaxParallelismKey: "8"}))
	if len(fs) != 1 || fs[0].Severity != Error || strings.Join(fs[0].Path, ".") != "job.parallelism" {
		t.Fatalf("findings %+v, want one error on job.parallelism", fs)
	}
	for _, want := range []string{"job.parallelism (12)", `"pipeline.max-parallelism" (8)`, "parallelism (12) is higher than the max parallelism (8)", "at most 8"} {
		if !strings.Contains(fs[0].Detail, want) {
			t.Errorf("detail %q lacks %q", fs[0].Detail, want)
		}
	}
}

// Equal, below, unset, Flink's default -1 and an unreadable value: no finding.
func TestParallelismRules_accepted(t *testing.T) {
	for _, c := range []struct {
		p     int64
		extra map[string]string
	}{
		{8, map[string]string{MaxParallelismKey: "8"}},
		{2, map[string]string{MaxParallelismKey: " 8 "}},
		{12, nil},
		{12, map[string]string{MaxParallelismKey: "-1"}},
		{12, map[string]string{MaxParallelismKey: "eight"}},
		// The autoscaler caps itself at the vertex's max parallelism.
		{4, map[string]string{MaxParallelismKey: "8", "job.autoscaler.enabled": "true", "job.autoscaler.vertex.max-parallelism": "200"}},
	} {
		if fs := parallelismFindings(parallelismInput(c.p, c.extra)); len(fs) != 0 {
			t.Errorf("parallelism %d, %v: %+v, want none", c.p, c.extra, fs)
		}
	}
}

// A vertex override above the max parallelism is refused on the key; one
// within it is not.
func TestParallelismRules_overrides(t *testing.T) {
	fs := parallelismFindings(parallelismInput(2, map[string]string{MaxParallelismKey: "8",
		ParallelismOverridesKey: "bc764cd8ddf7a0cff126f51c16239658:4, 0A448493B4782967B150582570326227:16"}))
	if len(fs) != 1 || fs[0].Severity != Error || strings.Join(fs[0].Path, ".") != "flink_configuration."+ParallelismOverridesKey {
		t.Fatalf("findings %+v, want one error on the overrides key", fs)
	}
	if !strings.Contains(fs[0].Detail, "0a448493b4782967b150582570326227 the parallelism 16") {
		t.Errorf("detail %q does not name the vertex and its parallelism", fs[0].Detail)
	}
}

func TestParallelismOverrides_parse(t *testing.T) {
	got := ParallelismOverrides(map[string]string{ParallelismOverridesKey: "a:1,b: 2,c:x,'d':3,e"})
	if len(got) != 2 || got["a"] != 1 || got["b"] != 2 {
		t.Errorf("ParallelismOverrides = %v, want a:1 b:2", got)
	}
}

// KeyGroupRangeAssignment.computeDefaultMaxParallelism (flink-runtime
// release-2.2.1) at its bounds: 128 up to parallelism 85 (85+42 = 127),
// then the power of two at or above 1.5 × p, at most 32768.
func TestDefaultMaxParallelism(t *testing.T) {
	for _, c := range []struct{ p, want int }{
		{0, 128}, {1, 128}, {2, 128}, {85, 128}, {86, 256}, {128, 256}, {171, 256}, {172, 512}, {1000, 2048},
		{21845, 32768}, {21846, 32768}, {32768, 32768},
	} {
		if got := DefaultMaxParallelism(c.p); got != c.want {
			t.Errorf("DefaultMaxParallelism(%d) = %d, want %d", c.p, got, c.want)
		}
	}
}

func maxParallelismWarnings(in Input) []Finding {
	_, fs := Derive(in)
	var out []Finding
	for _, f := range fs {
		if f.Summary == "No explicit max parallelism" {
			out = append(out, f)
		}
	}
	return out
}

// A stateful job without pipeline.max-parallelism (or with Flink's -1) is
// warned on flink_configuration with the number Flink will choose for its
// parallelism and that it cannot be raised later.
func TestDefaultMaxParallelismRule_warns(t *testing.T) {
	for _, c := range []struct {
		mode  string
		p     int64
		extra map[string]string
		want  string
	}{
		{UpgradeLastState, 2, nil, "job.parallelism = 2, Flink gives every operator without a max parallelism of its own 128 "},
		{UpgradeSavepoint, 100, nil, "job.parallelism = 100, Flink gives every operator without a max parallelism of its own 256 "},
		{UpgradeLastState, 12, map[string]string{MaxParallelismKey: " -1"}, "of its own 128 "},
	} {
		in := parallelismInput(c.p, c.extra)
		in.UpgradeMode, in.State.SavepointDir = c.mode, "s3://acme-flink-state/p/s"
		fs := maxParallelismWarnings(in)
		if len(fs) != 1 || fs[0].Severity != Warning || strings.Join(fs[0].Path, ".") != "flink_configuration" {
			t.Fatalf("%s, parallelism %d, %v: findings %+v, want one warning on flink_configuration", c.mode, c.p, c.extra, fs)
		}
		for _, want := range []string{c.want, "never be raised without losing the keyed state", `Set "pipeline.max-parallelism"`} {
			if !strings.Contains(fs[0].Detail, want) {
				t.Errorf("%s, parallelism %d: detail %q lacks %q", c.mode, c.p, fs[0].Detail, want)
			}
		}
	}
}

// An explicit max parallelism, a stateless job, a session cluster or an
// unset parallelism (refused elsewhere): no warning.
func TestDefaultMaxParallelismRule_quiet(t *testing.T) {
	explicit := parallelismInput(2, map[string]string{MaxParallelismKey: "128"})
	stateless := parallelismInput(2, nil)
	stateless.UpgradeMode = UpgradeStateless
	session := parallelismInput(2, nil)
	session.HasJob, session.Parallelism = false, nil
	unset := parallelismInput(2, nil)
	unset.Parallelism = nil
	for name, in := range map[string]Input{"explicit": explicit, "stateless": stateless, "session": session, "no parallelism": unset} {
		if fs := maxParallelismWarnings(in); len(fs) != 0 {
			t.Errorf("%s: %+v, want no max parallelism warning", name, fs)
		}
	}
}
