package flinkdeploy

import (
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
)

func ptr[T any](v T) *T { return &v }

func fullSpec() Spec {
	return Spec{
		Image:          "flink:2.2.1-java17",
		FlinkVersion:   "2.2.1",
		Mode:           "native",
		ServiceAccount: "flink-orders",
		FlinkConfiguration: map[string]string{
			"execution.checkpointing.dir":   "s3://acme/flink/orders/checkpoints",
			"taskmanager.numberOfTaskSlots": "2",
		},
		PodTemplate: map[string]any{"spec": map[string]any{"containers": []any{map[string]any{
			"name": flinkconf.MainContainer,
			"env":  []any{map[string]any{"name": flinkconf.PluginsEnv, "value": "flink-s3-fs-hadoop-2.2.1.jar"}},
		}}}},
		JobManager:  &JobManager{Memory: "2048m", CPU: 1, Replicas: ptr(int64(2))},
		TaskManager: &TaskManager{Memory: "2048m", CPU: 0.5},
		Job: &Job{
			JarURI: "local:///opt/flink/examples/streaming/StateMachineExample.jar", UpgradeMode: "last-state", State: "running",
			Fields: map[string]any{"entryClass": "org.example.Main", "args": []string{"--a", "b"}, "parallelism": int64(2),
				"allowNonRestoredState": false},
			InitialSavepointPath: "s3://acme/flink/orders/savepoints/sp-1",
		},
	}
}

// throughJSON is what the API server does to an object: JSON out and back.
func throughJSON(t *testing.T, u *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	b, err := json.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	out := &unstructured.Unstructured{}
	if err := out.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRenderParseRoundTrip(t *testing.T) {
	for name, s := range map[string]Spec{
		"full":    fullSpec(),
		"minimal": {Image: "flink:2.2.1", FlinkVersion: "2.2.1", Mode: "native", FlinkConfiguration: map[string]string{}},
	} {
		t.Run(name, func(t *testing.T) {
			obj := throughJSON(t, s.Render("data", "orders"))
			if obj.GetAPIVersion() != APIVersion || obj.GetKind() != Kind || obj.GetNamespace() != "data" || obj.GetName() != "orders" {
				t.Fatalf("object meta: %v", obj.Object["metadata"])
			}
			got := Parse(obj, s.FlinkVersion)
			if !got.Equal(s) {
				t.Fatalf("round trip differs:\n got %s\nwant %s", CanonicalJSON(got.renderSpec()), CanonicalJSON(s.renderSpec()))
			}
			if !reflect.DeepEqual(got.Job, s.Job) && s.Job != nil {
				t.Fatalf("job: got %+v want %+v", got.Job, s.Job)
			}
		})
	}
}

func TestRenderWritesOperatorEnumAndOnlyWhatIsSet(t *testing.T) {
	s := fullSpec()
	s.Job.Fields = nil
	spec := s.Render("data", "orders").Object["spec"].(map[string]any)
	if spec["flinkVersion"] != "v2_2" {
		t.Fatalf("flinkVersion %v, want v2_2", spec["flinkVersion"])
	}
	job := spec["job"].(map[string]any)
	for _, k := range []string{"entryClass", "parallelism", "allowNonRestoredState", "args", "savepointRedeployNonce"} {
		if _, ok := job[k]; ok {
			t.Errorf("job.%s written although unset: %v", k, job)
		}
	}
}

func TestParseFlinkVersion(t *testing.T) {
	obj := throughJSON(t, fullSpec().Render("data", "orders"))
	cases := []struct{ hint, want string }{
		{"2.2.1", "2.2.1"}, // the hint agrees with the enum
		{"", "2.2.1"},      // import: from the S3 plugin jar
		{"2.1.0", "2.2.1"}, // changed out of band: the jar's version
	}
	for _, c := range cases {
		if got := Parse(obj, c.hint).FlinkVersion; got != c.want {
			t.Errorf("hint %q: FlinkVersion %q, want %q", c.hint, got, c.want)
		}
	}
	unstructured.RemoveNestedField(obj.Object, "spec", "podTemplate")
	if got := Parse(obj, "").FlinkVersion; got != "v2_2" {
		t.Errorf("without plugin jar: %q, want the enum v2_2", got)
	}
}

func TestEqualAndJobChanged(t *testing.T) {
	a, b := fullSpec(), fullSpec()
	if !a.Equal(b) || a.JobChanged(b) {
		t.Fatal("identical specs differ")
	}
	// Changes the operator ignores (ReflectiveDiffBuilder: IGNORE) change
	// the spec but restart nothing.
	for name, change := range map[string]func(*Spec){
		"upgrade mode":       func(s *Spec) { s.Job.UpgradeMode = "savepoint" },
		"initial path":       func(s *Spec) { s.Job.InitialSavepointPath = "s3://b/sp/savepoint-1" },
		"allow non-restored": func(s *Spec) { s.Job.Fields["allowNonRestoredState"] = true },
		"operator key": func(s *Spec) {
			s.FlinkConfiguration = withKey(s.FlinkConfiguration, "kubernetes.operator.savepoint.history.max.count", "5")
		},
		"autoscaler key":      func(s *Spec) { s.FlinkConfiguration = withKey(s.FlinkConfiguration, "job.autoscaler.enabled", "true") },
		"parallelism default": func(s *Spec) { s.FlinkConfiguration = withKey(s.FlinkConfiguration, "parallelism.default", "8") },
	} {
		c := fullSpec()
		job := *c.Job
		c.Job = &job
		change(&c)
		if a.Equal(c) || a.JobChanged(c) {
			t.Errorf("%s: a spec change the operator ignores is taken for an upgrade (%v)", name, a.UpgradeChanges(c))
		}
	}
	// Everything else is an UPGRADE: the operator restarts the job.
	for name, change := range map[string]func(*Spec){
		"task manager resources": func(s *Spec) { s.TaskManager = &TaskManager{Memory: "4096m", CPU: 0.5} },
		"job manager resources":  func(s *Spec) { s.JobManager = &JobManager{Memory: "4096m", CPU: 2} },
		"pod template": func(s *Spec) {
			s.PodTemplate = map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": "b"}}}
		},
		"service account": func(s *Spec) { s.ServiceAccount = "other" },
		"mode":            func(s *Spec) { s.Mode = "standalone" },
		"suspend":         func(s *Spec) { s.Job.State = "suspended" },
		"image":           func(s *Spec) { s.Image = "flink:2.2.1-java21" },
		"version":         func(s *Spec) { s.FlinkVersion = "2.1.0" },
		"config":          func(s *Spec) { s.FlinkConfiguration = map[string]string{"x": "y"} },
		"jar":             func(s *Spec) { s.Job.JarURI = "local:///other.jar" },
		"entry class":     func(s *Spec) { s.Job.Fields["entryClass"] = "Other" },
		"args":            func(s *Spec) { s.Job.Fields["args"] = []string{"--a"} },
		"parallelism":     func(s *Spec) { s.Job.Fields["parallelism"] = int64(4) },
	} {
		c := fullSpec()
		job := *c.Job
		c.Job = &job
		change(&c)
		if !a.JobChanged(c) || a.Equal(c) {
			t.Errorf("%s: not seen as a job change", name)
		}
	}
}

func withKey(m map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for a, b := range m {
		out[a] = b
	}
	return out
}

func TestParseConfigurationCollapsesStore(t *testing.T) {
	cfg, fs := flinkconf.Derive(flinkconf.Input{
		FlinkVersion: "2.2.1", Identity: "pod_identity", UpgradeMode: "last-state",
		State: flinkconf.State{CheckpointDir: "s3://acme/flink/orders/checkpoints", SavepointDir: "s3://acme/flink/orders/savepoints",
			HADir: "s3://acme/flink/orders/ha", Backend: "rocksdb"},
		Values: map[string]string{"task_manager.task_slots": "3", "state.incremental": "true", "state.num_retained": "3", "state.checkpoint_interval": "60s"},
		Extra:  map[string]string{"pipeline.name": "orders"},
	})
	for _, f := range fs {
		if f.Severity == flinkconf.Error {
			t.Fatalf("derive: %+v", f)
		}
	}
	s := ParseConfiguration(cfg, "last-state")
	if s.Identity != "pod_identity" || s.HighAvailability != nil || s.StoreID != "acme/flink/orders" || s.State.CheckpointDir != "" ||
		s.Values["task_manager.task_slots"] != "3" || s.Values["state.incremental"] != "true" || s.Values["state.num_retained"] != "3" ||
		s.Values["state.checkpoint_interval"] != "60s" ||
		!reflect.DeepEqual(s.Extra, map[string]string{"pipeline.name": "orders"}) {
		t.Fatalf("settings %+v", s)
	}
	cfg["execution.checkpointing.savepoint-dir"] = "s3://elsewhere/sp"
	if s := ParseConfiguration(cfg, "last-state"); s.StoreID != "" || s.State.SavepointDir != "s3://elsewhere/sp" {
		t.Fatalf("directories of different places collapsed: %+v", s)
	}
}

// flinkConfiguration as other tools write it (the operator's examples use
// numbers, booleans and nested maps) reads as the operator flattens it; a
// list is named, never dropped.
func TestFlattenConfiguration(t *testing.T) {
	raw := map[string]any{
		"taskmanager.numberOfTaskSlots": int64(2),
		"state.savepoints.dir":          "file:///flink-data/savepoints",
		"job.autoscaler.enabled":        true,
		"kubernetes.operator":           map[string]any{"job.restart.failed": false, "periodic.savepoint.interval": "1h"},
		"taskmanager.memory.fraction":   0.25,
		"parallelism.default":           float64(4),
		"pipeline.classpaths":           []any{"a", "b"},
		"pipeline.jars":                 []any{},
		"bad.list":                      []any{map[string]any{"x": 1}},
		"null.value":                    nil,
	}
	flat, unreadable := FlattenConfiguration(raw)
	want := map[string]string{
		"taskmanager.numberOfTaskSlots": "2", "state.savepoints.dir": "file:///flink-data/savepoints", "job.autoscaler.enabled": "true",
		"kubernetes.operator.job.restart.failed": "false", "kubernetes.operator.periodic.savepoint.interval": "1h",
		"taskmanager.memory.fraction": "0.25", "parallelism.default": "4",
		// A list as the operator joins it (ConfigObjectNode.arrayNodeToSemicolonSepratedString);
		// an empty one gives no key.
		"pipeline.classpaths": "a;b",
	}
	if !reflect.DeepEqual(flat, want) {
		t.Errorf("flat %v, want %v", flat, want)
	}
	if !reflect.DeepEqual(unreadable, []string{"bad.list", "null.value"}) {
		t.Errorf("unreadable %v, want the list of maps and the null", unreadable)
	}
}
