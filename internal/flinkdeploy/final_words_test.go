package flinkdeploy

import (
	"reflect"
	"strings"
	"testing"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
)

// The state directories are named by their paths, and by what they are
// while unset.
func TestFinalDirsOf(t *testing.T) {
	set := FinalDirsOf(flinkconf.State{SavepointDir: "s3://b/sp", CheckpointDir: "s3://b/cp", HADir: "s3://b/ha"})
	if want := (FinalDirs{"s3://b/sp", "s3://b/cp", "s3://b/ha"}); set != want {
		t.Errorf("set: %+v, want %+v", set, want)
	}
	unset := FinalDirsOf(flinkconf.State{})
	if want := (FinalDirs{"the deployment's savepoint directory", "the checkpoint directory", "the HA directory"}); unset != want {
		t.Errorf("unset: %+v, want %+v", unset, want)
	}
}

// A refusal is an error on job.initial_savepoint_path; a warning names no
// attribute.
func TestFinding_notice(t *testing.T) {
	refused := Finding{Summary: "s", Detail: "d", Refused: true}.Notice()
	if want := (flinkconf.Finding{Severity: flinkconf.Error, Path: []string{"job", "initial_savepoint_path"}, Summary: "s", Detail: "d"}); !reflect.DeepEqual(refused, want) {
		t.Errorf("refused: %+v, want %+v", refused, want)
	}
	warned := Finding{Summary: "s", Detail: "d"}.Notice()
	if want := (flinkconf.Finding{Severity: flinkconf.Warning, Summary: "s", Detail: "d"}); !reflect.DeepEqual(warned, want) {
		t.Errorf("warning: %+v, want %+v", warned, want)
	}
}

// The upgrade's warning is UpgradeNotice on the specs' UpgradeChanges, and
// none when nothing restarts or a spec is unknown.
func TestUpgradeWarnings(t *testing.T) {
	spec := func(image string) func(*Desired) { return func(d *Desired) { d.Spec = &Spec{Image: image} } }
	prior, planned := job("savepoint").with(spec("flink:2.2.1")), job("savepoint").with(spec("flink:2.2.1-b"))
	fs := UpgradeWarnings(prior, planned)
	if len(fs) != 1 || fs[0].Severity != flinkconf.Warning || len(fs[0].Path) != 0 || fs[0].Summary != "The operator will restart the job" ||
		!strings.Contains(fs[0].Detail, "stops it with a savepoint") {
		t.Fatalf("image change: %+v", fs)
	}
	if fs := UpgradeWarnings(prior, prior); fs != nil {
		t.Errorf("no change: %+v", fs)
	}
	if fs := UpgradeWarnings(prior, job("savepoint")); fs != nil {
		t.Errorf("planned spec unknown: %+v", fs)
	}
}
