package flinkdeploy

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

// live is a FlinkDeployment ns/orders with the given spec.
func live(t *testing.T, specYAML string) *unstructured.Unstructured {
	t.Helper()
	obj := object(t, specYAML)
	obj.SetNamespace("ns")
	obj.SetName("orders")
	return obj
}

// problems are a reading's problems as "error: <cause>" and
// "warning <attr>: <summary>", for comparing.
func problems(o Observed) []string {
	var out []string
	for _, p := range o.Problems {
		if p.Error {
			out = append(out, "error: "+p.Detail)
		} else {
			out = append(out, "warning "+p.Attr+": "+p.Summary)
		}
	}
	return out
}

// providerWritten is the object the provider writes for in: what an
// import of an object it wrote (a state lost, a move) reads.
func providerWritten(t *testing.T, in flinkconf.Input, userPod string) *unstructured.Unstructured {
	t.Helper()
	cfg, fs := flinkconf.Derive(in)
	pod, pfs := flinkconf.PodTemplate(userPod, in)
	for _, f := range append(fs, pfs...) {
		if f.Severity == flinkconf.Error {
			t.Fatalf("derive: %s: %s", f.Summary, f.Detail)
		}
	}
	s := Spec{Image: in.Image, FlinkVersion: in.FlinkVersion, Mode: "native", ServiceAccount: "flink", FlinkConfiguration: cfg, PodTemplate: pod,
		JobManager: &JobManager{Memory: "2048m", CPU: 1}, TaskManager: &TaskManager{Memory: "2048m", CPU: 1},
		Job: &Job{JarURI: in.JarURI, UpgradeMode: in.UpgradeMode, State: "running", Fields: map[string]any{"parallelism": *in.Parallelism}}}
	return throughJSON(t, s.Render("ns", "orders"))
}

func storeInput() flinkconf.Input {
	sto, _ := store.Parse("acme-flink-state/orders")
	cp, sp, ha := sto.Dirs()
	return flinkconf.Input{
		FlinkVersion: "2.2.1", Identity: flinkconf.IdentityIRSA, Image: "flink:2.2.1-java17",
		HasJob: true, Parallelism: ptr(int64(2)), UpgradeMode: flinkconf.UpgradeSavepoint, JarURI: "local:///opt/flink/job.jar",
		State:  flinkconf.State{Backend: flinkconf.BackendRocksDB, CheckpointDir: cp, SavepointDir: sp, HADir: ha, StoreURI: sto.URI()},
		Values: map[string]string{flinkconf.AttrTaskSlots: "2", flinkconf.AttrCheckpointInterval: "60s"},
		Extra:  map[string]string{"pipeline.max-parallelism": "128"},
	}
}

// An object the provider wrote imports as the inputs that wrote it: the
// configuration derives back to the object's, the pod template comes back
// as the user's part alone (here none), and nothing is reported.
func TestReadLive_importsWhatTheProviderWrote(t *testing.T) {
	in := storeInput()
	for _, userPod := range []string{"", `{"metadata":{"labels":{"team":"payments"}}}`} {
		obj := providerWritten(t, in, userPod)
		o := ReadLive(obj, Recorded{}, true, nil)
		if len(o.Problems) > 0 || o.Import == nil {
			t.Fatalf("pod %q: problems %v", userPod, problems(o))
		}
		imp := o.Import
		if imp.Identity != flinkconf.IdentityIRSA || imp.StoreID != "acme-flink-state/orders" || imp.S3Plugin != "" ||
			imp.TaskSlots == nil || *imp.TaskSlots != 2 || imp.Values[flinkconf.AttrCheckpointInterval] != "60s" {
			t.Errorf("pod %q: imported %+v", userPod, imp)
		}
		if want := map[string]string{"pipeline.max-parallelism": "128"}; !reflect.DeepEqual(imp.Plain, want) || imp.Secret != nil {
			t.Errorf("pod %q: plain %v secret %v, want plain %v", userPod, imp.Plain, imp.Secret, want)
		}
		switch {
		case userPod == "" && imp.PodTemplate != nil:
			t.Errorf("pod_template %q, want none: the whole template is the provider's additions", *imp.PodTemplate)
		case userPod != "" && (imp.PodTemplate == nil || *imp.PodTemplate != userPod):
			t.Errorf("pod_template %v, want %s", imp.PodTemplate, userPod)
		}
		if again, _ := flinkconf.Derive(imp.Input); !reflect.DeepEqual(again, o.Written) {
			t.Errorf("the imported inputs derive\n%v\nnot the object's\n%v", again, o.Written)
		}
		if o.Spec.FlinkVersion != "2.2.1" || o.Spec.Job == nil || o.Spec.JobManager == nil || o.Spec.TaskManager == nil {
			t.Errorf("spec %+v", o.Spec)
		}
	}
}

// Each import problem: an error stops the reading (nothing imported), a
// warning names its attribute and the import goes on.
func TestReadLive_importProblems(t *testing.T) {
	const job = `
job: {jarURI: "local:///opt/flink/job.jar", upgradeMode: savepoint, parallelism: 2}
taskManager: {resource: {memory: 2048m, cpu: 1}}
`
	const plugin = `
podTemplate:
  spec:
    containers:
    - name: flink-main-container
      env: [{name: ENABLE_BUILT_IN_PLUGINS, value: flink-s3-fs-hadoop-2.2.1.jar}]
`
	for _, c := range []struct {
		name, spec string
		want       []string
	}{
		{"clean", `
image: flink:2.2.1
flinkVersion: v2_2
flinkConfiguration:
  fs.s3a.aws.credentials.provider: ` + flinkconf.IRSACredentialsProvider + `
  execution.checkpointing.dir: s3://acme/cp
` + job + plugin, nil},
		{"unreadable value", `
image: flink:2.2.1
flinkVersion: v1_15
flinkConfiguration:
  execution.checkpointing.dir: s3://acme/cp
  metrics.reporters: null
` + job, []string{"error: spec.flinkConfiguration holds values a flat Flink configuration cannot hold for metrics.reporters (null, or a list of maps)"}},
		{"unknown Flink version", `
image: flink:1.15.4
flinkVersion: v1_15
flinkConfiguration:
  execution.checkpointing.dir: s3://acme/cp
` + job, []string{`error: spec.flinkVersion is "v1_15": the provider manages Flink 1.20 and later`}},
		{"patch guessed, no credentials class, plugin from the image", `
image: registry.example/flink-jobs:7
flinkVersion: v2_2
flinkConfiguration:
  execution.checkpointing.dir: s3://acme/cp
` + job, []string{"warning flink_version: Flink patch version assumed", "warning identity: No S3 credentials class on the object",
			"warning s3_plugin: The object does not enable the S3 plugin"}},
		{"unrepresentable settings", `
image: flink:2.2.1
flinkVersion: v2_2
flinkConfiguration:
  execution.checkpointing.dir: file:///flink-data/cp
` + job, []string{`error: spec.flinkConfiguration: execution.checkpointing.dir is "file:///flink-data/cp": the provider keeps state on S3 only`}},
		{"secrets", `
image: flink:2.2.1
flinkVersion: v2_2
flinkConfiguration:
  fs.s3a.aws.credentials.provider: ` + flinkconf.IRSACredentialsProvider + `
  execution.checkpointing.dir: s3://acme/cp
  metrics.reporter.dd.apikey: k3y
` + job + plugin, []string{"warning sensitive_flink_configuration: Secrets imported as sensitive"}},
		// A session cluster has no job, so no claim_mode: the key it
		// sets would be dropped by the first apply.
		{"carried-over key lost", `
image: flink:2.2.1
flinkVersion: v2_2
flinkConfiguration:
  fs.s3a.aws.credentials.provider: ` + flinkconf.IRSACredentialsProvider + `
  execution.checkpointing.dir: s3://acme/cp
  execution.state-recovery.claim-mode: claim
` + plugin, []string{`error: spec.flinkConfiguration holds settings the provider manages but cannot carry over as they are: ` +
			`execution.state-recovery.claim-mode = "claim" would be removed`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := ReadLive(live(t, c.spec), Recorded{}, true, nil)
			got := problems(o)
			if len(got) != len(c.want) {
				t.Fatalf("problems %q, want %q", got, c.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], c.want[i]) {
					t.Errorf("problem %d: %q, want %q...", i, got[i], c.want[i])
				}
			}
			if o.Failed() != (o.Import == nil) {
				t.Errorf("failed %v with import %v", o.Failed(), o.Import)
			}
			for _, p := range o.Problems {
				if p.Error && (p.Advice == "" || !strings.HasSuffix(p.Advice, ".")) {
					t.Errorf("error %q says not what to do: %q", p.Detail, p.Advice)
				}
				if !p.Error && !strings.Contains(p.Detail, "FlinkDeployment ns/orders") {
					t.Errorf("warning %q does not name the object: %s", p.Summary, p.Detail)
				}
			}
		})
	}
}

// The flink_version warning says what the object says and what was
// assumed; secrets go to the sensitive map, the Secrets' names stay plain.
func TestReadLive_importDetails(t *testing.T) {
	o := ReadLive(live(t, `
image: registry.example/flink-jobs:7
flinkVersion: v2_2
flinkConfiguration:
  execution.checkpointing.dir: s3://acme/cp
  metrics.reporter.dd.apikey: k3y
  kubernetes.secrets: dd-key:/opt/secrets
job: {jarURI: "local:///opt/flink/job.jar", upgradeMode: stateless, parallelism: 1}
`), Recorded{}, true, nil)
	if o.Import == nil {
		t.Fatalf("problems %q", problems(o))
	}
	newest, _ := flinkconf.NewestPatch("2.2")
	if v := o.Spec.FlinkVersion; !strings.HasPrefix(v, "2.2.") || v != "2.2."+strconv.Itoa(newest) {
		t.Errorf("flink version %q, want the newest 2.2 release", v)
	}
	if d := o.Problems[0].Detail; !strings.Contains(d, `says flinkVersion v2_2 and image "registry.example/flink-jobs:7"`) ||
		!strings.Contains(d, "imported as "+o.Spec.FlinkVersion) {
		t.Errorf("flink_version warning: %s", d)
	}
	if !reflect.DeepEqual(o.Import.Secret, map[string]string{"metrics.reporter.dd.apikey": "k3y"}) ||
		!reflect.DeepEqual(o.Import.Plain, map[string]string{"kubernetes.secrets": "dd-key:/opt/secrets"}) {
		t.Errorf("secret %v plain %v", o.Import.Secret, o.Import.Plain)
	}
	if o.Import.S3Plugin != flinkconf.S3PluginImage || o.Import.Input.S3Plugin != flinkconf.S3PluginImage {
		t.Errorf("s3_plugin %q (input %q), want image", o.Import.S3Plugin, o.Import.Input.S3Plugin)
	}
}

// An adopted object lacking provider defaults: with them unwritten
// (AbsentDefaults) the inputs keep Flink's, so the configuration derives
// back to the object's and nothing is lost; the pod template without
// fsGroup stays the object's.
func TestReadLive_adoptsWithUnwrittenDefaults(t *testing.T) {
	obj := live(t, `
image: flink:2.2.1
flinkVersion: v2_2
serviceAccount: flink
flinkConfiguration:
  fs.s3a.aws.credentials.provider: `+flinkconf.IRSACredentialsProvider+`
  state.checkpoints.dir: s3://acme/cp
  taskmanager.numberOfTaskSlots: "2"
job: {jarURI: "local:///opt/flink/job.jar", upgradeMode: stateless, parallelism: 2}
taskManager: {resource: {memory: 2048m, cpu: 1}}
podTemplate:
  spec:
    containers:
    - name: flink-main-container
      env: [{name: ENABLE_BUILT_IN_PLUGINS, value: flink-s3-fs-hadoop-2.2.1.jar}]
`)
	unwritten := AbsentDefaults(obj)
	o := ReadLive(obj, Recorded{}, true, unwritten)
	if o.Import == nil {
		t.Fatalf("problems %q", problems(o))
	}
	in := o.Import.Input
	if in.State.Backend != "" || !in.Unwritten[flinkconf.AbsentBackend] || !in.Unwritten[flinkconf.AbsentFSGroup] {
		t.Errorf("input state %+v unwritten %v: Flink's backend and no fsGroup expected", in.State, in.Unwritten)
	}
	again, _ := flinkconf.Derive(in)
	if again = flinkconf.Respell(again, o.Written); !reflect.DeepEqual(again, o.Written) {
		t.Errorf("derived back\n%v\nnot the object's\n%v", again, o.Written)
	}
	if o.Import.PodTemplate != nil {
		t.Errorf("pod_template %q: the template is the provider's additions (fsGroup unwritten)", *o.Import.PodTemplate)
	}
	if o.Import.TaskSlots == nil || *o.Import.TaskSlots != 2 || in.Values[flinkconf.AttrTaskSlots] != "2" {
		t.Errorf("task slots %v / input %q", o.Import.TaskSlots, in.Values[flinkconf.AttrTaskSlots])
	}
	// The same object with the defaults written would change it: Derive
	// adds the backend, so the adoption is the unwritten one.
	written, _ := flinkconf.Derive(ReadLive(obj, Recorded{}, true, nil).Import.Input)
	if _, ok := written[flinkconf.AbsentBackend]; !ok {
		t.Errorf("without unwritten defaults Derive writes no backend: %v", written)
	}
}

// A managed read (not an import) reads only what the state had: blocks
// the configuration leaves out and replicas it does not set stay out, of
// flinkConfiguration only the recorded keys the object holds (a value
// Flink reads the same kept as recorded, a deprecated key read for its
// setting), and a secret changed outside Terraform.
func TestReadLive_managedRead(t *testing.T) {
	obj := live(t, `
image: flink:2.2.1
flinkVersion: v2_2
flinkConfiguration:
  state.checkpoints.dir: s3://acme/cp
  execution.checkpointing.interval: 1 min
  added.by.hand: "x"
  s3.secret-key: rotated
jobManager: {resource: {memory: 2048m, cpu: 1}, replicas: 1}
taskManager: {resource: {memory: 4096m, cpu: 2}}
job: {jarURI: "local:///opt/flink/job.jar", upgradeMode: savepoint, parallelism: 3, savepointRedeployNonce: 2}
`)
	was := Recorded{
		FlinkVersion: "2.2.0", JobManager: true, Job: true,
		Effective: map[string]string{"execution.checkpointing.dir": "s3://acme/cp", "execution.checkpointing.interval": "60s",
			"s3.secret-key": "(sensitive)", "kubernetes.namespace": "ns"},
		Sensitive: map[string]string{"s3.secret-key": "old"},
	}
	o := ReadLive(obj, was, false, nil)
	if len(o.Problems) > 0 || o.Import != nil {
		t.Fatalf("problems %q import %v", problems(o), o.Import)
	}
	if o.Spec.FlinkVersion != "2.2.0" {
		t.Errorf("flink version %q: the state's 2.2.0 agrees with v2_2", o.Spec.FlinkVersion)
	}
	if o.Spec.TaskManager != nil {
		t.Errorf("task manager read though the configuration leaves it out: %+v", o.Spec.TaskManager)
	}
	if jm := o.Spec.JobManager; jm == nil || jm.Replicas != nil {
		t.Errorf("job manager %+v: replicas the configuration does not set are the operator's", jm)
	}
	if j := o.Spec.Job; j == nil || j.Fields["parallelism"] != int64(3) || j.SavepointRedeployNonce == nil || *j.SavepointRedeployNonce != 2 {
		t.Errorf("job %+v", j)
	}
	want := map[string]string{"execution.checkpointing.dir": "s3://acme/cp", "execution.checkpointing.interval": "60s", "s3.secret-key": "rotated"}
	if !reflect.DeepEqual(o.Written, want) {
		t.Errorf("written %v, want %v", o.Written, want)
	}
	if !reflect.DeepEqual(o.Sensitive, map[string]string{"s3.secret-key": "rotated"}) {
		t.Errorf("sensitive %v, want the rotated value", o.Sensitive)
	}
	// Set replicas are read; an unchanged secret leaves the sensitive
	// map as it was (nil).
	was.Replicas, was.Sensitive = true, map[string]string{"s3.secret-key": "rotated"}
	o = ReadLive(obj, was, false, nil)
	if jm := o.Spec.JobManager; jm == nil || jm.Replicas == nil || *jm.Replicas != 1 {
		t.Errorf("job manager %+v: configured replicas are read", jm)
	}
	if o.Sensitive != nil {
		t.Errorf("sensitive %v, want nil (unchanged)", o.Sensitive)
	}
	// An import reads every block.
	if o := ReadLive(obj, Recorded{}, true, nil); o.Spec.TaskManager == nil || o.Spec.JobManager.Replicas == nil {
		t.Errorf("import: task manager %+v job manager %+v", o.Spec.TaskManager, o.Spec.JobManager)
	}
}

// effective_pod_template is the live pod template as canonical JSON, ""
// without one.
func TestReadLive_effectivePod(t *testing.T) {
	o := ReadLive(live(t, "image: flink:2.2.1\nflinkVersion: v2_2\npodTemplate: {spec: {securityContext: {fsGroup: 9999}}}\n"), Recorded{}, false, nil)
	if o.EffectivePod != `{"spec":{"securityContext":{"fsGroup":9999}}}` {
		t.Errorf("effective pod %q", o.EffectivePod)
	}
	if o := ReadLive(live(t, "image: flink:2.2.1\nflinkVersion: v2_2\n"), Recorded{}, false, nil); o.EffectivePod != "" {
		t.Errorf("effective pod %q, want none", o.EffectivePod)
	}
}
