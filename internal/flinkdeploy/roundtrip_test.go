package flinkdeploy

import (
	"math/rand"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

// samples are representative values of each kind of table setting, valid
// ones only ("" is unset).
func samples(s flinkconf.Setting) []string {
	switch s.Kind {
	case flinkconf.KindDuration:
		return []string{"", "60s", "10 min", "500ms", "2 s"}
	case flinkconf.KindInt:
		return []string{"", "1", "3", "128"}
	case flinkconf.KindBool:
		return []string{"", "true", "false"}
	case flinkconf.KindEnum:
		return append([]string{""}, s.Values...)
	}
	return []string{"", "x"}
}

// backToInput is what an import makes of the parsed settings: the inputs
// the provider derives from again (as the provider's fromConfiguration and
// input do).
func backToInput(t *testing.T, s Settings, like flinkconf.Input) flinkconf.Input {
	t.Helper()
	in := flinkconf.Input{FlinkVersion: like.FlinkVersion, UpgradeMode: like.UpgradeMode, HasJob: like.HasJob, Parallelism: like.Parallelism,
		Identity: s.Identity, HighAvailability: s.HighAvailability, State: s.State, Values: s.Values, Extra: s.Extra}
	if in.State.Backend == "" {
		in.State.Backend = flinkconf.BackendRocksDB // the attribute's default
	}
	if s.StoreID != "" {
		sto, err := store.Parse(s.StoreID)
		if err != nil {
			t.Fatal(err)
		}
		in.State.CheckpointDir, in.State.SavepointDir, in.State.HADir = sto.Dirs()
		in.State.StoreURI = sto.URI()
	}
	return in
}

// roundTrip derives in, parses the result back, derives again and wants
// the same configuration and the same table values; false when in is not
// one the provider applies (an Error finding).
func roundTrip(t *testing.T, in flinkconf.Input) bool {
	t.Helper()
	cfg, fs := flinkconf.Derive(in)
	for _, f := range fs {
		if f.Severity == flinkconf.Error {
			return false
		}
	}
	s := ParseConfiguration(cfg, in.UpgradeMode)
	if len(s.Unrepresentable) > 0 {
		t.Fatalf("%+v: derived configuration not representable: %v", in, s.Unrepresentable)
	}
	want := map[string]string{}
	for k, v := range in.Values {
		if v != "" {
			want[k] = v
		}
	}
	if got := s.Values; !reflect.DeepEqual(got, want) && (len(got) != 0 || len(want) != 0) {
		t.Fatalf("%+v: values %v, want %v", in, got, want)
	}
	if s.Identity != in.Identity {
		t.Fatalf("%+v: identity %q", in, s.Identity)
	}
	again, fs := flinkconf.Derive(backToInput(t, s, in))
	for _, f := range fs {
		if f.Severity == flinkconf.Error {
			t.Fatalf("%+v: the import derives with an error: %+v", in, f)
		}
	}
	if !reflect.DeepEqual(again, cfg) {
		t.Fatalf("%+v:\nderived  %v\nimported %v", in, cfg, again)
	}
	return true
}

func baseInput(identity, mode, backend string, withStore bool) flinkconf.Input {
	st := flinkconf.State{Backend: backend}
	if withStore {
		sto, _ := store.Parse("acme-flink-state/flink/orders")
		st.CheckpointDir, st.SavepointDir, st.HADir = sto.Dirs()
		st.StoreURI = sto.URI()
	} else {
		st.CheckpointDir, st.SavepointDir = "s3://acme-flink-state/cp", "s3://other-bucket/sp"
	}
	p := int64(2)
	return flinkconf.Input{FlinkVersion: "2.2.1", Identity: identity, UpgradeMode: mode, HasJob: true, Parallelism: &p, State: st,
		Values: map[string]string{}}
}

// Every table setting at every sample value, alone, round-trips through
// Derive and ParseConfiguration for every identity, upgrade mode and
// backend: a setting the reverse did not read would fail here.
func TestDeriveParseRoundTripEverySetting(t *testing.T) {
	n := 0
	for _, id := range flinkconf.Identities {
		for _, mode := range flinkconf.UpgradeModes {
			for _, backend := range flinkconf.Backends {
				for _, withStore := range []bool{true, false} {
					for _, set := range flinkconf.Settings {
						for _, v := range samples(set) {
							in := baseInput(id, mode, backend, withStore)
							in.Values[set.Attr] = v
							if roundTrip(t, in) {
								n++
							}
						}
					}
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no input round-tripped")
	}
}

// Random combinations of every setting, the special ones included (HA,
// retention, local directory, extra keys).
func TestDeriveParseRoundTripRandom(t *testing.T) {
	r := rand.New(rand.NewSource(23))
	pick := func(vs []string) string { return vs[r.Intn(len(vs))] }
	tested := map[string]bool{}
	for i := 0; i < 3000; i++ {
		in := baseInput(pick(flinkconf.Identities), pick(flinkconf.UpgradeModes), pick(flinkconf.Backends), r.Intn(2) == 0)
		for _, set := range flinkconf.Settings {
			in.Values[set.Attr] = pick(samples(set))
		}
		switch r.Intn(3) {
		case 0:
			in.HighAvailability = new(bool)
		case 1:
			tr := true
			in.HighAvailability = &tr
		}
		if in.HighAvailability != nil && *in.HighAvailability && in.State.HADir == "" {
			in.State.HADir = "s3://acme-flink-state/ha"
		}
		in.State.ExternalizedRetention = pick(append([]string{""}, flinkconf.Retentions...))
		in.State.LocalDir = pick([]string{"", flinkconf.DefaultLocalDir, "/data/state"})
		if r.Intn(2) == 0 {
			in.Extra = map[string]string{"pipeline.name": "orders", "kubernetes.operator.savepoint.format.type": "NATIVE"}
		}
		if roundTrip(t, in) {
			for k, v := range in.Values {
				tested[k+"="+v] = true
			}
		}
	}
	for _, set := range flinkconf.Settings {
		for _, v := range samples(set) {
			if !tested[set.Attr+"="+v] {
				t.Errorf("%s = %q never round-tripped", set.Attr, v)
			}
		}
	}
}

// The table holds one declaration per key and attribute, and every
// setting's change restarts the job: the operator diffs
// flinkConfiguration (UpgradeChanges), and no setting is under a prefix it
// ignores.
func TestSettingsTable(t *testing.T) {
	keys, attrs := map[string]bool{}, map[string]bool{}
	for _, set := range flinkconf.Settings {
		if keys[set.Key] || attrs[set.Attr] {
			t.Errorf("%s (%s) declared twice", set.Attr, set.Key)
		}
		keys[set.Key], attrs[set.Attr] = true, true
		if set.Description == "" || (set.Kind == flinkconf.KindEnum) != (len(set.Values) > 0) {
			t.Errorf("%s: description or values missing", set.Attr)
		}
		if attr, managed := flinkconf.ManagedAttr(set.Key); attr != set.Attr || managed != set.Key {
			t.Errorf("%s: ManagedAttr(%q) = %q, %q", set.Attr, set.Key, attr, managed)
		}
		a := Spec{FlinkConfiguration: map[string]string{}}
		b := Spec{FlinkConfiguration: map[string]string{set.Key: samples(set)[1]}}
		if got := a.UpgradeChanges(b); !reflect.DeepEqual(got, []string{"flinkConfiguration." + set.Key}) {
			t.Errorf("%s: setting it changes %v, want a restart for flinkConfiguration.%s", set.Attr, got, set.Key)
		}
	}
}

// Every field of Spec and Job the provider writes is classified in
// SpecFields (one entry each: JobManager and TaskManager whole, as the
// operator diffs them), so a new field cannot miss the savepoint rule.
func TestSpecFieldsCoverSpec(t *testing.T) {
	notFields := map[string]bool{"FlinkConfiguration": true, "UnreadableConfig": true, "LiveConfiguration": true, "Job": true}
	n := 0
	for _, f := range reflect.VisibleFields(reflect.TypeOf(Spec{})) {
		if !notFields[f.Name] {
			n++
		}
	}
	n += reflect.TypeOf(Job{}).NumField() - 1 + len(JobFields) // Fields holds the JobFields
	if n != len(SpecFields) {
		t.Errorf("Spec and Job have %d fields the provider writes, SpecFields classifies %d", n, len(SpecFields))
	}
}

// jobSamples are values of each kind of job field, valid ones only (nil
// is unset).
func jobSamples(f JobField) []any {
	switch f.Kind {
	case JobInt:
		return []any{nil, int64(1), int64(3), int64(128)}
	case JobBool:
		return []any{nil, true, false}
	case JobStrings:
		return []any{nil, []string{"--a"}, []string{"--input", "s3://acme/in", "--verbose"}}
	}
	return []any{nil, "org.example.Main", "x"}
}

// Every job field at every sample value, alone and all together, renders
// to spec.job under its key, and parses back (through JSON, as the API
// server returns it) to the same value: a field Render wrote but Parse did
// not read would fail here.
func TestJobFieldsRoundTrip(t *testing.T) {
	all := fullSpec()
	all.Job.Fields = nil
	for _, f := range JobFields {
		for _, v := range jobSamples(f) {
			s := fullSpec()
			s.Job.Fields = nil
			s.Job.SetField(f, v)
			if v != nil {
				all.Job.SetField(f, v)
			}
			obj := throughJSON(t, s.Render("data", "orders"))
			got, ok, _ := unstructuredField(obj, f.Key)
			if ok != (v != nil) {
				t.Fatalf("%s = %v: written %v (%v)", f.Attr, v, ok, got)
			}
			p := Parse(obj, s.FlinkVersion)
			if !reflect.DeepEqual(p.Job.Fields[f.Key], s.Job.Fields[f.Key]) || !p.Equal(s) {
				t.Fatalf("%s = %v: parsed %#v", f.Attr, v, p.Job.Fields[f.Key])
			}
		}
	}
	p := Parse(throughJSON(t, all.Render("data", "orders")), all.FlinkVersion)
	if !reflect.DeepEqual(p.Job, all.Job) {
		t.Fatalf("all fields: got %+v want %+v", p.Job, all.Job)
	}
}

func unstructuredField(obj *unstructured.Unstructured, key string) (any, bool, error) {
	return unstructured.NestedFieldNoCopy(obj.Object, "spec", "job", key)
}

// The job table holds one declaration per attribute and key, none of
// them one of Job's own fields, and a change of each field changes the
// spec and restarts the job exactly when its entry says so.
func TestJobFieldsTable(t *testing.T) {
	keys, attrs := map[string]bool{}, map[string]bool{}
	own := map[string]bool{"jarURI": true, "upgradeMode": true, "state": true, "initialSavepointPath": true, "savepointRedeployNonce": true}
	for _, f := range JobFields {
		if keys[f.Key] || attrs[f.Attr] || own[f.Key] {
			t.Errorf("%s (%s) declared twice", f.Attr, f.Key)
		}
		keys[f.Key], attrs[f.Attr] = true, true
		if f.Description == "" {
			t.Errorf("%s: no description", f.Attr)
		}
		if g, ok := JobFieldByAttr(f.Attr); !ok || g.Key != f.Key {
			t.Errorf("JobFieldByAttr(%q) = %+v, %v", f.Attr, g, ok)
		}
		samples := jobSamples(f)
		for i := range samples {
			for j := range samples {
				if i == j {
					continue
				}
				a, b := fullSpec(), fullSpec()
				a.Job.Fields, b.Job.Fields = nil, nil
				a.Job.SetField(f, samples[i])
				b.Job.SetField(f, samples[j])
				if a.Equal(b) {
					t.Errorf("%s: %v and %v render the same spec", f.Attr, samples[i], samples[j])
				}
				want := []string(nil)
				if f.Restarts {
					want = []string{"job." + f.Key}
				}
				if got := a.UpgradeChanges(b); !reflect.DeepEqual(got, want) {
					t.Errorf("%s: %v to %v changes %v, want %v", f.Attr, samples[i], samples[j], got, want)
				}
			}
		}
	}
}
