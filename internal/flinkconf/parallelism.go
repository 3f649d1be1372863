package flinkconf

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// The parallelism keys of flink_configuration that the parallelism rules
// read (PipelineOptions, flink-core release-2.2.1).
const (
	// MaxParallelismKey is PipelineOptions.MAX_PARALLELISM: an int,
	// default -1 (none: Flink then computes one per operator,
	// KeyGroupRangeAssignment.computeDefaultMaxParallelism, and a restore
	// adopts the snapshot's: SchedulerBase.computeVertexParallelismStore
	// lets an auto-configured max parallelism be rescaled).
	MaxParallelismKey = "pipeline.max-parallelism"
	// ParallelismOverridesKey is PipelineOptions.PARALLELISM_OVERRIDES: a
	// map of job vertex ID (hexadecimal) to parallelism, which
	// Dispatcher.applyParallelismOverrides sets on each vertex it names.
	ParallelismOverridesKey = "pipeline.jobvertex-parallelism-overrides"
)

// ExplicitMaxParallelism is pipeline.max-parallelism when flink_configuration
// sets it to a positive integer (Flink reads it with Integer.parseInt of the
// trimmed value: ConfigurationUtils.convertToInt). -1, Flink's default, and
// any value Flink could not read are "none" here (ok false): the rules below
// refuse only what they can read.
func ExplicitMaxParallelism(extra map[string]string) (int, bool) {
	v, ok := extra[MaxParallelismKey]
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}

// ParallelismOverrides reads pipeline.jobvertex-parallelism-overrides in
// Flink's map syntax ("vertexid1:4,vertexid2:2": ConfigurationUtils.
// convertToProperties splits on ',' then ':'). Entries it cannot read (a
// quoted key, a value that is not an integer) are left out: Flink refuses
// them at submission (Integer.parseInt in applyParallelismOverrides), and
// nothing here guesses.
func ParallelismOverrides(extra map[string]string) map[string]int {
	v, ok := extra[ParallelismOverridesKey]
	if !ok {
		return nil
	}
	out := map[string]int{}
	for _, e := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(e, ":")
		if !ok || strings.ContainsAny(k, `"'`) {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(val))
		if err != nil {
			continue
		}
		out[strings.ToLower(strings.TrimSpace(k))] = n
	}
	return out
}

// parallelismRules refuses a parallelism above an explicit
// pipeline.max-parallelism. Flink builds no execution graph for a vertex
// whose parallelism exceeds its max parallelism: ExecutionJobVertex's
// constructor throws JobException "Vertex <name>'s parallelism (<p>) is
// higher than the max parallelism (<m>). Please lower the parallelism or
// increase the max parallelism." (flink-runtime release-2.2.1). job.parallelism
// is parallelism.default (the operator's FlinkConfigBuilder), which every
// operator without a parallelism of its own in code gets, and
// pipeline.max-parallelism is the max parallelism of every operator without
// one of its own: both meet on those operators. The overrides set a
// vertex's parallelism whatever its code says.
//
// The autoscaler's job.autoscaler.vertex.max-parallelism is not refused:
// the autoscaler never goes above a vertex's max parallelism
// (JobVertexScaler.scale: upperBound = min(maxParallelism,
// parallelismUpperLimit); AutoScalerOptions.VERTEX_MAX_PARALLELISM "will be
// ignored if it is higher than the max parallelism", flink-autoscaler
// release-1.15.0).
func parallelismRules(in Input, add func(Severity, string, string, ...string)) {
	defaultMaxParallelismRule(in, add)
	maxP, ok := ExplicitMaxParallelism(in.Extra)
	if !ok || !in.HasJob {
		return
	}
	if in.Parallelism != nil && *in.Parallelism > int64(maxP) {
		add(Error, "Parallelism above the max parallelism",
			fmt.Sprintf("job.parallelism (%d) is higher than flink_configuration %q (%d): Flink would not start the job "+
				"(ExecutionJobVertex: \"Vertex …'s parallelism (%d) is higher than the max parallelism (%d). Please lower the "+
				"parallelism or increase the max parallelism.\"). Set job.parallelism to at most %d. Raising %s instead makes "+
				"the job's keyed state unreadable: a restore needs the max parallelism its checkpoints were written with.",
				*in.Parallelism, MaxParallelismKey, maxP, *in.Parallelism, maxP, maxP, MaxParallelismKey),
			"job", "parallelism")
	}
	overrides := ParallelismOverrides(in.Extra)
	vertices := make([]string, 0, len(overrides))
	for v := range overrides {
		vertices = append(vertices, v)
	}
	sort.Strings(vertices)
	for _, v := range vertices {
		if p := overrides[v]; p > maxP {
			add(Error, "Parallelism override above the max parallelism",
				fmt.Sprintf("flink_configuration %q gives the vertex %s the parallelism %d, higher than %q (%d): Flink would not "+
					"start the job (ExecutionJobVertex: \"Vertex …'s parallelism (%d) is higher than the max parallelism (%d)\"). "+
					"Give it at most %d.", ParallelismOverridesKey, v, p, MaxParallelismKey, maxP, p, maxP, maxP),
				"flink_configuration", ParallelismOverridesKey)
		}
	}
}

// Bounds of KeyGroupRangeAssignment (flink-runtime release-2.2.1):
// DEFAULT_LOWER_BOUND_MAX_PARALLELISM = 1 << 7 and
// UPPER_BOUND_MAX_PARALLELISM = Transformation.UPPER_BOUND_MAX_PARALLELISM
// = 1 << 15.
const (
	defaultLowerBoundMaxParallelism = 1 << 7
	upperBoundMaxParallelism        = 1 << 15
)

// DefaultMaxParallelism is the max parallelism Flink gives an operator of
// parallelism p that has none configured:
// KeyGroupRangeAssignment.computeDefaultMaxParallelism, min(max(
// MathUtils.roundUpToPowerOfTwo(p + p/2), 128), 32768), which
// SchedulerBase.getDefaultMaxParallelism applies to every vertex without a
// max parallelism (flink-runtime release-2.2.1). p below 1 is 1, as
// SchedulerBase.normalizeParallelism makes the default parallelism.
func DefaultMaxParallelism(p int) int {
	if p < 1 {
		p = 1
	}
	if p > upperBoundMaxParallelism {
		return upperBoundMaxParallelism // Flink refuses such a parallelism (checkParallelismPreconditions)
	}
	n := 1
	for n < p+p/2 {
		n <<= 1
	}
	return min(max(n, defaultLowerBoundMaxParallelism), upperBoundMaxParallelism)
}

// defaultMaxParallelismRule warns a stateful job (last-state or savepoint)
// that sets no pipeline.max-parallelism. Flink then computes one from the
// parallelism when the job first starts (DefaultMaxParallelism), splits
// its keyed state into that many key groups, and keeps it: a restore
// adopts the snapshot's max parallelism (SchedulerBase.
// computeVertexParallelismStore), refuses a parallelism above it
// (StateAssignmentOperation.checkParallelismPreconditions: "The maximum
// parallelism (…) of the restored state is lower than the configured
// parallelism (…)") and refuses a different explicit one ("… the current
// maximum parallelism (…) changed. This is currently not supported.").
// Flink's production readiness checklist, "Set An Explicit Max
// Parallelism": "There is currently no way to change the maximum
// parallelism of an operator after a job has started without discarding
// that operators state" (docs/content/docs/ops/production_ready.md).
func defaultMaxParallelismRule(in Input, add func(Severity, string, string, ...string)) {
	if !in.HasJob || in.Parallelism == nil || *in.Parallelism < 1 || (in.UpgradeMode != UpgradeLastState && in.UpgradeMode != UpgradeSavepoint) {
		return
	}
	if v, ok := in.Extra[MaxParallelismKey]; ok && strings.TrimSpace(v) != "-1" {
		return // explicit; -1 is PipelineOptions.MAX_PARALLELISM's default, none (a value Flink cannot read is Flink's to refuse)
	}
	p := int(min(*in.Parallelism, int64(upperBoundMaxParallelism)))
	m := DefaultMaxParallelism(p)
	add(Warning, "No explicit max parallelism",
		fmt.Sprintf("flink_configuration sets no %q (or Flink's default -1): with job.parallelism = %d, Flink gives every operator without a max parallelism "+
			"of its own %d (KeyGroupRangeAssignment.computeDefaultMaxParallelism: min(max(roundUpToPowerOfTwo(p + p/2), 128), "+
			"32768)) when the job first starts, and its keyed state keeps that number of key groups. It can never be raised "+
			"without losing the keyed state: a restore keeps the snapshot's max parallelism and refuses a parallelism above it "+
			"(StateAssignmentOperation.checkParallelismPreconditions). Set %q to the most the job will ever need (Flink's "+
			"production readiness checklist: \"Set An Explicit Max Parallelism\"); for a job that already runs, to the max "+
			"parallelism its checkpoints have (flinkstate_latest_checkpoint's contents), since Flink refuses a different one.",
			MaxParallelismKey, *in.Parallelism, m, MaxParallelismKey),
		"flink_configuration")
}
