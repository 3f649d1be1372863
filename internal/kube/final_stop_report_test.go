package kube

import (
	"errors"
	"strings"
	"testing"
)

// Each end of a final stop is worded once: a warning when the destroy goes
// on, a refusal ("Destroying", with what to do) when nothing is deleted,
// nothing when there is nothing to stop.
func TestFinalStopResult_Report(t *testing.T) {
	q := FinalStopRequest{Namespace: "ns", Name: "d"}
	at := FinalStopPlaces{CheckpointDir: "s3://b/cp", HADir: "s3://b/ha"}
	boom := errors.New("boom")
	cases := []struct {
		name     string
		q        FinalStopRequest
		res      FinalStopResult
		warning  string
		contains []string
	}{
		{"unreadable", q, FinalStopResult{Kind: FinalStopUnreadable, Err: boom}, "",
			[]string{"reading it before its final savepoint: boom", "Nothing was deleted. Apply again once the API server answers."}},
		{"not running", q, FinalStopResult{Kind: FinalStopNotRunning, Before: DeploymentStatus{JobState: "FAILED"}}, "No final savepoint",
			[]string{"The job of FlinkDeployment ns/d is FAILED (lifecycle (none))", "stay under s3://b/cp"}},
		{"carry unlistable", FinalStopRequest{Namespace: "ns", Name: "d", CarryTo: "other/e"}, FinalStopResult{Kind: FinalStopCarryUnlistable, Err: boom}, "",
			[]string{"its replacement other/e is in another namespace", "(kept in ns, with its deployment)", "which failed: boom", "Allow list on flinkstatesnapshots"}},
		{"unrecorded", q, FinalStopResult{Kind: FinalStopUnrecorded, Path: "s3://b/sp/1", Err: boom}, "",
			[]string{"recording its final savepoint s3://b/sp/1 in a FlinkStateSnapshot: boom", "set final_savepoint = false"}},
		{"failed, unread", q, FinalStopResult{Kind: FinalStopFailed, Step: StepStop, Err: boom}, "",
			[]string{"its final savepoint did not complete (" + StepStop + "): boom; its status could not be read again",
				"destroy again once it is fixed", "under s3://b/cp", "(under s3://b/ha and in its ConfigMaps)"}},
		{"failed, job down", q, FinalStopResult{Kind: FinalStopFailed, Step: StepStop, Err: boom, AfterRead: true,
			After: DeploymentStatus{JobState: "RECONCILING", LifecycleState: "DEPLOYED"}}, "",
			[]string{"the operator now reports its job RECONCILING (lifecycle DEPLOYED, JobManager (none))", "bring the JobManager back"}},
		{"taken", q, FinalStopResult{Kind: FinalStopTaken, Path: "s3://b/sp/1", Snapshot: "d-final-1"}, "Final savepoint taken",
			[]string{"FlinkDeployment ns/d: final savepoint s3://b/sp/1 (FlinkStateSnapshot ns/d-final-1). The job was stopped with it: nothing " +
				"was processed after it. It is kept after the destroy"}},
		{"taken, drained, carried", FinalStopRequest{Namespace: "ns", Name: "d", CarryTo: "ns/e"},
			FinalStopResult{Kind: FinalStopTaken, Path: "p", Snapshot: "s", Drained: true}, "Final savepoint taken",
			[]string{"drained (drain_on_destroy", "The replacement ns/e starts from it."}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep, ok := c.res.Report(c.q, at)
			if !ok {
				t.Fatal("no report")
			}
			if rep.Warning != c.warning {
				t.Errorf("warning %q, want %q", rep.Warning, c.warning)
			}
			if c.warning == "" && (rep.Verb != "Destroying" || rep.Advice == "") {
				t.Errorf("a refusal is Destroying with advice: %+v", rep)
			}
			all := rep.Detail + "\n" + rep.Advice
			for _, s := range c.contains {
				if !strings.Contains(all, s) {
					t.Errorf("%q lacks %q", all, s)
				}
			}
		})
	}
	if _, ok := (FinalStopResult{Kind: FinalStopGone}).Report(q, at); ok {
		t.Error("FinalStopGone reported")
	}
}
