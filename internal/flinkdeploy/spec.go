// Package flinkdeploy is the FlinkDeployment the provider manages, typed:
// the fields it writes (Spec), how they become the object the API server
// gets (Render) and how they are read back from a live object (Parse, and
// ParseConfiguration for import). No Terraform here: the provider's adapter
// maps its model to a Spec once, and compares rendered Specs to detect an
// update.
//
// Field names and shapes follow the Flink Kubernetes Operator 1.15 CRD
// (flink-kubernetes-operator-api, FlinkDeploymentSpec / JobSpec /
// JobManagerSpec / TaskManagerSpec / Resource; the CRD is in
// internal/testbed/crds/flinkdeployments.flink.apache.org-v1.yml).
package flinkdeploy

import (
	"encoding/json"
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
	JarURI                string
	EntryClass            string
	Args                  []string
	Parallelism           *int64
	UpgradeMode           string // last-state, savepoint, stateless
	State                 string // running, suspended
	AllowNonRestoredState *bool
	InitialSavepointPath  string
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
		"spec":       s.renderSpec(),
	}}
}

func (s Spec) renderSpec() map[string]any {
	spec := map[string]any{
		"image":          s.Image,
		"flinkVersion":   operatorEnum(s.FlinkVersion),
		"mode":           s.Mode,
		"serviceAccount": s.ServiceAccount,
	}
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
		setString(o, "entryClass", j.EntryClass)
		setString(o, "upgradeMode", j.UpgradeMode)
		setString(o, "state", j.State)
		setString(o, "initialSavepointPath", j.InitialSavepointPath)
		if j.Parallelism != nil {
			o["parallelism"] = *j.Parallelism
		}
		if j.AllowNonRestoredState != nil {
			o["allowNonRestoredState"] = *j.AllowNonRestoredState
		}
		if j.SavepointRedeployNonce != nil {
			o["savepointRedeployNonce"] = *j.SavepointRedeployNonce
		}
		if len(j.Args) > 0 {
			args := make([]any, len(j.Args))
			for i, a := range j.Args {
				args[i] = a
			}
			o["args"] = args
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

// Equal tells whether two specs render the same object: the one test of
// "does this plan change the FlinkDeployment".
func (s Spec) Equal(o Spec) bool {
	return CanonicalJSON(s.renderSpec()) == CanonicalJSON(o.renderSpec())
}

// JobChanged tells whether o changes what runs compared with s: image, Flink
// version, jar, entry class, args, parallelism or Flink configuration (the
// changes the operator applies as an upgrade, with the upgrade mode's
// savepoint or last state). A change of job.state, the pod template or
// resources alone is not a job change here.
func (s Spec) JobChanged(o Spec) bool {
	if s.Image != o.Image || operatorEnum(s.FlinkVersion) != operatorEnum(o.FlinkVersion) ||
		CanonicalJSON(s.FlinkConfiguration) != CanonicalJSON(o.FlinkConfiguration) {
		return true
	}
	if (s.Job == nil) != (o.Job == nil) {
		return true
	}
	if s.Job == nil {
		return false
	}
	a, b := *s.Job, *o.Job
	return a.JarURI != b.JarURI || a.EntryClass != b.EntryClass || strings.Join(a.Args, "\x00") != strings.Join(b.Args, "\x00") ||
		len(a.Args) != len(b.Args) || !sameInt(a.Parallelism, b.Parallelism)
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
