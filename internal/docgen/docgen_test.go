package docgen

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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
	s, err := FlinkVersions("../..")
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

// Every add(Error|Warning, "summary", ...) in the check sources is listed:
// a second, textual reading of the same files finds no summary the
// extraction missed.
func TestChecksMissNothing(t *testing.T) {
	cs, err := Checks("../..")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, c := range cs {
		got[c.Summary] = true
		if c.Resource == "" {
			t.Errorf("%q has no resource", c.Summary)
		}
	}
	re := regexp.MustCompile(`(?:add\((?:Error|Warning),\s*|Summary:\s*|AddAttribute(?:Error|Warning)\([^,]+,\s*)"([^"]+)"\s*,`)
	n := 0
	for _, f := range CheckSources {
		b, err := os.ReadFile(filepath.Join("../..", f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			n++
			if !got[m[1]] {
				t.Errorf("%s: the check %q is not in the generated list", f, m[1])
			}
		}
	}
	if n < 30 {
		t.Errorf("only %d checks found in the sources: the textual reading is broken", n)
	}
	for _, want := range []string{"Image and Flink version disagree", "Job parallelism required", "IRSA and Pod Identity on the same ServiceAccount",
		"State directories must not be nested", "Key the operator forbids"} {
		if !got[want] {
			t.Errorf("%q missing", want)
		}
	}
}

// A check in a provider function docgen does not know fails generation.
func TestChecksUnassignedFunctionFails(t *testing.T) {
	dir := t.TempDir()
	src := "package provider\nfunc newCheck(d diags) { d.AddAttributeError(path.Root(\"x\"), \"New check\", \"why\") }\n"
	if err := os.MkdirAll(filepath.Join(dir, "internal/provider"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range CheckSources {
		body := "package flinkconf\n"
		if strings.HasPrefix(f, "internal/provider/") {
			body = src
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Checks(dir); err == nil || !strings.Contains(err.Error(), "newCheck") {
		t.Errorf("got %v, want an error naming newCheck", err)
	}
}

// The defaults are read from the code, and agree with what a few
// resources are known to use.
func TestTimeouts(t *testing.T) {
	ts, err := Timeouts("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		resource, op, want string
	}{
		{"flinkstate_deployment", "create", "10m"},
		{"flinkstate_bucket", "read", "30s"},
		{"flinkstate_snapshot", "delete", "5m"},
		{"flinkstate_iam_role", "update", "2m"},
	} {
		if got := short(ts[c.resource][c.op]); got != c.want {
			t.Errorf("%s %s: got %s, want %s", c.resource, c.op, got, c.want)
		}
	}
	if len(ts) != 7 {
		t.Errorf("timeouts of %d resources, want 7 (all but flinkstate_service_account): %v", len(ts), ts)
	}
}

// A check worded in a domain package (flinkdeploy, preflight) by a
// function docgen does not know fails generation too: the words moved out
// of the provider are still listed.
func TestChecksUnassignedDomainFunctionFails(t *testing.T) {
	dir := t.TempDir()
	for _, f := range CheckSources {
		body := "package x\n"
		if f == "internal/flinkdeploy/spec_notices.go" {
			body = "package flinkdeploy\nfunc NewNotice() []flinkconf.Finding { return one(warning([]string{\"x\"}, \"New notice\", \"why\")) }\n"
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Checks(dir); err == nil || !strings.Contains(err.Error(), "NewNotice") {
		t.Errorf("got %v, want an error naming NewNotice", err)
	}
}

// The spec checks whose words moved to flinkdeploy and preflight are
// listed for the resources whose plan makes them.
func TestChecksFromTheDomain(t *testing.T) {
	cs, err := Checks("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct{ resource, path, summary string }{
		{"flinkstate_deployment", "identity", "No S3 credentials class"},
		{"flinkstate_blue_green_deployment", "identity", "Changing identity restarts the job"},
		{"flinkstate_deployment", "job_manager.replicas", "Standby JobManagers need high availability"},
		{"flinkstate_deployment", "wait_for", "Nothing to checkpoint"},
		{"flinkstate_blue_green_deployment", "flink_version", "Flink 1.x state restored by Flink 2"},
	} {
		found := false
		for _, c := range cs {
			found = found || (c.Resource == want.resource && c.Path == want.path && c.Summary == want.summary)
		}
		if !found {
			t.Errorf("%s: %s %q is not listed", want.resource, want.path, want.summary)
		}
	}
}
