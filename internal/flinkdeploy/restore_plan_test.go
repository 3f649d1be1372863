package flinkdeploy

import (
	"reflect"
	"strings"
	"testing"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
)

func TestCodeChanges(t *testing.T) {
	spec := func(image, jar string, fields map[string]any) *Spec {
		return &Spec{Image: image, Job: &Job{JarURI: jar, Fields: fields}}
	}
	base := spec("flink:1", "local:///a.jar", map[string]any{"entryClass": "a.Main", "args": []string{"x"}, "parallelism": int64(2)})
	cases := []struct {
		name    string
		planned *Spec
		want    bool
	}{
		{"same code", spec("flink:1", "local:///a.jar", map[string]any{"entryClass": "a.Main", "args": []string{"x"}, "parallelism": int64(4)}), false},
		{"image", spec("flink:2", "local:///a.jar", base.Job.Fields), true},
		{"jar", spec("flink:1", "local:///b.jar", base.Job.Fields), true},
		{"entry class", spec("flink:1", "local:///a.jar", map[string]any{"entryClass": "b.Main", "args": []string{"x"}}), true},
		{"args", spec("flink:1", "local:///a.jar", map[string]any{"entryClass": "a.Main", "args": []string{"y"}}), true},
		{"args removed", spec("flink:1", "local:///a.jar", map[string]any{"entryClass": "a.Main"}), true},
		{"job removed", &Spec{Image: "flink:1"}, true},
		{"unknown spec", nil, true},
	}
	for _, c := range cases {
		if got := CodeChanges(Desired{Spec: base}, Desired{Spec: c.planned}); got != c.want {
			t.Errorf("%s: CodeChanges = %v, want %v", c.name, got, c.want)
		}
	}
	if CodeChanges(Desired{Spec: &Spec{Image: "a"}}, Desired{Spec: &Spec{Image: "a"}}) {
		t.Error("two session clusters of one image: no code change")
	}
}

func TestRestoreOptions_notices(t *testing.T) {
	cases := []struct {
		name string
		o    RestoreOptions
		want []string // summaries
		at   [][]string
	}{
		{"nothing", RestoreOptions{PathSet: true}, nil, nil},
		{"allow non-restored state", RestoreOptions{AllowNonRestoredState: true}, []string{"State may be dropped on restore"},
			[][]string{{"job", "allow_non_restored_state"}}},
		{"CLAIM without a path: nothing restored", RestoreOptions{ClaimMode: flinkconf.ClaimModeClaim}, nil, nil},
		{"CLAIM of a path", RestoreOptions{ClaimMode: flinkconf.ClaimModeClaim, PathSet: true}, []string{"Flink may delete the restored snapshot"},
			[][]string{{"job", "claim_mode"}}},
		{"NO_CLAIM of a path", RestoreOptions{ClaimMode: "NO_CLAIM", PathSet: true}, nil, nil},
		{"both", RestoreOptions{AllowNonRestoredState: true, ClaimMode: flinkconf.ClaimModeClaim, PathSet: true},
			[]string{"State may be dropped on restore", "Flink may delete the restored snapshot"},
			[][]string{{"job", "allow_non_restored_state"}, {"job", "claim_mode"}}},
	}
	for _, c := range cases {
		var got []string
		var at [][]string
		for _, f := range c.o.Notices() {
			if f.Severity != flinkconf.Warning {
				t.Errorf("%s: %+v is not a warning", c.name, f)
			}
			got, at = append(got, f.Summary), append(at, f.Path)
		}
		if !reflect.DeepEqual(got, c.want) || !reflect.DeepEqual(at, c.at) {
			t.Errorf("%s: notices %v on %v, want %v on %v", c.name, got, at, c.want, c.at)
		}
	}
}

func TestRedeployNotice(t *testing.T) {
	f := RedeployNotice(3, "s3://b/sp-2")
	if f.Severity != flinkconf.Warning || f.Summary != "The job will be redeployed from a snapshot" ||
		!reflect.DeepEqual(f.Path, []string{"job", "initial_savepoint_path"}) {
		t.Errorf("%+v", f)
	}
	for _, want := range []string{"savepoint_redeploy_nonce to 3", "redeploys the job from s3://b/sp-2", "cannot roll this back"} {
		if !strings.Contains(f.Detail, want) {
			t.Errorf("detail %q lacks %q", f.Detail, want)
		}
	}
}

func TestRefusalFindings(t *testing.T) {
	prior, planned := job("savepoint"), job("savepoint")
	planned.Mode = "standalone"
	fs := RefusalFindings(prior, planned)
	if len(fs) != 1 || fs[0].Severity != flinkconf.Error || !reflect.DeepEqual(fs[0].Path, []string{"mode"}) ||
		fs[0].Summary != "Deployment mode cannot change" {
		t.Errorf("%+v", fs)
	}
	if fs := RefusalFindings(prior, prior); len(fs) != 0 {
		t.Errorf("no change: %+v", fs)
	}
}

func TestNotRunningNotice(t *testing.T) {
	first := func(d *Desired) { d.SavepointFirst = true }
	spec := func(image string) func(*Desired) {
		return func(d *Desired) { d.Spec = &Spec{Image: image, Job: &Job{JarURI: "local:///a.jar"}} }
	}
	prior := job("last-state").with(spec("flink:1"))
	cases := []struct {
		name         string
		planned      Desired
		prior        Desired
		observed     string
		want         bool
		wantInDetail string
	}{
		{"failed job, new image", job("last-state").with(first, spec("flink:2")), prior, "FAILED", true, "is FAILED, not running"},
		{"running", job("last-state").with(first, spec("flink:2")), prior, "RUNNING", false, ""},
		{"not read yet", job("last-state").with(first, spec("flink:2")), prior, "", false, ""},
		{"no savepoint_before_upgrade", job("last-state").with(spec("flink:2")), prior, "FAILED", false, ""},
		{"suspended", job("last-state").with(first, spec("flink:2")), prior.with(func(d *Desired) { d.JobState = JobSuspended }), "FAILED", false, ""},
		{"no upgrade", job("last-state").with(first, spec("flink:1")), prior, "FAILED", false, ""},
		{"spec unknown", job("last-state").with(first), prior, "FAILED", false, ""},
	}
	for _, c := range cases {
		fs := NotRunningNotice("FlinkDeployment ns/a", c.prior, c.planned, c.observed, "")
		ok := len(fs) == 1
		if ok != c.want || len(fs) > 1 {
			t.Errorf("%s: notice %v, want %v", c.name, ok, c.want)
			continue
		}
		if f := firstFinding(fs); ok && (!strings.Contains(f.Detail, "The job of FlinkDeployment ns/a "+c.wantInDetail) || f.Summary != "No savepoint can be taken before this change" ||
			!reflect.DeepEqual(f.Path, []string{"savepoint_before_upgrade"})) {
			t.Errorf("%s: %+v", c.name, f)
		}
	}
}

// firstFinding is fs's first finding (the zero one for none).
func firstFinding(fs []flinkconf.Finding) flinkconf.Finding {
	if len(fs) == 0 {
		return flinkconf.Finding{}
	}
	return fs[0]
}
