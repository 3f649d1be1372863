package flinkconf

import (
	"reflect"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestEquivalent(t *testing.T) {
	for _, c := range []struct {
		key, a, b string
		want      bool
	}{
		{"high-availability.type", "kubernetes", KubernetesHAFactory, true},
		{"high-availability", "KUBERNETES", KubernetesHAFactory, true},
		{"high-availability.type", "zookeeper", KubernetesHAFactory, false},
		{"execution.checkpointing.mode", "exactly_once", "EXACTLY_ONCE", true},
		{"state.backend", "RocksDB", "rocksdb", true},
		{"execution.checkpointing.interval", "60 s", "1 min", true},
		{"execution.checkpointing.interval", "60s", "2 min", false},
		{"state.backend.incremental", "TRUE", "true", true},
		{"pipeline.name", "Orders", "orders", false},
		{"execution.checkpointing.interval", "PT1M", "60 s", true},
		{"taskmanager.numberOfTaskSlots", "02", "2", true},
		{"taskmanager.numberOfTaskSlots", "+2", "2", true},
		{"taskmanager.numberOfTaskSlots", " 2", "2", false},
	} {
		if got := Equivalent(c.key, c.a, c.b); got != c.want {
			t.Errorf("Equivalent(%s, %q, %q) = %v", c.key, c.a, c.b, got)
		}
	}
}

func TestRespellKeepsTheObjectsSpelling(t *testing.T) {
	derived := map[string]string{"execution.checkpointing.dir": "s3://b/c", "high-availability.type": KubernetesHAFactory,
		"execution.checkpointing.mode": "EXACTLY_ONCE", "state.backend.type": "rocksdb"}
	prior := map[string]string{"state.checkpoints.dir": "s3://b/c", "high-availability": "kubernetes",
		"execution.checkpointing.mode": "exactly_once", "state.backend.type": "hashmap"}
	want := map[string]string{"state.checkpoints.dir": "s3://b/c", "high-availability": "kubernetes",
		"execution.checkpointing.mode": "exactly_once", "state.backend.type": "rocksdb"}
	if got := Respell(derived, prior); !reflect.DeepEqual(got, want) {
		t.Fatalf("Respell = %v, want %v", got, want)
	}
}

// StripAdditions gives back a template that PodTemplate turns into the
// live one again.
func TestStripAdditionsRoundTrip(t *testing.T) {
	in := Input{FlinkVersion: "2.2.1", State: State{Backend: "rocksdb"}}
	user := `spec:
  containers:
    - name: sidecar
      image: busybox
    - name: flink-main-container
      volumeMounts:
        - {name: logs, mountPath: /opt/flink/log}
  volumes:
    - {name: logs, emptyDir: {}}
`
	live, fs := PodTemplate(user, in)
	if len(fs) > 0 {
		t.Fatal(fs)
	}
	stripped := StripAdditions(live, in)
	again, _ := PodTemplate(mustYAML(t, stripped), in)
	if !reflect.DeepEqual(normalize(t, again), normalize(t, live)) {
		t.Fatalf("round trip\n %v\nwant\n %v", again, live)
	}
	if sc, ok := stripped["spec"].(map[string]any)["securityContext"]; ok {
		t.Fatalf("fsGroup 9999 kept: %v", sc)
	}
}

func mustYAML(t *testing.T, v any) string {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func normalize(t *testing.T, v any) any {
	t.Helper()
	var out any
	if err := yaml.Unmarshal([]byte(mustYAML(t, v)), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// An adopted stateful job whose retention the provider leaves unwritten
// runs with the operator's RETAIN_ON_CANCELLATION: shown as operator-added.
func TestOperatorAddedShowsRetentionLeftUnwritten(t *testing.T) {
	in := Input{HasJob: true, UpgradeMode: "savepoint"}
	if _, ok := OperatorAdded(in, "ns", "n")[RetentionKey]; ok {
		t.Fatal("the provider writes the retention itself, yet it is listed as the operator's")
	}
	in.Unwritten = map[string]bool{AbsentRetention: true}
	if got := OperatorAdded(in, "ns", "n")[RetentionKey]; got != "RETAIN_ON_CANCELLATION" {
		t.Fatalf("retention left unwritten: operator-added %q, want RETAIN_ON_CANCELLATION", got)
	}
}
