package flinkconf

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The ranges the operator checks on the autoscaler's options
// (flink-kubernetes-operator release-1.15.0: DefaultValidator.validateDeployment
// calls validateAutoScalerFlinkConfiguration on the effective configuration,
// which runs flink-autoscaler's AutoscalerValidator.validateAutoscalerOptions).
// It checks them only when the autoscaler is enabled, and refuses the
// deployment with "The AutoScalerOption <key> is invalid, it should be a
// value within the range [min, max]" (validateNumber), or "Invalid value in
// the autoscaler config <key>" when the value is not a number.

// autoscalerPrefix and oldAutoscalerPrefix are AutoScalerOptions'
// AUTOSCALER_CONF_PREFIX and the fallback every option also reads
// (OLD_K8S_OP_CONF_PREFIX + AUTOSCALER_CONF_PREFIX, withFallbackKeys).
const (
	autoscalerPrefix    = "job.autoscaler."
	oldAutoscalerPrefix = "kubernetes.operator.job.autoscaler."
)

// autoscalerEnabled is AutoScalerOptions.AUTOSCALER_ENABLED (default false).
var autoscalerEnabled = autoscalerOption{Name: "enabled"}

// autoscalerOption is one AutoScalerOptions option and the keys Flink's
// Configuration reads it from, in order: the key, its fallback keys, its
// deprecated keys (ConfigOption.withFallbackKeys puts fallback keys before
// deprecated ones; checked with flink-core 1.20.1, the operator's Flink).
type autoscalerOption struct {
	Name string // after job.autoscaler.
	// Fallback are further names under kubernetes.operator.job.autoscaler.
	// (besides Name); Deprecated are further names under job.autoscaler.
	Fallback, Deprecated []string
	Default              float64 // NaN: no default
}

func (o autoscalerOption) Key() string { return autoscalerPrefix + o.Name }

// Keys lists every key the operator reads the option from, in order.
func (o autoscalerOption) Keys() []string {
	ks := []string{o.Key(), oldAutoscalerPrefix + o.Name}
	for _, f := range o.Fallback {
		ks = append(ks, oldAutoscalerPrefix+f)
	}
	for _, d := range o.Deprecated {
		ks = append(ks, autoscalerPrefix+d)
	}
	return ks
}

// lookup finds the key the operator would read, and its value.
func (o autoscalerOption) lookup(extra map[string]string) (key, value string, ok bool) {
	for _, k := range o.Keys() {
		if v, ok := extra[k]; ok {
			return k, v, true
		}
	}
	return "", "", false
}

// utilizationTarget is AutoScalerOptions.UTILIZATION_TARGET: default 0.7,
// deprecated key job.autoscaler.target.utilization, fallback keys
// kubernetes.operator.job.autoscaler.utilization.target and
// kubernetes.operator.job.autoscaler.target.utilization.
var utilizationTarget = autoscalerOption{Name: "utilization.target", Fallback: []string{"target.utilization"},
	Deprecated: []string{"target.utilization"}, Default: 0.7}

// AutoscalerRange is one range AutoscalerValidator checks: one
// declaration per validateNumber call. A bound of the utilization target
// (TargetMin, TargetMax) is the effective job.autoscaler.utilization.target.
type AutoscalerRange struct {
	Option               autoscalerOption
	Min, Max             float64 // NaN: unbounded
	TargetMin, TargetMax bool
	Source               string
}

var noBound = math.NaN()

// AutoscalerRanges are validateAutoscalerOptions' checks, in its order
// (flink-autoscaler release-1.15.0, validation/AutoscalerValidator.java;
// the options and defaults in config/AutoScalerOptions.java). Every option
// also reads its kubernetes.operator.job.autoscaler. fallback key.
var AutoscalerRanges = []AutoscalerRange{
	// MAX_SCALE_DOWN_FACTOR (default 0.6): validateNumber(..., 0.0d).
	{Option: autoscalerOption{Name: "scale-down.max-factor", Default: 0.6}, Min: 0, Max: noBound,
		Source: "validateNumber(flinkConf, MAX_SCALE_DOWN_FACTOR, 0.0d)"},
	// MAX_SCALE_UP_FACTOR (default 100000.): validateNumber(..., 0.0d).
	{Option: autoscalerOption{Name: "scale-up.max-factor", Default: 100000}, Min: 0, Max: noBound,
		Source: "validateNumber(flinkConf, MAX_SCALE_UP_FACTOR, 0.0d)"},
	// UTILIZATION_TARGET (default 0.7): validateNumber(..., 0.0d, 1.0d).
	{Option: utilizationTarget, Min: 0, Max: 1, Source: "validateNumber(flinkConf, UTILIZATION_TARGET, 0.0d, 1.0d)"},
	// TARGET_UTILIZATION_BOUNDARY (deprecated option, default 0.3): validateNumber(..., 0.0d).
	{Option: autoscalerOption{Name: "target.utilization.boundary", Default: 0.3}, Min: 0, Max: noBound,
		Source: "validateNumber(flinkConf, TARGET_UTILIZATION_BOUNDARY, 0.0d)"},
	// UTILIZATION_MAX (no default): validateNumber(..., flinkConf.get(UTILIZATION_TARGET), 1.0d).
	{Option: autoscalerOption{Name: "utilization.max", Default: noBound}, TargetMin: true, Max: 1,
		Source: "validateNumber(flinkConf, UTILIZATION_MAX, flinkConf.get(UTILIZATION_TARGET), 1.0d)"},
	// UTILIZATION_MIN (no default): validateNumber(..., 0.0d, flinkConf.get(UTILIZATION_TARGET)).
	{Option: autoscalerOption{Name: "utilization.min", Default: noBound}, Min: 0, TargetMax: true,
		Source: "validateNumber(flinkConf, UTILIZATION_MIN, 0.0d, flinkConf.get(UTILIZATION_TARGET))"},
	// OBSERVED_SCALABILITY_COEFFICIENT_MIN (default 0.5): validateNumber(..., 0.01d, 1d).
	{Option: autoscalerOption{Name: "observed-scalability.coefficient-min", Default: 0.5}, Min: 0.01, Max: 1,
		Source: "validateNumber(flinkConf, OBSERVED_SCALABILITY_COEFFICIENT_MIN, 0.01d, 1d)"},
}

// parseJavaDouble reads a number as Java's Double.parseDouble does
// (ConfigurationUtils.convertToDouble): surrounding white space, a trailing
// d or f, exponents, hexadecimal floats, Infinity and NaN (but not inf).
func parseJavaDouble(s string) (float64, bool) {
	t := strings.TrimSpace(s)
	if strings.Contains(strings.ToLower(t), "inf") && strings.TrimLeft(t, "+-") != "Infinity" {
		return 0, false
	}
	if strings.Contains(t, "_") {
		return 0, false
	}
	if len(t) > 1 && !strings.HasPrefix(strings.ToLower(strings.TrimLeft(t, "+-")), "0x") {
		t = strings.TrimRight(t, "dDfF")
	}
	f, err := strconv.ParseFloat(t, 64)
	return f, err == nil
}

// javaDouble prints a bound as Java's Double.toString does in the
// operator's message (0.0, 1.0, 0.01).
func javaDouble(f float64) string {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// Bounds are the range's bounds for a utilization target (NaN: none).
func (r AutoscalerRange) Bounds(target float64) (lo, hi float64) {
	lo, hi = r.Min, r.Max
	if r.TargetMin {
		lo = target
	}
	if r.TargetMax {
		hi = target
	}
	return lo, hi
}

// RangeText is the range as the operator's message prints it.
func RangeText(lo, hi float64) string {
	l, h := "-Infinity", "+Infinity"
	if !math.IsNaN(lo) {
		l = javaDouble(lo)
	}
	if !math.IsNaN(hi) {
		h = javaDouble(hi)
	}
	return "[" + l + ", " + h + "]"
}

// AutoscalerEnabled tells whether flink_configuration turns the autoscaler
// on (job.autoscaler.enabled or its fallback key, "true" in any case, as
// ConfigurationUtils.convertToBoolean reads it).
func AutoscalerEnabled(extra map[string]string) bool {
	_, v, ok := autoscalerEnabled.lookup(extra)
	return ok && strings.EqualFold(v, "true")
}

// autoscalerProblem is what a range's Check found.
type autoscalerProblem struct {
	key, value string
	notNumber  bool
	rangeText  string // the range as the operator prints it
	bound      string // how a bound depends on the target, or ""
}

// Check says what is wrong with the range's option in flink_configuration
// (nil when nothing is).
func (r AutoscalerRange) Check(extra map[string]string) *autoscalerProblem {
	key, raw, ok := r.Option.lookup(extra)
	if !ok {
		return nil
	}
	v, ok := parseJavaDouble(raw)
	if !ok {
		return &autoscalerProblem{key: key, value: raw, notNumber: true}
	}
	target := utilizationTarget.Default
	if _, t, ok := utilizationTarget.lookup(extra); ok {
		if tv, ok := parseJavaDouble(t); ok {
			target = tv
		}
	}
	lo, hi := r.Bounds(target)
	// validateNumber: (min != null && value < min) || (max != null && value > max),
	// so NaN passes, as in Java.
	if !(!math.IsNaN(lo) && v < lo) && !(!math.IsNaN(hi) && v > hi) {
		return nil
	}
	p := &autoscalerProblem{key: key, value: raw, rangeText: RangeText(lo, hi)}
	if r.TargetMin || r.TargetMax {
		p.bound = fmt.Sprintf(" (the bound %s is the effective %s)", javaDouble(target), utilizationTarget.Key())
	}
	return p
}

// autoscalerRules applies AutoscalerRanges to flink_configuration when it
// enables the autoscaler.
func autoscalerRules(in Input, add func(Severity, string, string, ...string)) {
	if !AutoscalerEnabled(in.Extra) {
		return
	}
	for _, r := range AutoscalerRanges {
		p := r.Check(in.Extra)
		switch {
		case p == nil:
		case p.notNumber:
			add(Error, "Invalid autoscaler option", fmt.Sprintf("flink_configuration %q = %q is not a number: with the autoscaler enabled the "+
				"operator refuses the deployment (AutoscalerValidator.validateNumber: \"Invalid value in the autoscaler config %s\"). "+
				"Use a decimal number.", p.key, p.value, r.Option.Key()), "flink_configuration", p.key)
		default:
			add(Error, "Autoscaler option out of range", fmt.Sprintf("flink_configuration %q = %q is outside %s%s: with the autoscaler "+
				"enabled the operator refuses the deployment (AutoscalerValidator, %s: \"The AutoScalerOption %s is invalid, it should be "+
				"a value within the range %s\").", p.key, p.value, p.rangeText, p.bound, r.Source, r.Option.Key(), p.rangeText),
				"flink_configuration", p.key)
		}
	}
}

// AutoscalerChecks documents each range (internal/docgen), rendered by
// autoscalerRules itself with a value below the range.
func AutoscalerChecks() []SettingCheck {
	var out []SettingCheck
	for _, r := range AutoscalerRanges {
		lo, _ := r.Bounds(utilizationTarget.Default)
		probe := "-1000000"
		if math.IsNaN(lo) {
			continue
		}
		var got []Finding
		autoscalerRules(Input{Extra: map[string]string{autoscalerEnabled.Key(): "true", r.Option.Key(): probe}},
			func(sev Severity, summary, detail string, path ...string) {
				got = append(got, Finding{Severity: sev, Path: path, Summary: summary, Detail: detail})
			})
		for _, f := range got {
			if f.Path[1] == r.Option.Key() {
				out = append(out, SettingCheck{Path: "flink_configuration." + r.Option.Key(), Summary: f.Summary,
					Detail: strings.Replace(f.Detail, strconv.Quote(probe), "…", 1) + " Also read from " + strings.Join(r.Option.Keys()[1:], ", ") + "."})
			}
		}
	}
	return out
}
