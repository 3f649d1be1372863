package flinkconf

import (
	"fmt"
	"strings"
	"testing"
)

func autoscalerFindings(extra map[string]string) map[string]string {
	_, fs := Derive(Input{FlinkVersion: "2.2.1", Identity: "irsa", State: State{Backend: "hashmap", CheckpointDir: "s3://acme-flink-state/p/c"}, Extra: extra})
	out := map[string]string{}
	for _, f := range fs {
		if f.Severity == Error && len(f.Path) == 2 && f.Path[0] == "flink_configuration" {
			out[f.Path[1]] = f.Detail
		}
	}
	return out
}

// Each range AutoscalerValidator checks, below, at and above each bound
// (validateNumber refuses value < min or value > max: the bounds are in).
func TestAutoscalerRanges(t *testing.T) {
	type probe struct {
		value string
		ok    bool
	}
	cases := map[string][]probe{
		"job.autoscaler.scale-down.max-factor":                {{"-0.1", false}, {"0", true}, {"0.0", true}, {"0.5", true}, {"1000", true}},
		"job.autoscaler.scale-up.max-factor":                  {{"-1", false}, {"0", true}, {"2.0", true}, {"100000", true}},
		"job.autoscaler.utilization.target":                   {{"-0.01", false}, {"0", true}, {"0.7", true}, {"1", true}, {"1.0", true}, {"1.5", false}},
		"job.autoscaler.target.utilization.boundary":          {{"-0.3", false}, {"0", true}, {"0.3", true}, {"5", true}},
		"job.autoscaler.utilization.max":                      {{"0.69", false}, {"0.7", true}, {"0.9", true}, {"1.0", true}, {"1.01", false}},
		"job.autoscaler.utilization.min":                      {{"-0.1", false}, {"0", true}, {"0.3", true}, {"0.7", true}, {"0.71", false}},
		"job.autoscaler.observed-scalability.coefficient-min": {{"0.009", false}, {"0.01", true}, {"0.5", true}, {"1", true}, {"1.1", false}},
	}
	if len(cases) != len(AutoscalerRanges) {
		t.Fatalf("%d ranges tested, %d declared", len(cases), len(AutoscalerRanges))
	}
	for _, r := range AutoscalerRanges {
		for _, p := range cases[r.Option.Key()] {
			got := autoscalerFindings(map[string]string{"job.autoscaler.enabled": "true", r.Option.Key(): p.value})
			msg, bad := got[r.Option.Key()]
			if bad == p.ok {
				t.Errorf("%s = %s: refused %v, want %v (%s)", r.Option.Key(), p.value, bad, !p.ok, msg)
			}
			if bad && !strings.Contains(msg, "The AutoScalerOption "+r.Option.Key()+" is invalid, it should be a value within the range [") {
				t.Errorf("%s = %s: %q does not quote the operator", r.Option.Key(), p.value, msg)
			}
		}
	}
}

// The messages print the range as the operator does (Double.toString).
func TestAutoscalerRangeText(t *testing.T) {
	for v, want := range map[string]string{
		"job.autoscaler.utilization.target":                   "[0.0, 1.0]",
		"job.autoscaler.scale-down.max-factor":                "[0.0, +Infinity]",
		"job.autoscaler.observed-scalability.coefficient-min": "[0.01, 1.0]",
	} {
		msg := autoscalerFindings(map[string]string{"job.autoscaler.enabled": "true", v: "-5"})[v]
		if !strings.Contains(msg, "within the range "+want) {
			t.Errorf("%s: %q, want range %s", v, msg, want)
		}
	}
}

// utilization.max and .min are bounded by the effective target, read from
// any of its keys.
func TestAutoscalerTargetBounds(t *testing.T) {
	for _, c := range []struct {
		extra map[string]string
		bad   string
	}{
		{map[string]string{"job.autoscaler.utilization.target": "0.5", "job.autoscaler.utilization.max": "0.6"}, ""},
		{map[string]string{"job.autoscaler.utilization.target": "0.8", "job.autoscaler.utilization.max": "0.75"}, "job.autoscaler.utilization.max"},
		{map[string]string{"job.autoscaler.utilization.target": "0.5", "job.autoscaler.utilization.min": "0.6"}, "job.autoscaler.utilization.min"},
		{map[string]string{"job.autoscaler.target.utilization": "0.5", "job.autoscaler.utilization.min": "0.6"}, "job.autoscaler.utilization.min"},
		{map[string]string{"kubernetes.operator.job.autoscaler.target.utilization": "0.9", "job.autoscaler.utilization.max": "0.8"}, "job.autoscaler.utilization.max"},
		// Without a target the default 0.7 bounds them.
		{map[string]string{"job.autoscaler.utilization.max": "0.65"}, "job.autoscaler.utilization.max"},
	} {
		c.extra["job.autoscaler.enabled"] = "true"
		got := autoscalerFindings(c.extra)
		if c.bad == "" && len(got) > 0 || c.bad != "" && (len(got) != 1 || got[c.bad] == "") {
			t.Errorf("%v: got %v, want an error on %q only", c.extra, got, c.bad)
		}
		if c.bad != "" && !strings.Contains(got[c.bad], "is the effective job.autoscaler.utilization.target") {
			t.Errorf("%v: %q does not say the bound is the target", c.extra, got[c.bad])
		}
	}
}

// The operator reads every option from its kubernetes.operator. fallback
// key too, and the key it reads first wins (primary, fallback, deprecated).
func TestAutoscalerKeys(t *testing.T) {
	got := autoscalerFindings(map[string]string{"kubernetes.operator.job.autoscaler.enabled": "TRUE",
		"kubernetes.operator.job.autoscaler.utilization.target": "1.5"})
	if !strings.Contains(got["kubernetes.operator.job.autoscaler.utilization.target"], "[0.0, 1.0]") {
		t.Errorf("fallback keys: %v", got)
	}
	got = autoscalerFindings(map[string]string{"job.autoscaler.enabled": "true",
		"job.autoscaler.utilization.target": "0.5", "job.autoscaler.target.utilization": "7"})
	if len(got) != 0 {
		t.Errorf("the deprecated key is read only without the key: %v", got)
	}
	got = autoscalerFindings(map[string]string{"job.autoscaler.enabled": "true", "job.autoscaler.target.utilization": "7"})
	if got["job.autoscaler.target.utilization"] == "" {
		t.Errorf("deprecated key: %v", got)
	}
	if want := []string{"job.autoscaler.utilization.target", "kubernetes.operator.job.autoscaler.utilization.target",
		"kubernetes.operator.job.autoscaler.target.utilization", "job.autoscaler.target.utilization"}; fmt.Sprint(utilizationTarget.Keys()) != fmt.Sprint(want) {
		t.Errorf("utilization.target keys %v, want %v", utilizationTarget.Keys(), want)
	}
}

// Nothing is checked while the autoscaler is off (validateAutoscalerOptions
// returns at once), and a value that is not a number is refused.
func TestAutoscalerEnabledAndNumbers(t *testing.T) {
	for _, enabled := range []string{"", "false", "FALSE"} {
		extra := map[string]string{"job.autoscaler.utilization.target": "1.5", "job.autoscaler.scale-up.max-factor": "lots"}
		if enabled != "" {
			extra["job.autoscaler.enabled"] = enabled
		}
		if got := autoscalerFindings(extra); len(got) != 0 {
			t.Errorf("enabled=%q: %v", enabled, got)
		}
	}
	for v, ok := range map[string]bool{"lots": false, "inf": false, "1_0": false, " 0.5 ": true, "0.5d": true, "1e-1": true, "NaN": true} {
		got := autoscalerFindings(map[string]string{"job.autoscaler.enabled": "true", "job.autoscaler.utilization.target": v})
		msg := got["job.autoscaler.utilization.target"]
		if (msg == "") != ok {
			t.Errorf("utilization.target %q: %q", v, msg)
		}
		if !ok && !strings.Contains(msg, "Invalid value in the autoscaler config job.autoscaler.utilization.target") {
			t.Errorf("utilization.target %q: %q does not quote the operator", v, msg)
		}
	}
}
