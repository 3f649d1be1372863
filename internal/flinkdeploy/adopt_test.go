package flinkdeploy

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
)

func object(t *testing.T, specYAML string) *unstructured.Unstructured {
	t.Helper()
	var spec map[string]any
	if err := yaml.Unmarshal([]byte(specYAML), &spec); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
}

// The deprecated keys and nested maps the operator's examples use are read
// as the settings they stand for, never dropped.
func TestParseConfigurationReadsDeprecatedAndNestedKeys(t *testing.T) {
	obj := object(t, `
flinkConfiguration:
  taskmanager.numberOfTaskSlots: 2
  state:
    savepoints.dir: s3://acme-flink-state/p/savepoints
    checkpoints.dir: s3://acme-flink-state/p/checkpoints
  high-availability:
    type: kubernetes
    storageDir: s3://acme-flink-state/p/ha
  state.backend: ROCKSDB
  execution.checkpointing.mode: exactly_once
  kubernetes.operator.savepoint.format.type: NATIVE
`)
	raw, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "flinkConfiguration")
	flat, bad := FlattenConfiguration(raw)
	if len(bad) > 0 {
		t.Fatal(bad)
	}
	s := ParseConfiguration(flat, "savepoint")
	if s.StoreID != "acme-flink-state/p" || s.State.Backend != "rocksdb" || s.Values["state.mode"] != "EXACTLY_ONCE" || s.HighAvailability != nil ||
		s.Values["task_manager.task_slots"] != "2" || len(s.Unrepresentable) > 0 {
		t.Fatalf("settings %+v", s)
	}
	if want := map[string]string{"kubernetes.operator.savepoint.format.type": "NATIVE"}; !reflect.DeepEqual(s.Extra, want) {
		t.Fatalf("extra %v, want %v", s.Extra, want)
	}
}

// What the provider cannot manage is named, one setting each.
func TestParseConfigurationNamesWhatItCannotRepresent(t *testing.T) {
	for _, c := range []struct {
		cfg  map[string]string
		want string
	}{
		{map[string]string{"state.checkpoints.dir": "file:///data/cp"}, `state.checkpoints.dir is "file:///data/cp"`},
		{map[string]string{}, "sets no checkpoint directory"},
		{map[string]string{"execution.checkpointing.dir": "s3://b/c", "high-availability": "zookeeper"}, `high-availability is "zookeeper"`},
		{map[string]string{"execution.checkpointing.dir": "s3://b/c", "fs.s3a.aws.credentials.provider": "x.Y"}, `fs.s3a.aws.credentials.provider is "x.Y"`},
		{map[string]string{"execution.checkpointing.dir": "s3://b/c", "high-availability.storageDir": "s3://b/ha"}, "while high availability is off"},
	} {
		got := strings.Join(ParseConfiguration(c.cfg, "stateless").Unrepresentable, "; ")
		if !strings.Contains(got, c.want) {
			t.Errorf("%v: %q, want it to say %q", c.cfg, got, c.want)
		}
	}
}

// Derive then Parse gives the settings back (the import of what the
// provider wrote), for every upgrade mode and backend.
func TestDeriveParseRoundTrip(t *testing.T) {
	for _, mode := range []string{"stateless", "savepoint", "last-state"} {
		for _, backend := range []string{"rocksdb", "hashmap", "forst"} {
			in := flinkconf.Input{FlinkVersion: "2.2.1", Identity: "pod_identity", UpgradeMode: mode, HasJob: true,
				State: flinkconf.State{CheckpointDir: "s3://acme-flink-state/p/checkpoints", SavepointDir: "s3://acme-flink-state/p/savepoints", HADir: "s3://acme-flink-state/p/ha",
					Backend: backend, LocalDir: "/data/state"},
				Values: map[string]string{"job.claim_mode": "CLAIM", "state.incremental": "true", "state.checkpoint_interval": "60s",
					"state.min_pause": "10s", "state.timeout": "10 min", "state.mode": "AT_LEAST_ONCE", "state.num_retained": "3"},
				Extra: map[string]string{"pipeline.name": "orders"}}
			cfg, _ := flinkconf.Derive(in)
			s := ParseConfiguration(cfg, mode)
			st := s.State
			if s.Identity != "pod_identity" || s.Values["job.claim_mode"] != "CLAIM" || s.StoreID != "acme-flink-state/p" || st.Backend != backend ||
				s.Values["state.checkpoint_interval"] != "60s" || s.Values["state.min_pause"] != "10s" || s.Values["state.timeout"] != "10 min" ||
				s.Values["state.mode"] != "AT_LEAST_ONCE" || s.Values["state.num_retained"] != "3" || s.Values["state.incremental"] != "true" ||
				s.Extra["pipeline.name"] != "orders" || len(s.Unrepresentable) > 0 {
				t.Errorf("%s/%s: %+v", mode, backend, s)
			}
			if backend != "hashmap" && st.LocalDir != "/data/state" {
				t.Errorf("%s/%s: local dir %q", mode, backend, st.LocalDir)
			}
		}
	}
}

// An update writes each key where and as the live object has it when Flink
// reads the two alike, so the object does not change.
func TestShapeConfigurationKeepsTheObjectsShape(t *testing.T) {
	obj := object(t, `
flinkConfiguration:
  taskmanager.numberOfTaskSlots: 2
  state:
    checkpoints.dir: s3://acme-flink-state/p/checkpoints
  high-availability:
    type: kubernetes
  pipeline.object-reuse: true
`)
	live := obj.Object["spec"].(map[string]any)["flinkConfiguration"]
	written := map[string]string{
		"taskmanager.numberOfTaskSlots": "2",
		"execution.checkpointing.dir":   "s3://acme-flink-state/p/checkpoints",
		"high-availability.type":        flinkconf.KubernetesHAFactory,
		"pipeline.object-reuse":         "true",
		"execution.checkpointing.mode":  "EXACTLY_ONCE", // new: flat
	}
	got := ShapeConfiguration(written, live)
	want := map[string]any{
		"taskmanager.numberOfTaskSlots": live.(map[string]any)["taskmanager.numberOfTaskSlots"],
		"state":                         map[string]any{"checkpoints.dir": "s3://acme-flink-state/p/checkpoints"},
		"high-availability":             map[string]any{"type": "kubernetes"},
		"pipeline.object-reuse":         true,
		"execution.checkpointing.mode":  "EXACTLY_ONCE",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("shaped\n %v\nwant\n %v", got, want)
	}
	// A changed value is written flat, as a string.
	written["taskmanager.numberOfTaskSlots"] = "4"
	if got := ShapeConfiguration(written, live); got["taskmanager.numberOfTaskSlots"] != "4" {
		t.Fatalf("changed value written as %v", got["taskmanager.numberOfTaskSlots"])
	}
}

// The defaults an object lacks, and the Flink version an import finds.
func TestAbsentDefaultsAndImportVersion(t *testing.T) {
	obj := object(t, `
image: flink:2.2
flinkVersion: v2_2
flinkConfiguration:
  state.backend.type: rocksdb
`)
	got := AbsentDefaults(obj)
	want := []string{flinkconf.AbsentRetention, flinkconf.AbsentStorage, flinkconf.AbsentLocalDir, flinkconf.AbsentFSGroup, flinkconf.AbsentMode}
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || g == w
		}
		if !found {
			t.Errorf("AbsentDefaults %v lacks %s", got, w)
		}
	}
	for _, g := range got {
		if g == flinkconf.AbsentBackend {
			t.Errorf("AbsentDefaults %v names the backend the object sets", got)
		}
	}
	if v, guessed, err := ImportVersion(obj); err != nil || !guessed || !strings.HasPrefix(v, "2.2.") {
		t.Errorf("flink:2.2 without a plugin: %q guessed=%v err=%v", v, guessed, err)
	}
	obj.Object["spec"].(map[string]any)["image"] = "flink:2.2.0-java17"
	if v, guessed, err := ImportVersion(obj); err != nil || guessed || v != "2.2.0" {
		t.Errorf("flink:2.2.0-java17: %q guessed=%v err=%v", v, guessed, err)
	}
	obj.Object["spec"].(map[string]any)["flinkVersion"] = "v1_18"
	if _, _, err := ImportVersion(obj); err == nil || !strings.Contains(err.Error(), "v1_18") {
		t.Errorf("v1_18: %v, want a refusal naming it", err)
	}
}

// An object written by other hands, with no credentials class and values in
// forms Flink reads but the provider does not write (ISO-8601 durations,
// booleans and enums in another case): it imports with identity unset and
// the values as they are, and the provider derives them back spelled as
// the object has them, so adopting it changes nothing.
func TestParseConfigurationKeepsForeignForms(t *testing.T) {
	live := map[string]string{
		"execution.checkpointing.dir":         "s3://acme-flink-state/p/checkpoints",
		"execution.checkpointing.interval":    "PT1M",
		"execution.checkpointing.timeout":     "pt10m",
		"execution.checkpointing.min-pause":   "PT0.5S",
		"execution.checkpointing.incremental": "TRUE",
		"execution.checkpointing.mode":        "exactly_once",
		"state.backend.type":                  "RocksDB",
		"taskmanager.numberOfTaskSlots":       "02",
	}
	s := ParseConfiguration(live, "stateless")
	if s.Identity != "" || len(s.Unrepresentable) > 0 || s.Values["state.checkpoint_interval"] != "PT1M" ||
		s.Values["state.incremental"] != "true" || s.Values["state.mode"] != "EXACTLY_ONCE" {
		t.Fatalf("settings %+v", s)
	}
	in := flinkconf.Input{FlinkVersion: "2.2.1", Identity: s.Identity, UpgradeMode: "stateless", State: s.State, Values: s.Values,
		Unwritten: map[string]bool{flinkconf.AbsentLocalDir: true, flinkconf.AbsentStorage: true}}
	cfg, fs := flinkconf.Derive(in)
	for _, f := range fs {
		if f.Severity == flinkconf.Error {
			t.Errorf("error deriving the imported settings: %+v", f)
		}
	}
	if again := flinkconf.Respell(cfg, live); !reflect.DeepEqual(again, live) {
		t.Errorf("derived back as\n%v\nwant the object's\n%v", again, live)
	}
}

// A boolean Flink would not read ("yes": convertToBoolean accepts true and
// false in any case only) is not taken for false: the attribute stays
// unset, and the import's round trip names the key instead.
func TestParseConfigurationLeavesUnreadableBooleansUnset(t *testing.T) {
	s := ParseConfiguration(map[string]string{"execution.checkpointing.dir": "s3://b/c", "execution.checkpointing.incremental": "yes"}, "stateless")
	if v, ok := s.Values["state.incremental"]; ok {
		t.Errorf("state.incremental imported as %q from \"yes\"", v)
	}
	if s := ParseConfiguration(map[string]string{"execution.checkpointing.dir": "s3://b/c", "state.backend.incremental": "False"}, "stateless"); s.Values["state.incremental"] != "false" {
		t.Errorf("\"False\" imported as %q", s.Values["state.incremental"])
	}
}

// An object whose main container does not enable the S3 plugin of its
// version imports as s3_plugin "image", and PodTemplate then gives its pod
// template back unchanged (no variable added: adopting changes nothing); an
// object that enables it imports with the default, which adds nothing new.
func TestImportS3PluginKeepsThePluginWiringAsFound(t *testing.T) {
	mainEnv := func(name, value string) *unstructured.Unstructured {
		return object(t, `
podTemplate:
  spec:
    containers:
    - name: flink-main-container
      env:
      - name: `+name+`
        value: `+value)
	}
	without := mainEnv("TZ", "UTC")
	with := mainEnv("ENABLE_BUILT_IN_PLUGINS", "flink-metrics-prometheus-2.2.1.jar;flink-s3-fs-hadoop-2.2.1.jar")
	otherVersion := mainEnv("ENABLE_BUILT_IN_PLUGINS", "flink-s3-fs-hadoop-2.1.0.jar")
	for name, c := range map[string]struct {
		obj  *unstructured.Unstructured
		want string
	}{
		"no variable":           {without, flinkconf.S3PluginImage},
		"variable names it":     {with, ""},
		"another version's jar": {otherVersion, flinkconf.S3PluginImage},
		"no pod template":       {object(t, `image: flink:2.2.1`), flinkconf.S3PluginImage},
	} {
		if got := ImportS3Plugin(c.obj, "2.2.1"); got != c.want {
			t.Errorf("%s: ImportS3Plugin = %q, want %q", name, got, c.want)
		}
	}
	live, _, _ := unstructured.NestedMap(without.Object, "spec", "podTemplate")
	in := flinkconf.Input{FlinkVersion: "2.2.1", S3Plugin: ImportS3Plugin(without, "2.2.1"), Unwritten: map[string]bool{flinkconf.AbsentFSGroup: true}}
	user := flinkconf.StripAdditions(live, in)
	b, err := yaml.Marshal(user)
	if err != nil {
		t.Fatal(err)
	}
	merged, fs := flinkconf.PodTemplate(string(b), in)
	if len(fs) > 0 || CanonicalJSON(merged) != CanonicalJSON(live) {
		t.Errorf("with s3_plugin %q the pod template becomes %s (findings %v), want it as found: %s", in.S3Plugin, CanonicalJSON(merged), fs, CanonicalJSON(live))
	}
	// The default still adds the variable (new deployments as before).
	def, _ := flinkconf.PodTemplate(string(b), flinkconf.Input{FlinkVersion: "2.2.1", Unwritten: in.Unwritten})
	if !strings.Contains(CanonicalJSON(def), `"name":"ENABLE_BUILT_IN_PLUGINS","value":"flink-s3-fs-hadoop-2.2.1.jar"`) {
		t.Errorf("s3_plugin unset: the pod template %s lacks the plugin variable", CanonicalJSON(def))
	}
}
