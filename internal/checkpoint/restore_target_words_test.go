package checkpoint

import (
	"reflect"
	"strings"
	"testing"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
)

// The advice of each kind of refused job.initial_savepoint_path, and how
// its detail ends.
func TestRestoreProblem_pathRefusal(t *testing.T) {
	cases := []struct {
		kind   RestoreProblemKind
		detail string
		want   string // the end of the finding's detail
	}{
		{RestoreUnreadable, "bad bytes", "bad bytes. Point job.initial_savepoint_path at another checkpoint or savepoint"},
		{RestoreNoMetadata, "no _metadata", "no _metadata. Point at one that has it"},
		{RestoreUnchecked, "S3 said: timeout.", "S3 said: timeout."},
		{RestoreElsewhere, "files in bucket other:", "files in bucket other:\n\nPoint job.initial_savepoint_path at a savepoint (canonical or native"},
		{RestoreIncomplete, "missing: a, b", "missing: a, b\n\nPoint job.initial_savepoint_path at a complete snapshot"},
	}
	for _, c := range cases {
		f := (&RestoreProblem{Kind: c.kind, Summary: "S", Detail: c.detail}).PathRefusal("FlinkDeployment ns/a")
		if f.Severity != flinkconf.Error || f.Summary != "S" || !reflect.DeepEqual(f.Path, []string{"job", "initial_savepoint_path"}) {
			t.Errorf("kind %d: %+v", c.kind, f)
		}
		if !strings.HasPrefix(f.Detail, "FlinkDeployment ns/a was not changed: "+c.want) {
			t.Errorf("kind %d: detail %q, want it to start with %q", c.kind, f.Detail, c.want)
		}
	}
}

func TestInvalidRestorePath(t *testing.T) {
	f := InvalidRestorePath("FlinkDeployment ns/a", "/tmp/sp", "is not an s3:// URI")
	if f.Severity != flinkconf.Error || f.Summary != "Invalid restore path" ||
		f.Detail != `FlinkDeployment ns/a was not changed: job.initial_savepoint_path "/tmp/sp" is not an s3:// URI.` {
		t.Errorf("%+v", f)
	}
}

func TestRestoreProblem_carriedRefusal(t *testing.T) {
	cause, todo := (&RestoreProblem{Kind: RestoreIncomplete, Summary: "Restore target is incomplete", Detail: "missing: a"}).CarriedRefusal()
	if cause != "Restore target is incomplete: the final savepoint of the deployment it replaces cannot be restored: missing: a" ||
		!strings.HasPrefix(todo, "Nothing was created. Set job.initial_savepoint_path") {
		t.Errorf("%q, %q", cause, todo)
	}
	if _, todo := (&RestoreProblem{Kind: RestoreUnchecked}).CarriedRefusal(); !strings.HasPrefix(todo, "Nothing was created. Apply again once S3 answers") {
		t.Errorf("unchecked: %q", todo)
	}
}
