package opmodel

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// Unit tests of the rules (no services).

func TestDiffType(t *testing.T) {
	base := func() map[string]any {
		return map[string]any{
			"image":              "flink:2.2.1",
			"flinkConfiguration": map[string]any{"execution.checkpointing.dir": "s3://b/cp"},
			"job":                map[string]any{"jarURI": "local:///job.jar", "upgradeMode": "savepoint", "state": "running", "parallelism": int64(1)},
			"jobManager":         map[string]any{"resource": map[string]any{"memory": "2048m"}},
			"taskManager":        map[string]any{"resource": map[string]any{"memory": "2048m"}},
		}
	}
	set := func(f func(m map[string]any)) map[string]any { m := base(); f(m); return m }
	job := func(m map[string]any) map[string]any { return m["job"].(map[string]any) }
	cases := map[string]struct {
		cur  map[string]any
		want string
	}{
		"nothing":                   {base(), "IGNORE"},
		"initialSavepointPath only": {set(func(m map[string]any) { job(m)["initialSavepointPath"] = "s3://b/sp/savepoint-1" }), "IGNORE"},
		"upgradeMode only":          {set(func(m map[string]any) { job(m)["upgradeMode"] = "last-state" }), "IGNORE"},
		"operator option":           {set(func(m map[string]any) { m["flinkConfiguration"].(map[string]any)["kubernetes.operator.x"] = "1" }), "IGNORE"},
		"image":                     {set(func(m map[string]any) { m["image"] = "flink:2.2.2" }), "UPGRADE"},
		"flink option":              {set(func(m map[string]any) { m["flinkConfiguration"].(map[string]any)["a"] = "1" }), "UPGRADE"},
		// The operator compares the flattened configuration
		// (ReflectiveDiffBuilder: ConfigObjectNode.asFlatMap): nesting and
		// value types are no change, a nested operator option is ignored.
		"same key nested": {set(func(m map[string]any) {
			m["flinkConfiguration"] = map[string]any{"execution": map[string]any{"checkpointing.dir": "s3://b/cp"}}
		}), "IGNORE"},
		"nested operator option": {set(func(m map[string]any) {
			m["flinkConfiguration"].(map[string]any)["kubernetes"] = map[string]any{"operator.x": int64(1)}
		}), "IGNORE"},
		"new nonce": {set(func(m map[string]any) {
			job(m)["savepointRedeployNonce"] = int64(1)
			job(m)["initialSavepointPath"] = "s3://b/sp/savepoint-1"
		}), "SAVEPOINT_REDEPLOY"},
	}
	for name, tc := range cases {
		if got := diffType(base(), tc.cur); got != tc.want {
			t.Errorf("%s: diff %s, want %s", name, got, tc.want)
		}
	}
	// A nonce set back to null is ignored (onNullIgnore).
	last := set(func(m map[string]any) { job(m)["savepointRedeployNonce"] = int64(1) })
	if got := diffType(last, base()); got != "IGNORE" {
		t.Errorf("nonce removed: diff %s, want IGNORE", got)
	}
	op := &Operator{}
	if msg := op.validate(base(), set(func(m map[string]any) { job(m)["savepointRedeployNonce"] = int64(2) })); !strings.Contains(msg, "InitialSavepointPath must not be empty") {
		t.Errorf("nonce without path: validation %q", msg)
	}
}

// The validator reads the operator's default configuration under the
// spec's (DefaultValidator.validateDeployment): rollback enabled there
// refuses a spec without HA, and HA in the spec satisfies it; a forbidden
// key is refused wherever it is set.
func TestValidate_operatorDefaultConfiguration(t *testing.T) {
	spec := func(conf map[string]any) map[string]any {
		return map[string]any{"flinkConfiguration": conf,
			"jobManager": map[string]any{"resource": map[string]any{"memory": "1g"}}, "taskManager": map[string]any{"resource": map[string]any{"memory": "1g"}}}
	}
	op := &Operator{DefaultConfig: map[string]string{"kubernetes.operator.deployment.rollback.enabled": "true"}}
	cases := []struct {
		conf map[string]any
		want string
	}{
		{map[string]any{}, "HA must be enabled for rollback support."},
		{map[string]any{"high-availability.type": "NONE"}, "HA must be enabled for rollback support."},
		{map[string]any{"high-availability.type": "kubernetes"}, ""},
		{map[string]any{"high-availability": map[string]any{"type": "kubernetes"}}, ""},
		{map[string]any{"high-availability": "KUBERNETES"}, ""},
		{map[string]any{"high-availability.type": "kubernetes", "kubernetes.operator.deployment.rollback.enabled": "false"}, ""},
		{map[string]any{"high-availability.type": "kubernetes", "kubernetes": map[string]any{"cluster-id": "x"}}, "Forbidden Flink config key: kubernetes.cluster-id"},
	}
	for _, tc := range cases {
		if got := op.validate(nil, spec(tc.conf)); got != tc.want {
			t.Errorf("validate(%v) = %q, want %q", tc.conf, got, tc.want)
		}
	}
	// validateJmSpec: without resource.memory, the configuration must size
	// the JobManager.
	noJM := spec(map[string]any{"high-availability.type": "kubernetes"})
	delete(noJM, "jobManager")
	if got := op.validate(nil, noJM); got != "JobManager resource memory must be defined using `spec.jobManager.resource.memory`" {
		t.Errorf("no JobManager memory: %q", got)
	}
	noJM["flinkConfiguration"].(map[string]any)["jobmanager.memory.process.size"] = "1g"
	if got := op.validate(nil, noJM); got != "" {
		t.Errorf("JobManager memory from the configuration: %q", got)
	}
	// validateJobSpec: a job needs a parallelism of at least 1 unless
	// taskManager.replicas is set (then that must be at least 1).
	ha := map[string]any{"high-availability.type": "kubernetes"}
	for _, tc := range []struct {
		job, tm map[string]any
		want    string
	}{
		{map[string]any{}, nil, "Job parallelism must be larger than 0"},
		{map[string]any{"parallelism": int64(0)}, nil, "Job parallelism must be larger than 0"},
		{map[string]any{"parallelism": int64(2)}, nil, ""},
		{map[string]any{}, map[string]any{"replicas": int64(2)}, ""},
		{map[string]any{"parallelism": int64(2)}, map[string]any{"replicas": int64(0)}, "TaskManager replicas must be larger than 0"},
	} {
		sp := spec(ha)
		sp["job"] = tc.job
		sp["jobManager"] = map[string]any{"resource": map[string]any{"memory": "1g"}}
		sp["taskManager"] = map[string]any{"resource": map[string]any{"memory": "1g"}}
		if tc.tm != nil {
			sp["taskManager"].(map[string]any)["replicas"] = tc.tm["replicas"]
		}
		if got := op.validate(nil, sp); got != tc.want {
			t.Errorf("validate(job %v, taskManager %v) = %q, want %q", tc.job, tc.tm, got, tc.want)
		}
	}
}

// flatConf is ConfigObjectNode.asFlatMap (its own unit test's cases:
// ConfigObjectNodeTest): nested keys joined with ".", arrays with ";",
// scalars as text.
func TestFlatConf(t *testing.T) {
	got := flatConf(map[string]any{"a": int64(1), "b": map[string]any{"c": []any{"1", "2"}}, "d": true, "e": 1.5})
	want := map[string]string{"a": "1", "b.c": "1;2", "d": "true", "e": "1.5"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("flatConf = %v, want %v", got, want)
	}
}

// Event names are EventUtils.generateEventName's: Java's String.hashCode.
func TestJavaHashCode(t *testing.T) {
	for s, want := range map[string]int32{"": 0, "a": 97, "hello": 99162322} {
		if got := javaHashCode(s); got != want {
			t.Errorf("hashCode(%q) = %d, want %d", s, got, want)
		}
	}
	// "polygenelubricants".hashCode() is Integer.MIN_VALUE in Java.
	if got := javaHashCode("polygenelubricants"); got != -2147483648 {
		t.Errorf("hashCode(polygenelubricants) = %d, want -2147483648", got)
	}
}

func TestLifecycle(t *testing.T) {
	spec := func(state string) string {
		b, _ := json.Marshal(map[string]any{"spec": map[string]any{"job": map[string]any{"state": state}}, "resource_metadata": map[string]any{}})
		return string(b)
	}
	running, suspended := spec("running"), spec("suspended")
	cases := []struct {
		st   deploymentStatus
		want string
	}{
		{deploymentStatus{}, "CREATED"},
		{deploymentStatus{Error: "x"}, "FAILED"},
		{deploymentStatus{LastReconciledSpec: running, ReconState: reconUpgrading}, "UPGRADING"},
		{deploymentStatus{LastReconciledSpec: suspended, ReconState: reconDeployed}, "SUSPENDED"},
		{deploymentStatus{LastReconciledSpec: running, ReconState: reconDeployed, JobState: flinkFailed}, "FAILED"},
		{deploymentStatus{LastReconciledSpec: running, ReconState: reconDeployed, JobState: flinkRunning}, "DEPLOYED"},
		{deploymentStatus{LastReconciledSpec: running, LastStableSpec: running, ReconState: reconDeployed}, "STABLE"},
	}
	for i, tc := range cases {
		if got := tc.st.lifecycle(false); got != tc.want {
			t.Errorf("case %d: %s, want %s", i, got, tc.want)
		}
	}
}
