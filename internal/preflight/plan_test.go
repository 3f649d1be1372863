package preflight

import (
	"reflect"
	"strings"
	"testing"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
)

func TestFirstValue(t *testing.T) {
	cfg := map[string]string{"state.backend": "hashmap", "empty": ""}
	cases := []struct {
		keys []string
		want string
	}{
		{[]string{"state.backend.type", "state.backend"}, "hashmap"},
		{[]string{"empty", "state.backend"}, "hashmap"},
		{[]string{"missing"}, ""},
		{nil, ""},
	}
	for _, c := range cases {
		if got := FirstValue(cfg, c.keys...); got != c.want {
			t.Errorf("FirstValue(%v) = %q, want %q", c.keys, got, c.want)
		}
	}
}

// What an upgrade's pre-flight compares, by upgrade mode and Flink version.
func TestUpgrade_desired(t *testing.T) {
	rocks := map[string]string{"state.backend.type": "rocksdb", "pipeline.max-parallelism": "256"}
	withDir := map[string]string{"state.backend.type": "rocksdb", "execution.checkpointing.savepoint-dir": "s3://b/sp"}
	native := map[string]string{"state.backend.type": "rocksdb", flinkconf.SavepointFormatKey: "native"}
	forst := map[string]string{"state.backend.type": "forst"}
	hashmap := map[string]string{"state.backend": "hashmap"}
	v := func(mode, version string) flinkdeploy.Desired {
		return flinkdeploy.Desired{HasJob: true, UpgradeMode: mode, FlinkVersion: version}
	}
	cases := []struct {
		name           string
		prior, planned flinkdeploy.Desired
		oldCfg, newCfg map[string]string
		want           Desired
	}{
		{"last-state: the backends, no savepoint route without a savepoint directory", v("last-state", "2.2.1"), v("last-state", "2.2.1"),
			rocks, hashmap, Desired{Parallelism: 4, PreviousParallelism: 2, FlinkVersion: "2.2.1", PreviousMaxParallelism: 256,
				Overrides: map[string]int{}, Backend: "hashmap", PreviousBackend: "rocksdb"}},
		{"last-state with a savepoint directory: a canonical savepoint could carry it", v("last-state", "2.2.1"), v("last-state", "2.2.1"),
			rocks, withDir, Desired{Parallelism: 4, PreviousParallelism: 2, FlinkVersion: "2.2.1", PreviousMaxParallelism: 256,
				Overrides: map[string]int{}, Backend: "rocksdb", PreviousBackend: "rocksdb", SavepointRoute: true}},
		{"last-state from ForSt: no canonical savepoint route", v("last-state", "2.2.1"), v("last-state", "2.2.1"),
			forst, map[string]string{"state.backend.type": "forst", "state.savepoints.dir": "s3://b/sp"},
			Desired{Parallelism: 4, PreviousParallelism: 2, FlinkVersion: "2.2.1", Overrides: map[string]int{}, Backend: "forst",
				PreviousBackend: "forst"}},
		{"savepoint mode: from a canonical savepoint", v("savepoint", "2.2.1"), v("savepoint", "2.2.1"), rocks, hashmap,
			Desired{Parallelism: 4, PreviousParallelism: 2, FlinkVersion: "2.2.1", PreviousMaxParallelism: 256, Overrides: map[string]int{},
				Backend: "hashmap", PreviousBackend: "rocksdb", TakenAs: "CANONICAL savepoint", FromPath: true}},
		{"savepoint mode: the running spec's format", v("savepoint", "2.2.1"), v("savepoint", "2.2.1"), native, hashmap,
			Desired{Parallelism: 4, PreviousParallelism: 2, FlinkVersion: "2.2.1", Overrides: map[string]int{},
				Backend: "hashmap", PreviousBackend: "rocksdb", TakenAs: "NATIVE savepoint", FromPath: true}},
		{"a Flink version change: the backend rule is left out", v("last-state", "2.1.1"), v("last-state", "2.2.1"), rocks, hashmap,
			Desired{Parallelism: 4, PreviousParallelism: 2, FlinkVersion: "2.2.1", PreviousMaxParallelism: 256, Overrides: map[string]int{}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Upgrade{Prior: c.prior, Planned: c.planned, PriorConfig: c.oldCfg, PlannedConfig: c.newCfg, Parallelism: 4,
				PreviousParallelism: 2}.Desired()
			if got.Overrides == nil {
				got.Overrides = map[string]int{}
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("Desired() = %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestUpgrade_findings(t *testing.T) {
	u := Upgrade{Subject: "FlinkDeployment ns/orders", Prior: flinkdeploy.Desired{UpgradeMode: "last-state", FlinkVersion: "2.2.1"},
		Planned: flinkdeploy.Desired{UpgradeMode: "last-state", FlinkVersion: "2.2.1"}, Parallelism: 200, PreviousParallelism: 1,
		JobID: "j1"}
	fs := u.Findings("s3://b/chk-3", fixture(t, checkpointFixture))
	if len(fs) == 0 {
		t.Fatal("no findings for parallelism 200 above max parallelism 128")
	}
	refusals := 0
	for _, f := range fs {
		if f.Severity != flinkconf.Error {
			continue
		}
		refusals++
		if f.Summary != refused || f.Path != nil {
			t.Errorf("refusal %+v: want %q on no attribute", f, refused)
		}
		mustContain(t, f.Detail, "FlinkDeployment ns/orders was not changed, and its job keeps running: it would restore s3://b/chk-3 "+
			"(the newest completed checkpoint of job j1, which this last-state upgrade restores), and job.parallelism (200)")
	}
	if refusals == 0 {
		t.Errorf("no refusal in %+v", fs)
	}
	u.Planned.UpgradeMode = "savepoint"
	mustContain(t, u.Findings("s3://b/chk-3", fixture(t, checkpointFixture))[0].Detail, "read for the savepoint this upgrade takes and restores")
	s := u.Skipped("S3 timed out")
	if s.Severity != flinkconf.Warning || s.Summary != "Restore pre-flight skipped" {
		t.Errorf("Skipped = %+v", s)
	}
	mustContain(t, s.Detail, "FlinkDeployment ns/orders: the provider could not read the checkpoint", ": S3 timed out. The update goes on.")
}

// Operators whose ID Flink generated are a warning only when the job's code
// changes (flinkdeploy.CodeChanges).
func TestUpgrade_generatedUIDs(t *testing.T) {
	meta := fixture(t, checkpointFixture)
	for i := range meta.Operators {
		meta.Operators[i].UID = "" // as a job without uid() writes it
	}
	if len(GeneratedUIDs(meta)) == 0 {
		t.Fatal("no operator without a uid")
	}
	spec := func(image string) *flinkdeploy.Spec {
		return &flinkdeploy.Spec{Image: image, Job: &flinkdeploy.Job{JarURI: "local:///a.jar"}}
	}
	for _, c := range []struct {
		name         string
		prior, image string
		want         bool
	}{{"same code", "flink:1", "flink:1", false}, {"new image", "flink:1", "flink:2", true}} {
		u := Upgrade{Subject: "FlinkDeployment ns/a", Prior: flinkdeploy.Desired{Spec: spec(c.prior), UpgradeMode: "last-state"},
			Planned: flinkdeploy.Desired{Spec: spec(c.image), UpgradeMode: "last-state"}, Parallelism: 1, PreviousParallelism: 1}
		got := false
		for _, f := range u.Findings("s3://b/chk-1", meta) {
			got = got || f.Summary == "Operators without a uid"
		}
		if got != c.want {
			t.Errorf("%s: warning %v, want %v", c.name, got, c.want)
		}
	}
}

func TestPath_findings(t *testing.T) {
	meta := fixture(t, checkpointFixture)
	base := Path{Subject: "FlinkDeployment ns/a", Target: "s3://b/sp", What: "job.initial_savepoint_path", Parallelism: 200,
		FlinkVersion: "2.2.1", Config: map[string]string{"state.backend.type": "rocksdb"}}
	if d := base.Desired(); d.Backend != "rocksdb" || !d.FromPath || d.Parallelism != 200 || d.PreviousParallelism != 0 {
		t.Errorf("Desired() = %+v", d)
	}
	cases := []struct {
		name            string
		create, carried bool
		path            []string
		detail          string
	}{
		{"redeploy", false, false, []string{"job", "initial_savepoint_path"}, "FlinkDeployment ns/a was not changed, and its job keeps running: it would restore s3://b/sp (job.initial_savepoint_path), and "},
		{"create", true, false, []string{"job", "initial_savepoint_path"}, "FlinkDeployment ns/a was not created: it would restore"},
		{"carried", true, true, nil, "The final savepoint's FlinkStateSnapshot is kept: fix the configuration and apply again"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := base
			p.Create, p.Carried = c.create, c.carried
			fs := p.Findings(meta)
			if len(fs) == 0 {
				t.Fatal("no findings")
			}
			for _, f := range fs {
				if f.Severity != flinkconf.Error || f.Summary != refused || !reflect.DeepEqual(f.Path, c.path) {
					t.Errorf("finding %+v: want a refusal on %v", f, c.path)
				}
				mustContain(t, f.Detail, c.detail)
			}
		})
	}
	s := base.Skipped("access denied")
	mustContain(t, s.Detail, "could not read the _metadata of s3://b/sp (job.initial_savepoint_path)", ": access denied.")
}

func TestHandover_desired(t *testing.T) {
	cases := []struct {
		name, format string
		old          map[string]string
		want         string
	}{
		{"the deployment's own format, CANONICAL by default", "", map[string]string{"state.backend.type": "rocksdb"}, "CANONICAL savepoint"},
		{"the deployment's own NATIVE", "", map[string]string{"state.backend.type": "rocksdb", flinkconf.SavepointFormatKey: " native "}, "NATIVE savepoint"},
		{"asked for", "NATIVE", map[string]string{"state.backend.type": "rocksdb"}, "NATIVE savepoint"},
		{"ForSt takes NATIVE only", "", map[string]string{"state.backend.type": "forst"}, "NATIVE savepoint"},
	}
	for _, c := range cases {
		h := Handover{PriorConfig: c.old, PlannedConfig: map[string]string{"state.backend": "hashmap"}, Parallelism: 2, FlinkVersion: "2.2.1",
			Format: c.format}
		d := h.Desired()
		if d.TakenAs != c.want || d.Backend != "hashmap" || d.PreviousBackend != c.old["state.backend.type"] || !d.FromPath {
			t.Errorf("%s: Desired() = %+v, want TakenAs %q", c.name, d, c.want)
		}
	}
}

func TestHandover_words(t *testing.T) {
	h := Handover{Subject: "FlinkDeployment ns/a is replaced", How: "its job would be stopped", Skipped: "the create checks the savepoint itself",
		PriorConfig: map[string]string{}, PlannedConfig: map[string]string{}, Parallelism: 200, FlinkVersion: "2.2.1"}
	s := h.SkippedWarning("no answer")
	if s.Severity != flinkconf.Warning || !strings.HasSuffix(s.Detail, ": no answer. The create checks the savepoint itself.") {
		t.Errorf("SkippedWarning = %+v", s)
	}
	fs := h.Findings("s3://b/chk-2", fixture(t, checkpointFixture))
	if len(fs) == 0 {
		t.Fatal("no findings for parallelism 200")
	}
	mustContain(t, fs[0].Detail, "FlinkDeployment ns/a is replaced: its job would be stopped. Read from s3://b/chk-2, the newest checkpoint",
		"Nothing was changed; the old job keeps running.")
	if capitalize("") != "" || capitalize("abc") != "Abc" {
		t.Error("capitalize")
	}
}

func TestCrossingNotice(t *testing.T) {
	cases := []struct {
		from, to string
		keeps    bool
		want     bool
	}{
		{"1.20.1", "2.2.1", true, true},
		{"1.20.1", "2.2.1", false, false},
		{"2.1.1", "2.2.1", true, false},
		{"1.19.1", "1.20.1", true, false},
	}
	for _, c := range cases {
		fs := CrossingNotice(c.from, c.to, c.keeps)
		f, ok := flinkconf.Finding{}, len(fs) == 1
		if ok {
			f = fs[0]
		}
		if len(fs) > 1 || ok != c.want || (ok && (f.Path[0] != "flink_version" || !strings.HasPrefix(f.Detail, "flink_version moves from "+c.from+" to "+c.to))) {
			t.Errorf("%+v: %v %+v", c, ok, f)
		}
	}
}

// The upgrade pre-flight runs on an upgrade of a running job whose state
// the operator restores (flinkdeploy.Restores with no path).
func TestUpgrade_applies(t *testing.T) {
	spec := func(image string) *flinkdeploy.Spec {
		return &flinkdeploy.Spec{Image: image, Job: &flinkdeploy.Job{JarURI: "local:///a.jar"}}
	}
	running := func(mode, image string) flinkdeploy.Desired {
		return flinkdeploy.Desired{HasJob: true, UpgradeMode: mode, Spec: spec(image)}
	}
	suspended := running("last-state", "flink:1")
	suspended.JobState = flinkdeploy.JobSuspended
	redeploy := running("last-state", "flink:1")
	redeploy.RestorePath = "s3://b/sp"
	cases := []struct {
		name           string
		prior, planned flinkdeploy.Desired
		want           bool
	}{
		{"last-state upgrade", running("last-state", "flink:1"), running("last-state", "flink:2"), true},
		{"savepoint upgrade", running("savepoint", "flink:1"), running("savepoint", "flink:2"), true},
		{"stateless upgrade", running("stateless", "flink:1"), running("stateless", "flink:2"), false},
		{"no change", running("last-state", "flink:1"), running("last-state", "flink:1"), false},
		{"a redeploy restores its path", running("last-state", "flink:1"), redeploy, false},
		{"resume of a suspended job", suspended, running("last-state", "flink:1"), false},
		{"session cluster", flinkdeploy.Desired{}, flinkdeploy.Desired{}, false},
	}
	for _, c := range cases {
		if got := (Upgrade{Prior: c.prior, Planned: c.planned}).Applies(); got != c.want {
			t.Errorf("%s: Applies() = %v, want %v", c.name, got, c.want)
		}
	}
}
