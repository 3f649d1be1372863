package flinkdeploy

import (
	"strings"
	"testing"
)

func finalFacts() FinalFacts {
	return FinalFacts{Namespace: "ns", Name: "d", JobState: "RUNNING", JobStateKnown: true, Lifecycle: "STABLE",
		SavepointDir: "s3://b/sp", CheckpointDir: "s3://b/cp", FinalSavepoint: true}
}

var statefulJob = Desired{HasJob: true, UpgradeMode: "savepoint", FinalSavepoint: true}

// A destroy's plan says what state survives, one finding per DestroyKind.
func TestPlanDestroy(t *testing.T) {
	drained := statefulJob
	drained.DrainOnDestroy = true
	cancels := statefulJob
	cancels.FinalSavepoint = false
	cases := []struct {
		name     string
		prior    Desired
		edit     func(*FinalFacts)
		summary  string
		contains []string
	}{
		{"stops", statefulJob, nil, "Destroy stops the job with a final savepoint",
			[]string{"savepoint into s3://b/sp, not drained (drain_on_destroy = false)", "FlinkStateSnapshot d-final-*", "stay under s3://b/cp"}},
		{"stops drained", drained, nil, "Destroy stops the job with a final savepoint", []string{"drained first (drain_on_destroy"}},
		{"stops again", statefulJob, func(f *FinalFacts) { f.Failed = "timed out" }, "Destroy takes a final savepoint, which failed last time",
			[]string{"taken into s3://b/sp. The last destroy's did not complete (timed out)"}},
		{"cannot stop", statefulJob, func(f *FinalFacts) { f.JobState, f.Lifecycle, f.Failed = "FAILED", "", "x" },
			"No final savepoint is possible now",
			[]string{"ns/d is FAILED (lifecycle (none)), not running", "The last destroy's final savepoint did not complete (x).", "stay under s3://b/cp"}},
		{"cancels", cancels, nil, "Destroy without a final savepoint",
			[]string{"(ApplicationReconciler.cleanupInternal). Only the checkpoints retained under s3://b/cp remain."}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := finalFacts()
			if c.edit != nil {
				c.edit(&f)
			}
			got, ok := PlanDestroy(c.prior, f)
			if !ok || got.Summary != c.summary || got.Refused {
				t.Fatalf("got %+v, %v; want summary %q", got, ok, c.summary)
			}
			for _, s := range c.contains {
				if !strings.Contains(got.Detail, s) {
					t.Errorf("%q lacks %q", got.Detail, s)
				}
			}
		})
	}
	for _, prior := range []Desired{{}, {HasJob: true, UpgradeMode: "stateless", FinalSavepoint: true}} {
		if got, ok := PlanDestroy(prior, finalFacts()); ok {
			t.Errorf("%+v: nothing to keep, got %+v", prior, got)
		}
	}
}

// A replacement's plan says what the new job starts from; rolling the
// state back to the old pinned path is refused; a move to another
// namespace says where the savepoint's FlinkStateSnapshot stays.
func TestPlanReplace(t *testing.T) {
	pinnedPrior := statefulJob
	pinnedPrior.RestorePath = "s3://b/old"
	stateless := Desired{HasJob: true, UpgradeMode: "stateless", FinalSavepoint: true}
	cases := []struct {
		name           string
		prior, planned Desired
		ns             string
		unknown        bool
		edit           func(*FinalFacts)
		kind           ReplacementKind
		summary        string
		refused        bool
		contains       []string
	}{
		{"handover", statefulJob, statefulJob, "ns", false, nil, ReplaceHandover, "Replacement carries the job's state across", false,
			[]string{"savepoint into s3://b/sp (never drained)", "and nothing is deleted."}},
		{"handover moved", statefulJob, statefulJob, "other", false, nil, ReplaceHandover, "Replacement carries the job's state across", false,
			[]string{"Its FlinkStateSnapshot stays in ns, where the create in other finds it"}},
		{"rolls back", pinnedPrior, pinnedPrior, "ns", false, nil, ReplaceRollsBack, "Replacement would roll the job's state back", true,
			[]string{"still names s3://b/old", "To restore s3://b/old on purpose"}},
		{"pinned, unknown path", pinnedPrior, pinnedPrior, "ns", true, nil, ReplacePinned, "Replacement starts from job.initial_savepoint_path", false,
			[]string{"a final savepoint is taken first (kept)"}},
		{"without state", stateless, stateless, "ns", false, func(f *FinalFacts) { f.FinalSavepoint = false }, ReplaceWithoutState,
			"Replacement starts without state", false, []string{`(upgrade_mode "stateless", final_savepoint false)`, "stay under s3://b/cp."}},
		{"nothing to carry", statefulJob, statefulJob, "other", false, func(f *FinalFacts) { f.JobState, f.Lifecycle = "FAILED", "" },
			ReplaceNothingToCarry, "Replacement may start without state", false,
			[]string{"its job is FAILED (lifecycle (none)), not running", "Its FlinkStateSnapshot stays in ns"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := finalFacts()
			if c.edit != nil {
				c.edit(&f)
			}
			kind, got, ok := PlanReplace(c.prior, c.planned, c.ns, c.unknown, f)
			if kind != c.kind || !ok || got.Summary != c.summary || got.Refused != c.refused {
				t.Fatalf("got %v %+v %v; want %v %q refused %v", kind, got, ok, c.kind, c.summary, c.refused)
			}
			for _, s := range c.contains {
				if !strings.Contains(got.Detail, s) {
					t.Errorf("%q lacks %q", got.Detail, s)
				}
			}
			if c.ns == "ns" && strings.Contains(got.Detail, "FlinkStateSnapshot stays in") {
				t.Errorf("same namespace, yet %q", got.Detail)
			}
		})
	}
	if kind, got, ok := PlanReplace(Desired{}, Desired{}, "ns", false, finalFacts()); ok || kind != ReplaceNoJob || kind.Carries() {
		t.Errorf("session cluster: %v %+v %v", kind, got, ok)
	}
}
