package flinkdeploy

import "testing"

func TestActiveState(t *testing.T) {
	if ActiveState(Blue) != StateActiveBlue || ActiveState(Green) != StateActiveGreen {
		t.Errorf("ActiveState: %q, %q", ActiveState(Blue), ActiveState(Green))
	}
}

func TestUpdateOutcome(t *testing.T) {
	for name, c := range map[string]struct {
		diff   BlueGreenDiff
		active string
		want   BlueGreenOutcome
	}{
		"nothing":               {DiffIgnore, Blue, BlueGreenOutcome{Child: Blue}},
		"transition from blue":  {DiffTransition, Blue, BlueGreenOutcome{Child: Green, State: StateActiveGreen, NewChild: true, JobChanges: true}},
		"transition from green": {DiffTransition, Green, BlueGreenOutcome{Child: Blue, State: StateActiveBlue, NewChild: true, JobChanges: true}},
		"savepoint redeploy":    {DiffSavepointRedeploy, Green, BlueGreenOutcome{Child: Blue, State: StateActiveBlue, NewChild: true, JobChanges: true}},
		"patch in place":        {DiffPatchChild, Green, BlueGreenOutcome{Child: Green, JobChanges: true}},
		"suspend in place":      {DiffSuspend, Blue, BlueGreenOutcome{Child: Blue, JobChanges: true}},
		"resume in place":       {DiffResume, Green, BlueGreenOutcome{Child: Green, JobChanges: true}},
	} {
		if got := UpdateOutcome(c.diff, c.active); got != c.want {
			t.Errorf("%s: %+v, want %+v", name, got, c.want)
		}
	}
}

func TestResumedWaitOutcome(t *testing.T) {
	for name, c := range map[string]struct {
		target, active string
		want           BlueGreenOutcome
	}{
		"the transition it waited for": {StateActiveGreen, Blue, BlueGreenOutcome{Child: Green, State: StateActiveGreen, NewChild: true, JobChanges: true}},
		"an in-place change":           {StateActiveBlue, Blue, BlueGreenOutcome{Child: Blue, State: StateActiveBlue, JobChanges: true}},
		"the first deployment":         {StateInitializingBlue, Blue, BlueGreenOutcome{Child: Blue, State: StateActiveBlue, JobChanges: true}},
		"no target recorded":           {"", Green, BlueGreenOutcome{Child: Green, State: StateActiveGreen, JobChanges: true}},
	} {
		if got := ResumedWaitOutcome(c.target, c.active); got != c.want {
			t.Errorf("%s: %+v, want %+v", name, got, c.want)
		}
	}
}
