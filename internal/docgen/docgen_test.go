package docgen

import (
	"fmt"
	"strings"
	"testing"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
)

// The committed templates hold what the code generates: a change to a rule
// or a version list without go generate (make docs) fails here, and in
// make docscheck.
func TestTemplatesUpToDate(t *testing.T) {
	for _, f := range Files() {
		before, after, err := Render("../..", f)
		if err != nil {
			t.Fatal(err)
		}
		if before != after {
			t.Errorf("%s is stale: run make docs and commit it", f)
		}
	}
}

func TestReplace(t *testing.T) {
	in := "a\n<!-- generated:x (note) -->\nold\n<!-- /generated:x -->\nb\n"
	got, err := Replace(in, "x", "new")
	if err != nil {
		t.Fatal(err)
	}
	if want := "a\n<!-- generated:x (note) -->\nnew\n<!-- /generated:x -->\nb\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := Replace("no markers", "x", "new"); err == nil {
		t.Error("missing markers not reported")
	}
}

// Every accepted version is listed, and the verdicts come from flinkconf.
func TestFlinkVersions(t *testing.T) {
	s, err := FlinkVersions()
	if err != nil {
		t.Fatal(err)
	}
	for minor, patches := range flinkconf.ReleasedVersions {
		for _, p := range patches {
			if v := fmt.Sprintf("`%s.%d`", minor, p); !strings.Contains(s, v) {
				t.Errorf("%s missing from %q", v, s)
			}
		}
	}
	if !strings.Contains(s, "older than Flink 1.20") {
		t.Errorf("the older-minor verdict is not flinkconf's: %q", s)
	}
}
