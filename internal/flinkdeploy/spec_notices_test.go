package flinkdeploy

import (
	"strings"
	"testing"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
)

func TestIdentityNotice(t *testing.T) {
	cases := []struct {
		name      string
		had, want string
		create    bool
		summary   string // "": none
		inDetail  string
	}{
		{"new without identity", "", "", true, "No S3 credentials class", "Hadoop S3A's default chain"},
		{"new with identity", "", "irsa", true, "", ""},
		{"unchanged", "irsa", "irsa", false, "", ""},
		{"unchanged unset", "", "", false, "", ""},
		{"set", "", "pod_identity", false, "Setting identity restarts the job", "= " + flinkconf.PodIdentityCredentialsProvider + " into the FlinkDeployment"},
		{"removed", "irsa", "", false, "Removing identity restarts the job", "(" + flinkconf.IRSACredentialsProvider + ")"},
		{"changed", "irsa", "pod_identity", false, "Changing identity restarts the job",
			"from " + flinkconf.IRSACredentialsProvider + " to " + flinkconf.PodIdentityCredentialsProvider},
	}
	for _, c := range cases {
		fs := IdentityNotice(c.had, c.want, c.create)
		f, ok := firstFinding(fs), len(fs) == 1
		if len(fs) > 1 || ok != (c.summary != "") || f.Summary != c.summary || !strings.Contains(f.Detail, c.inDetail) {
			t.Errorf("%s: %v %+v, want %q with %q", c.name, ok, f, c.summary, c.inDetail)
		}
		if ok && (f.Severity != flinkconf.Warning || f.Path[0] != "identity") {
			t.Errorf("%s: %+v is not a warning on identity", c.name, f)
		}
	}
	if f := UnusedIRSARole("ns/sa"); f.Summary != "IRSA role not used" || !strings.HasPrefix(f.Detail, "The ServiceAccount ns/sa gets an IRSA role") {
		t.Errorf("%+v", f)
	}
}

func TestSpecRefusals(t *testing.T) {
	cases := []struct {
		name    string
		f       flinkconf.Finding
		ok      bool
		refused bool
		path    string
	}{}
	add := func(name string, f flinkconf.Finding, ok, want bool, path string) {
		cases = append(cases, struct {
			name    string
			f       flinkconf.Finding
			ok      bool
			refused bool
			path    string
		}{name, f, ok, want, path})
	}
	f, ok := firstOf(StandbyWithoutHA(2, false))
	add("standby without HA", f, ok, true, "job_manager.replicas")
	f, ok = firstOf(StandbyWithoutHA(2, true))
	add("standby with HA", f, ok, false, "")
	f, ok = firstOf(StandbyWithoutHA(1, false))
	add("one JobManager", f, ok, false, "")
	f, ok = firstOf(NoJobToCheckpoint(WaitCheckpoint, false))
	add("checkpoint of a session cluster", f, ok, true, "wait_for")
	f, ok = firstOf(NoJobToCheckpoint(WaitCheckpoint, true))
	add("checkpoint of a job", f, ok, false, "")
	f, ok = firstOf(NoJobToCheckpoint("running", false))
	add("session cluster running", f, ok, false, "")
	f, ok = firstOf(SavepointFormatRefusal(flinkconf.BackendForSt, "CANONICAL"))
	add("ForSt canonical", f, ok, true, "savepoint_before_upgrade.format_type")
	f, ok = firstOf(SavepointFormatRefusal(flinkconf.BackendForSt, "NATIVE"))
	add("ForSt native", f, ok, false, "")
	f, ok = firstOf(SavepointFormatRefusal("rocksdb", "CANONICAL"))
	add("RocksDB canonical", f, ok, false, "")
	for _, c := range cases {
		if c.ok != c.refused || (c.ok && (c.f.Severity != flinkconf.Error || strings.Join(c.f.Path, ".") != c.path || c.f.Detail == "")) {
			t.Errorf("%s: %v %+v, want refused %v on %s", c.name, c.ok, c.f, c.refused, c.path)
		}
	}
}

// firstOf is fs's only finding, and whether there is one.
func firstOf(fs []flinkconf.Finding) (flinkconf.Finding, bool) {
	return firstFinding(fs), len(fs) == 1
}
