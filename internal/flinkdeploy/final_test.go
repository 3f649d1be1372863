package flinkdeploy

import "testing"

func TestFinalSavepointPossible(t *testing.T) {
	for name, c := range map[string]struct {
		jobState  string
		known     bool
		lifecycle string
		want      bool
	}{
		"running":                 {"RUNNING", true, "STABLE", true},
		"suspended":               {"FINISHED", true, "SUSPENDED", true},
		"not read yet":            {"", true, "", true},
		"unknown":                 {"", false, "", true},
		"reconciling":             {"RECONCILING", true, "STABLE", false},
		"failed":                  {"FAILED", true, "FAILED", false},
		"finished, not suspended": {"FINISHED", true, "STABLE", false},
	} {
		if got := FinalSavepointPossible(c.jobState, c.known, c.lifecycle); got != c.want {
			t.Errorf("%s: FinalSavepointPossible = %v, want %v", name, got, c.want)
		}
	}
}

func TestDestroyKeeps(t *testing.T) {
	noFinal := func(d *Desired) { d.FinalSavepoint = false }
	for name, c := range map[string]struct {
		prior                  Desired
		possible, failedBefore bool
		want                   DestroyKind
	}{
		"running stateful job":                {job("savepoint"), true, false, DestroyStops},
		"last-state job":                      {job("last-state"), true, false, DestroyStops},
		"the last final savepoint failed":     {job("savepoint"), true, true, DestroyStopsAgain},
		"job not running":                     {job("savepoint"), false, false, DestroyCannotStop},
		"not running, failed before":          {job("savepoint"), false, true, DestroyCannotStop},
		"final_savepoint off":                 {job("last-state").with(noFinal), true, false, DestroyCancels},
		"final_savepoint off, not running":    {job("savepoint").with(noFinal), false, true, DestroyCancels},
		"stateless job":                       {job("stateless"), true, false, DestroyKeepsNothing},
		"upgrade mode unset, final_savepoint": {job(""), true, false, DestroyKeepsNothing},
		"session cluster":                     {Desired{FinalSavepoint: true}, true, false, DestroyKeepsNothing},
	} {
		if got := DestroyKeeps(c.prior, c.possible, c.failedBefore); got != c.want {
			t.Errorf("%s: DestroyKeeps = %v, want %v", name, got, c.want)
		}
	}
}

func TestReplacement(t *testing.T) {
	pinned := func(p string) func(*Desired) { return func(d *Desired) { d.RestorePath = p } }
	noFinal := func(d *Desired) { d.FinalSavepoint = false }
	for name, c := range map[string]struct {
		prior, planned              Desired
		oldHasState, restoreUnknown bool
		want                        ReplacementKind
	}{
		"handover":                           {job("savepoint"), job("savepoint"), true, false, ReplaceHandover},
		"old job not running":                {job("savepoint"), job("savepoint"), false, false, ReplaceNothingToCarry},
		"final_savepoint off":                {job("savepoint").with(noFinal), job("savepoint"), true, false, ReplaceWithoutState},
		"stateless":                          {job("stateless"), job("stateless"), true, false, ReplaceWithoutState},
		"path kept from before":              {job("savepoint").with(pinned("s3://b/sp-1")), job("savepoint").with(pinned("s3://b/sp-1")), true, false, ReplaceRollsBack},
		"path changed by this plan":          {job("savepoint").with(pinned("s3://b/sp-1")), job("savepoint").with(pinned("s3://b/sp-2")), true, false, ReplacePinned},
		"path kept, old job not running":     {job("savepoint").with(pinned("s3://b/sp-1")), job("savepoint").with(pinned("s3://b/sp-1")), false, false, ReplacePinnedNotRunning},
		"path set, final_savepoint off":      {job("savepoint").with(noFinal), job("savepoint").with(pinned("s3://b/sp-2")), true, false, ReplacePinnedNoFinal},
		"path known at apply only":           {job("savepoint"), job("savepoint"), true, true, ReplacePinned},
		"path known at apply, kept before":   {job("savepoint").with(pinned("s3://b/sp-1")), job("savepoint"), true, true, ReplacePinned},
		"path known at apply, not running":   {job("savepoint"), job("savepoint"), false, true, ReplacePinnedNotRunning},
		"session cluster":                    {Desired{FinalSavepoint: true}, Desired{FinalSavepoint: true}, true, false, ReplaceNoJob},
		"session cluster, then a pinned job": {Desired{FinalSavepoint: true}, job("savepoint").with(pinned("s3://b/sp-2")), true, false, ReplaceNoJob},
		"path known at apply, stateless old": {job("stateless"), job("savepoint"), true, true, ReplacePinnedNoFinal},
	} {
		if got := Replacement(c.prior, c.planned, c.oldHasState, c.restoreUnknown); got != c.want {
			t.Errorf("%s: Replacement = %v, want %v", name, got, c.want)
		}
	}
	for k, carries := range map[ReplacementKind]bool{ReplaceHandover: true, ReplaceNothingToCarry: true, ReplacePinned: false,
		ReplaceWithoutState: false, ReplaceRollsBack: false, ReplaceNoJob: false} {
		if k.Carries() != carries {
			t.Errorf("%v.Carries() = %v", k, !carries)
		}
	}
}
