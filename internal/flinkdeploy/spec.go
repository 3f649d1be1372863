// Package flinkdeploy is the FlinkDeployment the provider manages, typed:
// the fields it writes (Spec), how they become the object the API server
// gets (Render) and how they are read back from a live object (Parse, and
// ReadLive: what a read or an import takes from it, with ParseConfiguration
// for an import's inputs). No Terraform here: the provider's adapter maps
// its model to a Spec once, compares rendered Specs to detect an update,
// and flattens ReadLive's Observed into its model.
//
// Field names and shapes follow the Flink Kubernetes Operator 1.15 CRD
// (flink-kubernetes-operator-api, FlinkDeploymentSpec / JobSpec /
// JobManagerSpec / TaskManagerSpec / Resource; the CRD is in
// the operator chart's crds/flinkdeployments.flink.apache.org-v1.yml, which the
// test bed reads from ../shared/testbed/flink-operator-1.15.0).
package flinkdeploy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
)

// APIVersion and Kind of the object (FlinkDeployment is served as
// flink.apache.org/v1beta1 by the operator's CRD).
const (
	APIVersion = "flink.apache.org/v1beta1"
	Kind       = "FlinkDeployment"
)

// Spec is the part of spec the provider writes. Optional scalars are
// pointers or empty strings: what is unset is not written, so the operator's
// defaults stay the operator's.
type Spec struct {
	Image string
	// FlinkVersion is the full Flink version (2.2.1); the object carries the
	// operator's enum (v2_2) and the pod template the S3 plugin jar of this
	// exact version.
	FlinkVersion       string
	Mode               string // native, standalone
	ServiceAccount     string
	FlinkConfiguration map[string]string
	// PodTemplate is spec.podTemplate as a JSON object (nil: none).
	PodTemplate map[string]any
	JobManager  *JobManager
	TaskManager *TaskManager
	Job         *Job
	// UnreadableConfig (Parse only) names flinkConfiguration keys whose
	// values a flat Flink configuration cannot hold (FlattenConfiguration).
	UnreadableConfig []string
	// LiveConfiguration is the live object's spec.flinkConfiguration as it
	// is (nil: none, or not read): Render writes FlinkConfiguration in its
	// shape (ShapeConfiguration). Hash and Equal ignore it.
	LiveConfiguration any
}

// JobManager is spec.jobManager.
type JobManager struct {
	Memory   string
	CPU      float64
	Replicas *int64
}

// TaskManager is spec.taskManager (task slots live in flinkConfiguration).
type TaskManager struct {
	Memory string
	CPU    float64
}

// Job is spec.job.
type Job struct {
	JarURI      string
	UpgradeMode string // last-state, savepoint, stateless
	State       string // running, suspended
	// Fields are the JobFields set, by spec.job key (entryClass,
	// parallelism...), each of its JobKind's Go type; unset fields are absent.
	Fields               map[string]any
	InitialSavepointPath string
	// SavepointRedeployNonce: a change to a new non-null value makes the
	// operator redeploy the job from InitialSavepointPath, dropping its
	// current state (JobSpec.savepointRedeployNonce, @SpecDiff(SAVEPOINT_REDEPLOY,
	// onNullIgnore = true), flink-kubernetes-operator-api release-1.15.0
	// JobSpec.java; handled by AbstractJobReconciler.redeployWithSavepoint;
	// FLINK-33763). Without it the operator reads initialSavepointPath only
	// on a job's first deployment (JobSpec.initialSavepointPath's javadoc).
	SavepointRedeployNonce *int64
}

// Render returns the FlinkDeployment object to apply.
func (s Spec) Render(namespace, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": APIVersion,
		"kind":       Kind,
		"metadata":   map[string]any{"name": name, "namespace": namespace},
		"spec":       s.renderLive(),
	}}
}

// renderLive is renderSpec with flinkConfiguration in the live object's shape.
func (s Spec) renderLive() map[string]any {
	spec := s.renderSpec()
	if s.LiveConfiguration != nil {
		spec["flinkConfiguration"] = ShapeConfiguration(s.FlinkConfiguration, s.LiveConfiguration)
	}
	return spec
}

func (s Spec) renderSpec() map[string]any {
	spec := map[string]any{
		"image":          s.Image,
		"flinkVersion":   operatorEnum(s.FlinkVersion),
		"serviceAccount": s.ServiceAccount,
	}
	// Unset: not written; the operator runs a deployment without spec.mode
	// native (KubernetesDeploymentMode.getDeploymentMode, release-1.15.0),
	// and an imported object without it keeps it absent.
	setString(spec, "mode", s.Mode)
	cfg := make(map[string]any, len(s.FlinkConfiguration))
	for k, v := range s.FlinkConfiguration {
		cfg[k] = v
	}
	spec["flinkConfiguration"] = cfg
	if s.PodTemplate != nil {
		spec["podTemplate"] = s.PodTemplate
	}
	if jm := s.JobManager; jm != nil {
		o := map[string]any{"resource": map[string]any{"memory": jm.Memory, "cpu": jm.CPU}}
		if jm.Replicas != nil {
			o["replicas"] = *jm.Replicas
		}
		spec["jobManager"] = o
	}
	if tm := s.TaskManager; tm != nil {
		spec["taskManager"] = map[string]any{"resource": map[string]any{"memory": tm.Memory, "cpu": tm.CPU}}
	}
	if j := s.Job; j != nil {
		o := map[string]any{"jarURI": j.JarURI}
		setString(o, "upgradeMode", j.UpgradeMode)
		setString(o, "state", j.State)
		setString(o, "initialSavepointPath", j.InitialSavepointPath)
		if j.SavepointRedeployNonce != nil {
			o["savepointRedeployNonce"] = *j.SavepointRedeployNonce
		}
		for _, f := range JobFields {
			f.render(*j, o)
		}
		spec["job"] = o
	}
	return spec
}

func setString(o map[string]any, key, v string) {
	if v != "" {
		o[key] = v
	}
}

// operatorEnum maps 2.2.1 to v2_2; a value that is not a full version (an
// enum read back from a live object) is written as is.
func operatorEnum(version string) string {
	if v, err := flinkconf.ParseVersion(version); err == nil {
		return v.OperatorEnum()
	}
	return version
}

// Hash identifies the object a spec renders (a hex SHA-256 prefix of its
// canonical JSON).
func (s Spec) Hash() string {
	sum := sha256.Sum256([]byte(CanonicalJSON(s.renderSpec())))
	return hex.EncodeToString(sum[:12])
}

// Equal tells whether two specs render the same object: the one test of
// "does this plan change the FlinkDeployment".
func (s Spec) Equal(o Spec) bool {
	return CanonicalJSON(s.renderSpec()) == CanonicalJSON(o.renderSpec())
}

// JobChanged tells whether the operator applies the change from s to o as
// an upgrade, i.e. restarts the job with its upgrade mode (UpgradeChanges).
func (s Spec) JobChanged(o Spec) bool { return len(s.UpgradeChanges(o)) > 0 }

// SpecField is one field of spec the provider writes: the attribute that
// sets it and how the operator's spec diff classifies a change of it
// (flink-kubernetes-operator release-1.15.0, ReflectiveDiffBuilder with the
// @SpecDiff annotations of flink-kubernetes-operator-api's
// FlinkDeploymentSpec, AbstractFlinkSpec, JobSpec and TaskManagerSpec).
// UpgradeChanges, and so savepoint_before_upgrade, and the list of the
// changes that take a savepoint (UpgradeAttrs) read it.
type SpecField struct {
	Attr  string // the provider's attribute, e.g. job.parallelism
	Field string // the spec field, as UpgradeChanges names it
	// Restarts: the operator classifies a change UPGRADE (a job restart).
	Restarts bool
	Changed  func(a, b Spec) bool
}

// SpecFields are every field of spec the provider writes but
// flinkConfiguration (each of whose keys is a field of its own:
// UpgradeChanges). Unannotated fields are UPGRADE, including image,
// flinkVersion, mode, serviceAccount, podTemplate, the whole jobManager and
// taskManager resources, and job jarURI and state. The JobFields follow
// job.jar_uri, classified by their entries.
var SpecFields = append(append(specFieldsBefore, jobSpecFields()...), specFieldsAfter...)

func jobSpecFields() []SpecField {
	out := make([]SpecField, len(JobFields))
	for i, f := range JobFields {
		out[i] = f.specField()
	}
	return out
}

var specFieldsBefore = []SpecField{
	{"image", "image", true, func(a, b Spec) bool { return a.Image != b.Image }},
	{"flink_version", "flinkVersion", true, func(a, b Spec) bool { return operatorEnum(a.FlinkVersion) != operatorEnum(b.FlinkVersion) }},
	{"mode", "mode", true, func(a, b Spec) bool { return a.Mode != b.Mode }},
	{"service_account", "serviceAccount", true, func(a, b Spec) bool { return a.ServiceAccount != b.ServiceAccount }},
	{"pod_template", "podTemplate", true, func(a, b Spec) bool { return CanonicalJSON(a.PodTemplate) != CanonicalJSON(b.PodTemplate) }},
	{"job_manager", "jobManager", true, func(a, b Spec) bool { return CanonicalJSON(a.JobManager) != CanonicalJSON(b.JobManager) }},
	{"task_manager", "taskManager", true, func(a, b Spec) bool { return CanonicalJSON(a.TaskManager) != CanonicalJSON(b.TaskManager) }},
	{"job.jar_uri", "job.jarURI", true, jobChanged(func(a, b Job) bool { return a.JarURI != b.JarURI })},
}

var specFieldsAfter = []SpecField{
	{"job.state", "job.state", true, jobChanged(func(a, b Job) bool { return jobState(a.State) != jobState(b.State) })},
	// IGNORE.
	{"job.upgrade_mode", "job.upgradeMode", false, jobChanged(func(a, b Job) bool { return a.UpgradeMode != b.UpgradeMode })},
	{"job.initial_savepoint_path", "job.initialSavepointPath", false,
		jobChanged(func(a, b Job) bool { return a.InitialSavepointPath != b.InitialSavepointPath })},
	// SAVEPOINT_REDEPLOY: the job is replaced from a path, not upgraded.
	{"savepoint_redeploy_nonce", "job.savepointRedeployNonce", false,
		jobChanged(func(a, b Job) bool { return !sameInt(a.SavepointRedeployNonce, b.SavepointRedeployNonce) })},
}

// jobChanged compares a field of two specs' jobs (both present: a job
// added or removed is a change of its own, "job").
func jobChanged(f func(a, b Job) bool) func(a, b Spec) bool {
	return func(a, b Spec) bool { return a.Job != nil && b.Job != nil && f(*a.Job, *b.Job) }
}

// UpgradeAttrs are the attributes whose change the operator applies as an
// upgrade (a restart), in SpecFields order; flinkConfiguration keys are
// upgrades too unless under IgnoredConfigPrefixes.
func UpgradeAttrs() []string {
	var out []string
	for _, f := range SpecFields {
		if f.Restarts {
			out = append(out, f.Attr)
		}
	}
	return out
}

// UpgradeText says in prose which changes the operator applies as an
// upgrade (SpecFields that restart, and flinkConfiguration keys but the
// ignored ones), for the documentation of savepoint_before_upgrade.
func UpgradeText() string {
	attrs := UpgradeAttrs()
	for i, a := range attrs {
		attrs[i] = "`" + a + "`"
	}
	ignored := make([]string, len(IgnoredConfigPrefixes))
	for i, p := range IgnoredConfigPrefixes {
		ignored[i] = "`" + p + "`"
	}
	last := len(ignored) - 1
	return strings.Join(attrs, ", ") + ", and any Flink configuration key except those starting with " + strings.Join(ignored[:last], ", ") +
		" or " + ignored[last] + ", which it ignores"
}

// UpgradeChanges names the fields whose change from s to o the operator
// classifies UPGRADE (a job restart): the SpecFields that restart, and the
// flinkConfiguration keys not under IgnoredConfigPrefixes.
func (s Spec) UpgradeChanges(o Spec) []string {
	var out []string
	for _, f := range SpecFields {
		if f.Restarts && !strings.HasPrefix(f.Field, "job.") && f.Changed(s, o) {
			out = append(out, f.Field)
		}
	}
	for _, k := range configKeys(s.FlinkConfiguration, o.FlinkConfiguration) {
		a, okA := s.FlinkConfiguration[k]
		b, okB := o.FlinkConfiguration[k]
		if (okA != okB || a != b) && !IgnoredConfigKey(k) {
			out = append(out, "flinkConfiguration."+k)
		}
	}
	if (s.Job == nil) != (o.Job == nil) {
		return append(out, "job")
	}
	for _, f := range SpecFields {
		if f.Restarts && strings.HasPrefix(f.Field, "job.") && f.Changed(s, o) {
			out = append(out, f.Field)
		}
	}
	return out
}

// IgnoredConfigPrefixes are the flinkConfiguration key prefixes whose
// changes the operator ignores (AbstractFlinkSpec.flinkConfiguration's
// @SpecDiff.Config entries: job.autoscaler, parallelism.default and
// kubernetes.operator are IGNORE). pipeline.jobvertex-parallelism-overrides
// is SCALE in native mode, applied in place only with the adaptive
// scheduler (NativeFlinkService.scale): counted as an upgrade here.
var IgnoredConfigPrefixes = []string{"job.autoscaler", "parallelism.default", "kubernetes.operator"}

// IgnoredConfigKey tells whether the operator ignores a change of key.
func IgnoredConfigKey(k string) bool {
	for _, p := range IgnoredConfigPrefixes {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

func configKeys(a, b map[string]string) []string {
	seen := map[string]bool{}
	var keys []string
	for _, m := range []map[string]string{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

// jobState: an unset job.state is running (JobSpec.state defaults to RUNNING).
func jobState(s string) string {
	if s == "" {
		return "running"
	}
	return s
}

func sameInt(a, b *int64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// CanonicalJSON renders a value with sorted keys and integral numbers as
// integers, so what was planned and what the API server returns compare equal.
func CanonicalJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	var norm any
	if json.Unmarshal(b, &norm) != nil {
		return string(b)
	}
	b, _ = json.Marshal(norm)
	return string(b)
}
