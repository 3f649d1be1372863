package flinkdeploy

import (
	"maps"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
)

const (
	secretKey   = "metrics.reporter.prom.password"
	clusterID   = "kubernetes.cluster-id"
	pipelineKey = "pipeline.name"
	cpDirKey    = "execution.checkpointing.dir"
	cpDirOldKey = "state.checkpoints.dir"
)

// testWant is a job with a state directory, a secret, and all its spec
// fields known.
func testWant() Want {
	return Want{
		Namespace: "data", Name: "orders",
		Input: flinkconf.Input{
			FlinkVersion: "2.2.1", Identity: "irsa", Image: "flink:2.2.1", HasJob: true, UpgradeMode: "last-state",
			JarURI: "local:///opt/flink/job.jar", Parallelism: ptr(int64(2)),
			State:  flinkconf.State{CheckpointDir: "s3://acme/orders/checkpoints", HADir: "s3://acme/orders/ha", Backend: flinkconf.BackendHashMap},
			Values: map[string]string{}, Extra: map[string]string{secretKey: "k3y"},
		},
		Sensitive: map[string]string{secretKey: "k3y"},
		Spec: &Spec{Image: "flink:2.2.1", FlinkVersion: "2.2.1", ServiceAccount: "flink",
			Job: &Job{JarURI: "local:///opt/flink/job.jar", UpgradeMode: "last-state"}},
	}
}

// What a Want derives: the written configuration, what the operator adds
// (shown, never written), the effective configuration with secrets masked,
// and the written configuration recovered from the effective one.
func TestWantDerive(t *testing.T) {
	for name, tc := range map[string]struct {
		edit func(*Want)
		// written and effective: a key's value ("" absent); nilEffective:
		// not known (the name is unknown).
		written, effective map[string]string
		nilEffective       bool
		pod                bool
	}{
		"job": {
			edit:      func(*Want) {},
			written:   map[string]string{secretKey: "k3y", cpDirKey: "s3://acme/orders/checkpoints", clusterID: ""},
			effective: map[string]string{secretKey: flinkconf.SensitivePlaceholder, clusterID: "orders", pipelineKey: "orders"},
			pod:       true,
		},
		"a key the operator adds, set in the configuration, is written": {
			edit:      func(w *Want) { w.Input.Extra[pipelineKey] = "mine" },
			written:   map[string]string{pipelineKey: "mine"},
			effective: map[string]string{pipelineKey: "mine"},
			pod:       true,
		},
		"unknown name: nothing shown": {
			edit:         func(w *Want) { w.NameUnknown = true },
			written:      map[string]string{secretKey: "k3y"},
			nilEffective: true,
			pod:          true,
		},
		"unknown pod template": {
			edit:      func(w *Want) { w.PodUnknown = true },
			written:   map[string]string{secretKey: "k3y"},
			effective: map[string]string{clusterID: "orders"},
		},
	} {
		w := testWant()
		tc.edit(&w)
		d := w.Derive(nil, nil)
		if errs := errorsOf(d.ConfigFindings, d.PodFindings); len(errs) > 0 {
			t.Fatalf("%s: %+v", name, errs)
		}
		for k, v := range tc.written {
			if got := d.Written[k]; got != v {
				t.Errorf("%s: written %s = %q, want %q", name, k, got, v)
			}
		}
		if tc.nilEffective != (d.Effective == nil) || tc.nilEffective != (d.Added == nil) {
			t.Errorf("%s: effective %v, added %v", name, d.Effective, d.Added)
		}
		for k, v := range tc.effective {
			if got := d.Effective[k]; got != v {
				t.Errorf("%s: effective %s = %q, want %q", name, k, got, v)
			}
		}
		if !tc.nilEffective {
			if again := w.Written(d.Effective); !reflect.DeepEqual(again, d.Written) {
				t.Errorf("%s: written recovered from the effective configuration\n%v\nwant\n%v", name, again, d.Written)
			}
		}
		if tc.pod != (d.PodJSON != "") {
			t.Errorf("%s: pod template %q", name, d.PodJSON)
		}
	}
}

// The configuration is spelled as the prior written one spells it, or
// without one as the live object does; the prior wins.
func TestWantDerive_respell(t *testing.T) {
	prior := map[string]string{cpDirOldKey: "s3://acme/orders/checkpoints"}
	live := map[string]any{"state": map[string]any{"checkpoints": map[string]any{"dir": "s3://acme/orders/checkpoints"}}}
	for name, tc := range map[string]struct {
		prior map[string]string
		live  any
		key   string
	}{
		"no prior":        {key: cpDirKey},
		"prior":           {prior: prior, key: cpDirOldKey},
		"live object":     {live: live, key: cpDirOldKey},
		"prior over live": {prior: map[string]string{"x": "y"}, live: live, key: cpDirKey},
		"empty prior":     {prior: map[string]string{}, live: live, key: cpDirOldKey},
	} {
		d := testWant().Derive(tc.prior, tc.live)
		if d.Written[tc.key] == "" || len(d.Written) != len(testWant().Derive(nil, nil).Written) {
			t.Errorf("%s: written %v, want the checkpoint directory under %s", name, d.Written, tc.key)
		}
	}
}

// WrittenConfig puts secrets back where the stored configuration masks
// them and leaves out what the operator adds with the same value; without
// what the operator adds (nil) it leaves the rest as it is.
func TestWrittenConfig(t *testing.T) {
	eff := map[string]string{secretKey: flinkconf.SensitivePlaceholder, clusterID: "orders", "a": "1", pipelineKey: "mine"}
	sens := map[string]string{secretKey: "k3y"}
	added := map[string]string{clusterID: "orders", pipelineKey: "orders"}
	for name, tc := range map[string]struct {
		added map[string]string
		want  map[string]string
	}{
		"with what the operator adds": {added, map[string]string{secretKey: "k3y", "a": "1", pipelineKey: "mine"}},
		"not known":                   {nil, map[string]string{secretKey: "k3y", "a": "1", pipelineKey: "mine", clusterID: "orders"}},
	} {
		before := maps.Clone(eff)
		if got := WrittenConfig(eff, sens, tc.added); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
		if !maps.Equal(eff, before) {
			t.Errorf("%s: the stored configuration was changed: %v", name, eff)
		}
	}
	if got := WrittenConfig(nil, nil, nil); got == nil || len(got) != 0 {
		t.Errorf("nothing stored: %v, want an empty configuration", got)
	}
}

// Render writes the derived configuration and pod template into the spec,
// in the live object's shape, and a carried final savepoint as the path a
// job without its own restores from; the Want itself is left as it was.
func TestWantRender(t *testing.T) {
	for name, tc := range map[string]struct {
		edit          func(*Want)
		live          any
		carried, want string
		liveKey       bool
		ok            bool
	}{
		"create":                        {edit: func(*Want) {}, ok: true},
		"carried":                       {edit: func(*Want) {}, carried: "s3://acme/sp-9", want: "s3://acme/sp-9", ok: true},
		"own path over the carried one": {edit: func(w *Want) { w.Spec.Job.InitialSavepointPath = "s3://acme/sp-1" }, carried: "s3://acme/sp-9", want: "s3://acme/sp-1", ok: true},
		"live shape":                    {edit: func(*Want) {}, live: map[string]any{cpDirOldKey: "s3://acme/orders/checkpoints"}, liveKey: true, ok: true},
		"spec unknown":                  {edit: func(w *Want) { w.Spec = nil }},
	} {
		w := testWant()
		tc.edit(&w)
		var was *Spec
		if w.Spec != nil {
			c := *w.Spec
			j := *c.Job
			c.Job = &j
			was = &c
		}
		d := w.Derive(nil, nil)
		obj, ok := w.Render(d, tc.live, tc.carried)
		if ok != tc.ok {
			t.Fatalf("%s: ok %v", name, ok)
		}
		if !ok {
			continue
		}
		if was != nil && !reflect.DeepEqual(*w.Spec.Job, *was.Job) {
			t.Errorf("%s: the Want's job changed to %+v", name, *w.Spec.Job)
		}
		if s := w.DesiredOf(d).Spec; tc.live == nil && tc.carried == "" && (s == nil || !s.Equal(Parse(throughJSON(t, obj), "2.2.1"))) {
			t.Errorf("%s: DesiredOf's spec %+v is not the rendered one", name, s)
		}
		if obj.GetNamespace() != "data" || obj.GetName() != "orders" {
			t.Errorf("%s: rendered %s/%s", name, obj.GetNamespace(), obj.GetName())
		}
		path, _, _ := unstructured.NestedString(obj.Object, "spec", "job", "initialSavepointPath")
		if path != tc.want {
			t.Errorf("%s: initialSavepointPath %q, want %q", name, path, tc.want)
		}
		cfg, _, _ := unstructured.NestedMap(obj.Object, "spec", "flinkConfiguration")
		if _, old := cfg[cpDirOldKey]; old != tc.liveKey || cfg[secretKey] != "k3y" || cfg[clusterID] != nil {
			t.Errorf("%s: flinkConfiguration %v", name, cfg)
		}
		if fs, _, _ := unstructured.NestedFloat64(obj.Object, "spec", "podTemplate", "spec", "securityContext", "fsGroup"); fs != float64(flinkconf.FlinkFSGroup) {
			t.Errorf("%s: podTemplate fsGroup %v", name, fs)
		}
	}
}

func errorsOf(lists ...[]flinkconf.Finding) []flinkconf.Finding {
	var out []flinkconf.Finding
	for _, fs := range lists {
		for _, f := range fs {
			if f.Severity == flinkconf.Error {
				out = append(out, f)
			}
		}
	}
	return out
}

// Renamed turns what the operator adds from one cluster's name to
// another's and leaves the rest, a value of the user's among it, alone.
func TestWantRenamed(t *testing.T) {
	w := testWant()
	d := w.Derive(nil, nil)
	eff := maps.Clone(d.Effective)
	eff["user.key"] = "orders"
	got := w.Renamed(eff, "orders-green")
	for k, want := range map[string]string{clusterID: "orders-green", pipelineKey: "orders-green", "kubernetes.namespace": "data",
		"user.key": "orders", secretKey: flinkconf.SensitivePlaceholder} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q", k, got[k], want)
		}
	}
	if eff[clusterID] != "orders" {
		t.Errorf("the stored configuration was changed: %v", eff)
	}
}
