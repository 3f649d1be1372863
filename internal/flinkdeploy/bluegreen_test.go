package flinkdeploy

import "testing"

// ClassifyBlueGreen follows FlinkBlueGreenDeploymentSpecDiff.compare
// (operator 1.15.0) on each kind of change.
func TestClassifyBlueGreen(t *testing.T) {
	base := func() Spec {
		return Spec{Image: "flink:2.2.1-java17", FlinkVersion: "2.2.1", FlinkConfiguration: map[string]string{"state.backend.type": "rocksdb"},
			Job: &Job{JarURI: "local:///job.jar", UpgradeMode: "savepoint"}}
	}
	one := int64(1)
	for _, c := range []struct {
		name string
		edit func(*Spec)
		want BlueGreenDiff
	}{
		{"nothing", func(*Spec) {}, DiffIgnore},
		{"image", func(s *Spec) { s.Image = "flink:2.2.1-java21" }, DiffTransition},
		{"a configuration key", func(s *Spec) { s.FlinkConfiguration["pipeline.object-reuse"] = "true" }, DiffTransition},
		{"an ignored key", func(s *Spec) { s.FlinkConfiguration["kubernetes.operator.job.restart.failed"] = "true" }, DiffPatchChild},
		{"upgrade mode", func(s *Spec) { s.Job.UpgradeMode = "last-state" }, DiffPatchChild},
		{"suspend", func(s *Spec) { s.Job.State = JobSuspended }, DiffSuspend},
		{"redeploy nonce", func(s *Spec) { s.Job.SavepointRedeployNonce = &one }, DiffSavepointRedeploy},
	} {
		next := base()
		c.edit(&next)
		if got := ClassifyBlueGreen(base(), next); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	suspended := base()
	suspended.Job.State = JobSuspended
	if got := ClassifyBlueGreen(suspended, base()); got != DiffResume {
		t.Errorf("resume: %s, want RESUME", got)
	}
}

func TestActiveChild(t *testing.T) {
	for state, want := range map[string]string{"INITIALIZING_BLUE": Blue, "ACTIVE_BLUE": Blue, "SAVEPOINTING_BLUE": Blue,
		"TRANSITIONING_TO_GREEN": Blue, "ACTIVE_GREEN": Green, "SAVEPOINTING_GREEN": Green, "TRANSITIONING_TO_BLUE": Green} {
		if got := ActiveChild(state); got != want {
			t.Errorf("%s: %s, want %s", state, got, want)
		}
	}
}

// In a TRANSITIONING_TO_x state without the other child (the first
// deployment, an in-place patch of x) x serves; with both, the old one.
func TestServingChild(t *testing.T) {
	only := func(c string) func(string) bool { return func(x string) bool { return x == c } }
	both := func(string) bool { return true }
	for _, tc := range []struct {
		state  string
		exists func(string) bool
		want   string
	}{
		{"TRANSITIONING_TO_BLUE", only(Blue), Blue},
		{"TRANSITIONING_TO_BLUE", both, Green},
		{"TRANSITIONING_TO_GREEN", only(Green), Green},
		{"TRANSITIONING_TO_GREEN", both, Blue},
		{"ACTIVE_GREEN", only(Blue), Green},
	} {
		if got := ServingChild(tc.state, tc.exists); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.state, got, tc.want)
		}
	}
}
