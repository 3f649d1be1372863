package kube

import (
	"strings"
	"testing"
)

// Each end of a wait gets its own words; only a create whose job never ran
// (or was never deployed) is deleted again.
func TestWaitReportOf(t *testing.T) {
	f := WaitFacts{Err: "boom", Gone: "it was deleted again", Namespace: "ns", Name: "d", Target: "running"}
	cases := []struct {
		name              string
		o                 WaitOutcome
		create, restoring bool
		want              Report
		deleteAgain       bool
	}{
		{"never ran", WaitOutcome{Kind: WaitNeverRan}, true, false, Report{Verb: "Creating",
			Detail: "boom. Its JobManager never started, so no job ran and no state of it exists, and it was deleted again."}, true},
		{"never deployed", WaitOutcome{Kind: WaitNeverDeployed}, true, true, Report{Verb: "Creating",
			Detail: "boom. Nothing was deployed, and it was deleted again."}, true},
		{"rejected create", WaitOutcome{Kind: WaitRejected}, true, false, Report{Verb: "Creating", Detail: "boom"}, false},
		{"restore failed", WaitOutcome{Kind: WaitNotReady}, true, true, Report{Verb: "Restoring",
			Detail: "the job did not start from its restore path: boom"}, false},
		{"restore timed out", WaitOutcome{Kind: WaitNotReady, TimedOut: true}, true, true, Report{Warning: "FlinkDeployment created but not ready yet",
			Detail: "boom\n\nThe FlinkDeployment ns/d is kept (not replaced): the next plan shows it as an update, and that apply waits for \"running\" again."}, false},
		{"create not ready", WaitOutcome{Kind: WaitNotReady}, true, false, Report{Warning: "FlinkDeployment created but not ready yet",
			Detail: "boom\n\nThe FlinkDeployment ns/d is kept (not replaced): the next plan shows it as an update, and that apply waits for \"running\" again."}, false},
		{"update upgrade failed", WaitOutcome{Kind: WaitUpgradeFailed}, false, false, Report{Verb: "Upgrading", Detail: "boom"}, false},
		{"update upgradeable", WaitOutcome{Kind: WaitUpgradeable}, false, false, Report{Verb: "Waiting for", Detail: "FlinkDeployment not ready: boom"}, false},
		{"update rejected", WaitOutcome{Kind: WaitRejected}, false, false, Report{Verb: "Waiting for", Detail: "FlinkDeployment not ready: boom"}, false},
		{"update never ran reads as not ready", WaitOutcome{Kind: WaitNeverRan}, false, false, Report{Verb: "Waiting for",
			Detail: "FlinkDeployment not ready: boom"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := WaitReportOf(c.o, c.create, c.restoring)
			got := rep.Words(f)
			if got.Warning != c.want.Warning || got.Verb != c.want.Verb || got.Detail != c.want.Detail {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
			if rep.DeleteAgain != c.deleteAgain {
				t.Errorf("DeleteAgain = %v, want %v", rep.DeleteAgain, c.deleteAgain)
			}
			if (got.Warning == "") == (got.Advice == "") {
				t.Errorf("an error needs advice and a warning none: %+v", got)
			}
		})
	}
}

// An upgrade the operator will not make by itself names the two changes
// it makes without an upgradeable state.
func TestWaitReportOf_upgradeAdvice(t *testing.T) {
	for _, k := range []WaitKind{WaitUpgradeFailed, WaitUpgradeable} {
		adv := WaitReportOf(WaitOutcome{Kind: k}, false, false).Words(WaitFacts{}).Advice
		if !strings.Contains(adv, "job.initial_savepoint_path") || !strings.Contains(adv, `job.upgrade_mode = "stateless"`) {
			t.Errorf("%v: advice %q lacks the ways out", k, adv)
		}
	}
}
