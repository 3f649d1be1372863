package flinkdeploy

import "testing"

// running is an old deployment whose stateful job runs.
func running() MoveFacts {
	return MoveFacts{KeepsState: true, JobState: "RUNNING", LifecycleState: "STABLE", UpgradeSavepointPath: "s3://b/sp/savepoint-old"}
}

func TestPlanMove(t *testing.T) {
	suspended := func(path string) MoveFacts {
		f := running()
		f.JobState, f.LifecycleState, f.UpgradeSavepointPath = "FINISHED", "SUSPENDED", path
		return f
	}
	pinned := func(f MoveFacts, path, old string) MoveFacts {
		f.Pinned, f.PinnedPath, f.OldPath = true, path, old
		return f
	}
	for name, c := range map[string]struct {
		f    MoveFacts
		want MoveStart
	}{
		"running":                         {running(), MoveFromStop},
		"stopped with a savepoint":        {suspended("s3://b/sp/savepoint-1"), MoveFromStopped},
		"suspended in last-state":         {suspended(LastStateDummyPath), MoveRefusedNotRunning},
		"suspended without a savepoint":   {suspended(""), MoveRefusedNotRunning},
		"failed":                          {MoveFacts{KeepsState: true, JobState: "FAILED", LifecycleState: "FAILED"}, MoveRefusedNotRunning},
		"stateless":                       {MoveFacts{JobState: "FAILED"}, MoveWithoutState},
		"pinned elsewhere":                {pinned(running(), "s3://b/sp/other", "s3://b/sp/first"), MoveFromPinned},
		"pinned to the old start":         {pinned(running(), "s3://b/sp/first", "s3://b/sp/first"), MoveRefusedRollback},
		"pinned, old started empty":       {pinned(running(), "s3://b/sp/other", ""), MoveFromPinned},
		"pinned, not running":             {pinned(suspended(""), "s3://b/sp/other", ""), MoveRefusedNotRunning},
		"deleted by an earlier apply":     {MoveFacts{OldDeleted: true, KeepsState: true, Carried: "s3://b/sp/savepoint-1"}, MoveResumes},
		"deleted, even while not running": {MoveFacts{OldDeleted: true, KeepsState: true}, MoveResumes},
	} {
		if got := PlanMove(c.f); got != c.want {
			t.Errorf("%s: %d, want %d", name, got, c.want)
		}
	}
}

func TestMoveFacts_StoppedWith(t *testing.T) {
	f := MoveFacts{JobState: "FINISHED", LifecycleState: "SUSPENDED", UpgradeSavepointPath: "s3://b/sp/savepoint-1"}
	if p, ok := f.StoppedWith(); !ok || p != "s3://b/sp/savepoint-1" {
		t.Errorf("a savepoint-mode suspend: %q %v", p, ok)
	}
	f.JobState = "RUNNING"
	if _, ok := f.StoppedWith(); ok {
		t.Error("a running job is not stopped, whatever path it recorded")
	}
}

func TestMoveFacts_ResumeSource(t *testing.T) {
	for name, c := range map[string]struct {
		f    MoveFacts
		want string
	}{
		"pinned wins":      {MoveFacts{OldDeleted: true, Pinned: true, PinnedPath: "s3://b/sp/p", Carried: "s3://b/sp/c"}, FromPinned},
		"the stop's":       {MoveFacts{OldDeleted: true, Carried: "s3://b/sp/c"}, FromHandover},
		"nothing recorded": {MoveFacts{OldDeleted: true}, FromNothing},
	} {
		if got := c.f.ResumeSource(); got != c.want {
			t.Errorf("%s: %s, want %s", name, got, c.want)
		}
	}
}

func TestMoveFacts_applySteps(t *testing.T) {
	for name, c := range map[string]struct {
		f              MoveFacts
		stop, handover bool
	}{
		"running, stateful":             {running(), true, true},
		"stopped by a failed apply":     {MoveFacts{KeepsState: true, Carried: "s3://b/sp/c"}, false, true},
		"old deleted":                   {MoveFacts{OldDeleted: true, KeepsState: true, Carried: "s3://b/sp/c"}, false, true},
		"pinned: stopped, not restored": {MoveFacts{KeepsState: true, Pinned: true, PinnedPath: "s3://b/sp/p"}, true, false},
		"stateless":                     {MoveFacts{}, false, false},
	} {
		if got := c.f.TakesStop(); got != c.stop {
			t.Errorf("%s: TakesStop %v, want %v", name, got, c.stop)
		}
		if got := c.f.RestoresHandover(); got != c.handover {
			t.Errorf("%s: RestoresHandover %v, want %v", name, got, c.handover)
		}
	}
}
