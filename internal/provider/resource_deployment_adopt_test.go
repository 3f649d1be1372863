package provider

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// operatorExamples reads the operator's example objects of one kind, from
// the operator's release-1.15.0 examples/ (testbed.OperatorExamplesDir:
// ../shared/testbed/flink-operator-1.15.0/examples unless
// FLINKSTATE_OPERATOR_FILES names another folder), keyed by file name.
func operatorExamples(t *testing.T, kind string) map[string]*unstructured.Unstructured {
	t.Helper()
	root, err := testbed.FindRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := testbed.OperatorExamplesDir(root)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no operator examples in %s: %v", dir, err)
	}
	out := map[string]*unstructured.Unstructured{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(b), "\n---") {
			var m map[string]any
			if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if m == nil || m["kind"] != kind {
				continue
			}
			out[strings.TrimSuffix(filepath.Base(f), ".yaml")] = &unstructured.Unstructured{Object: m}
		}
	}
	return out
}

// adaptExample makes an operator example fit the provider's scope, and
// nothing else: state paths (file://) move to S3 under the fixture bucket
// (a job without a checkpoint directory gets one),
// the main container enables the S3 plugin of the example's Flink version,
// and an S3 credentials class (IRSA's) is set when none is. Keys, nesting,
// value types, the rest of the pod template and every other field stay.
func adaptExample(t *testing.T, obj *unstructured.Unstructured, ns, name string) {
	t.Helper()
	adaptExampleAs(t, obj, ns, name, true)
}

// adaptExampleAs is adaptExample, with the IRSA class added only when
// credentials is true: without it the object names no credentials class,
// as objects whose jobs get credentials some other way do.
func adaptExampleAs(t *testing.T, obj *unstructured.Unstructured, ns, name string, credentials bool) {
	t.Helper()
	obj.SetNamespace(ns)
	obj.SetName(name)
	spec, _ := obj.Object["spec"].(map[string]any)
	if spec == nil {
		t.Skipf("%s has no spec", name)
	}
	var toS3 func(v any) any
	toS3 = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				x[k] = toS3(e)
			}
		case string:
			if rest, ok := strings.CutPrefix(x, "file:///flink-data/"); ok {
				return "s3://" + fixtureBucket + "/adopt/" + name + "/" + rest
			}
		}
		return v
	}
	for _, k := range []string{"flinkConfiguration", "job"} {
		if v, ok := spec[k]; ok {
			spec[k] = toS3(v)
		}
	}
	cfg, _ := spec["flinkConfiguration"].(map[string]any)
	if cfg == nil {
		cfg = map[string]any{}
		spec["flinkConfiguration"] = cfg
	}
	if flat, _ := flinkdeploy.FlattenConfiguration(cfg); flat != nil {
		if _, _, ok := flinkconf.Lookup(flat, "execution.checkpointing.dir"); !ok {
			// The provider manages jobs whose state is on S3: a job
			// without checkpoints gets a checkpoint directory.
			cfg["execution.checkpointing.dir"] = "s3://" + fixtureBucket + "/adopt/" + name + "/checkpoints"
		}
	}
	if _, ok := cfg["fs.s3a.aws.credentials.provider"]; !ok && credentials {
		cfg["fs.s3a.aws.credentials.provider"] = flinkconf.IRSACredentialsProvider
	}
	enum, _ := spec["flinkVersion"].(string)
	minor := strings.ReplaceAll(strings.TrimPrefix(enum, "v"), "_", ".")
	patches := flinkconf.ReleasedVersions[minor]
	if len(patches) == 0 {
		t.Fatalf("%s: flinkVersion %s is not one the provider manages", name, enum)
	}
	sort.Ints(patches)
	jar := fmt.Sprintf("flink-s3-fs-hadoop-%s.%d.jar", minor, patches[len(patches)-1])
	pod, _ := spec["podTemplate"].(map[string]any)
	if pod == nil {
		pod = map[string]any{}
		spec["podTemplate"] = pod
	}
	ps, _ := pod["spec"].(map[string]any)
	if ps == nil {
		ps = map[string]any{}
		pod["spec"] = ps
	}
	containers, _ := ps["containers"].([]any)
	var main map[string]any
	for _, c := range containers {
		if m, _ := c.(map[string]any); m["name"] == flinkconf.MainContainer {
			main = m
		}
	}
	if main == nil {
		main = map[string]any{"name": flinkconf.MainContainer}
		containers = append(containers, main)
		ps["containers"] = containers
	}
	env, _ := main["env"].([]any)
	main["env"] = append(env, map[string]any{"name": flinkconf.PluginsEnv, "value": jar})
}

// kubectlApply applies obj with the real kubectl (the test bed's pinned
// k8s.io/kubernetes build, built on first use): server-side (field manager
// kubectl, operation Apply) or client-side (a create by
// kubectl-client-side-apply, with the last-applied-configuration
// annotation), as people and CI pipelines do.
func kubectlApply(t *testing.T, obj *unstructured.Unstructured, serverSide bool) *unstructured.Unstructured {
	t.Helper()
	return kubectlApplyGVR(t, kube.FlinkDeploymentGVR, obj, serverSide)
}

var kubectlBin struct {
	once sync.Once
	path string
	err  error
}

func kubectlApplyGVR(t *testing.T, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, serverSide bool) *unstructured.Unstructured {
	t.Helper()
	kubectlBin.once.Do(func() {
		root, err := testbed.FindRoot()
		if err != nil {
			kubectlBin.err = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		defer cancel()
		kubectlBin.path, kubectlBin.err = testbed.Tool(ctx, root, "kubectl")
	})
	if kubectlBin.err != nil {
		t.Fatalf("building kubectl: %v", kubectlBin.err)
	}
	body, err := yaml.Marshal(obj.Object)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), obj.GetName()+".yaml")
	if err := os.WriteFile(file, body, 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"apply", "-f", file}
	if serverSide {
		args = append(args, "--server-side")
	}
	cmd := exec.Command(kubectlBin.path, args...)
	cmd.Env = os.Environ() // KUBECONFIG: the test bed's, or the external target's
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	live, err := testKube(t).Dynamic.Resource(gvr).Namespace(obj.GetNamespace()).Get(context.Background(), obj.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return live
}

// Every operator example FlinkDeployment of an application cluster (one
// with spec.job: flinkstate_deployment manages an application's job and its
// state; a session cluster's jobs are FlinkSessionJobs, outside its scope),
// applied as kubectl applies it and adapted only to the provider's scope
// (a third of them without the IRSA class, as the examples have none),
// imports with an import block and -generate-config-out: the generated
// configuration is valid as written and the import plans no change.
func TestAccDeployment_adoptOperatorExamples(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	ns := testNamespace(t)
	examples := operatorExamples(t, "FlinkDeployment")
	for n, obj := range examples {
		// canary.yaml's FlinkDeployment has no spec at all (the operator's
		// health-check canary): no application either.
		if spec, _ := obj.Object["spec"].(map[string]any); spec["job"] == nil {
			delete(examples, n)
		}
	}
	if len(examples) < 14 {
		t.Fatalf("found %d example FlinkDeployments, want the operator's 14", len(examples))
	}
	names := slices.Sorted(maps.Keys(examples))
	for i, n := range names {
		obj := examples[n]
		name := strings.ReplaceAll(strings.ReplaceAll(n, "_", "-"), ".", "-")
		if len(name) > 40 {
			name = name[:40]
		}
		name = strings.TrimRight(name, "-")
		serverSide := i%2 == 0
		t.Run(n, func(t *testing.T) {
			// A third of them keep the example's lack of a credentials
			// class: it imports with identity unset and plans no change.
			adaptExampleAs(t, obj, ns, name, i%3 != 0)
			kubectlApply(t, obj, serverSide)
			step := resource.TestStep{
				Config:          "# adopting " + n + "\n",
				ResourceName:    "flinkstate_deployment.adopted",
				ImportState:     true,
				ImportStateKind: resource.ImportBlockWithID,
				ImportStateId:   ns + "/" + name,
				GenerateConfig:  true,
			}
			if n == "flink-tls-example_basic-secure" {
				// Its keystore passwords are imported as sensitive, and
				// Terraform writes a sensitive value as null in generated
				// configuration: the plan removes exactly those keys until
				// the user sets them, and nothing else.
				step.ExpectNonEmptyPlan = true
				step.ImportPlanChecks.PreApply = []plancheck.PlanCheck{onlySecretsChange{"flinkstate_deployment.adopted"}}
			}
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testProviderFactories,
				Steps:                    []resource.TestStep{step},
			})
		})
	}
}

// onlySecretsChange: the planned change of addr touches only the sensitive
// configuration (and the secrets' keys in the effective configuration).
type onlySecretsChange struct{ addr string }

func (c onlySecretsChange) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address != c.addr {
			continue
		}
		before, _ := rc.Change.Before.(map[string]any)
		after, _ := rc.Change.After.(map[string]any)
		var changed []string
		for k, b := range before {
			if fmt.Sprint(b) == fmt.Sprint(after[k]) || k == "job_id" || k == "job_state" || k == "lifecycle_state" {
				continue
			}
			switch k {
			case "sensitive_flink_configuration":
				continue
			case "effective_flink_configuration":
				bm, _ := b.(map[string]any)
				am, _ := after[k].(map[string]any)
				for key, v := range bm {
					if fmt.Sprint(am[key]) != fmt.Sprint(v) && !flinkconf.IsSensitiveKey(key) {
						changed = append(changed, k+"."+key)
					}
				}
				continue
			}
			changed = append(changed, k)
		}
		if len(changed) > 0 {
			resp.Error = fmt.Errorf("%s: the import plan changes %v besides the secrets", c.addr, changed)
		}
		return
	}
	resp.Error = fmt.Errorf("no planned change for %s", c.addr)
}

// An object the provider cannot represent is not imported: the import fails
// naming the setting and what to do, and nothing is written to state. The
// operator's basic example keeps no state anywhere (no checkpoint
// directory) and its state paths in basic-checkpoint-ha are on a local
// volume (file://).
func TestAccDeployment_adoptRefusesUnrepresentable(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	ns := testNamespace(t)
	examples := operatorExamples(t, "FlinkDeployment")
	basic := examples["basic"]
	basic.SetNamespace(ns)
	kubectlApply(t, basic, true)
	local := examples["basic-checkpoint-ha"]
	local.SetNamespace(ns)
	kubectlApply(t, local, false)
	none := examples["basic-ingress"]
	adaptExample(t, none, ns, "ha-none")
	none.Object["spec"].(map[string]any)["flinkConfiguration"].(map[string]any)["high-availability.type"] = "NONE"
	kubectlApply(t, none, true)
	for _, c := range []struct{ name, want string }{
		{"basic-example", "sets no checkpoint directory"},
		// A managed key the import cannot carry over is named, not dropped.
		{"ha-none", `high-availability.type = "NONE" would be removed`},
		{"basic-checkpoint-ha-example", `state.checkpoints.dir is "file:///flink-data/checkpoints": the provider keeps state on S3 only`},
	} {
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: testProviderFactories,
			Steps: []resource.TestStep{{
				Config:          "# adopting " + c.name + "\n",
				ResourceName:    "flinkstate_deployment.adopted",
				ImportState:     true,
				ImportStateKind: resource.ImportBlockWithID,
				ImportStateId:   ns + "/" + c.name,
				GenerateConfig:  true,
				ExpectError:     errorRE("Importing FlinkDeployment "+ns+"/"+c.name, c.want, "nothing was imported"),
			}},
		})
	}
}

// adoptedHAConfig is the configuration a user writes by hand to match the
// operator's basic-checkpoint-ha example (adapted to S3), with extra lines.
func adoptedHAConfig(ns, name, extraConf, extra string) string {
	return fmt.Sprintf(`
resource "flinkstate_deployment" "adopted" {
  namespace       = %[1]q
  name            = %[2]q
  image           = "flink:2.2"
  flink_version   = "2.2.1"
  service_account = "flink"
  identity        = "irsa"
  flink_configuration = {
%[3]s
  }
  pod_template = jsonencode({
    spec = {
      containers = [{
        name         = "flink-main-container"
        volumeMounts = [{ mountPath = "/flink-data", name = "flink-volume" }]
      }]
      volumes = [{ name = "flink-volume", hostPath = { path = "/tmp/flink", type = "Directory" } }]
    }
  })
  job_manager {
    memory = "2048m"
    cpu    = 1
  }
  task_manager {
    memory     = "2048m"
    cpu        = 1
    task_slots = 2
  }
  job {
    jar_uri      = "local:///opt/flink/examples/streaming/StateMachineExample.jar"
    parallelism  = 2
    upgrade_mode = "savepoint"
    state        = "running"
  }
  state {
    store_id = "acme-flink-state/adopt/%[2]s"
  }
%[4]s
}
`, ns, name, extraConf, extra)
}

// Adopting a running job written by kubectl apply (client-side), with the
// configuration a user writes by hand: the import plans nothing; an update
// that changes nothing in the spec leaves the generation as it was (no
// restart) and makes the provider the only owner of its fields; a setting
// then removed from the configuration is removed from the object, and
// nothing the provider does not manage (a field of the job it does not
// model, the pod template's volume) changes.
func TestAccDeployment_adoptTakesOwnership(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	name := "ha-adopt"
	obj := operatorExamples(t, "FlinkDeployment")["basic-checkpoint-ha"]
	adaptExample(t, obj, ns, name)
	gen0 := kubectlApply(t, obj, false).GetGeneration()
	format := `    "kubernetes.operator.savepoint.format.type" = "NATIVE"`
	live := func() *unstructured.Unstructured {
		o, err := getDeployment(t, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:             adoptedHAConfig(ns, name, format, ""),
				ResourceName:       "flinkstate_deployment.adopted",
				ImportState:        true,
				ImportStateId:      ns + "/" + name,
				ImportStatePersist: true,
			},
			{
				// The hand-written configuration matches: nothing to do.
				Config:   adoptedHAConfig(ns, name, format, ""),
				PlanOnly: true,
			},
			{
				// An update that changes nothing in the spec.
				Config: adoptedHAConfig(ns, name, format, "  timeouts {\n    update = \"9m\"\n  }"),
				Check: func(*terraform.State) error {
					o := live()
					if o.GetGeneration() != gen0 {
						return fmt.Errorf("generation %d after an update that changes nothing, want %d (the operator would restart the job)", o.GetGeneration(), gen0)
					}
					for _, e := range o.GetManagedFields() {
						if e.Manager == "kubectl-client-side-apply" && strings.Contains(string(e.FieldsV1.Raw), "kubernetes.operator.savepoint.format.type") {
							return fmt.Errorf("kubectl-client-side-apply still co-owns a key the provider manages: %s", e.FieldsV1.Raw)
						}
					}
					return nil
				},
			},
			{
				// The setting removed from the configuration is removed from the object.
				Config: adoptedHAConfig(ns, name, "", "  timeouts {\n    update = \"9m\"\n  }"),
				Check: func(*terraform.State) error {
					o := live()
					cfg, _, _ := unstructured.NestedMap(o.Object, "spec", "flinkConfiguration")
					if _, ok := cfg["kubernetes.operator.savepoint.format.type"]; ok {
						return fmt.Errorf("kubernetes.operator.savepoint.format.type still in the object after its removal: %v", cfg)
					}
					if st, _ := cfg["state"].(map[string]any); st["checkpoints.dir"] != "s3://"+fixtureBucket+"/adopt/"+name+"/checkpoints" {
						return fmt.Errorf("the nested state.checkpoints.dir was rewritten: %v", cfg)
					}
					if n, ok, _ := unstructured.NestedInt64(o.Object, "spec", "job", "savepointTriggerNonce"); !ok || n != 0 {
						return fmt.Errorf("spec.job.savepointTriggerNonce, which the provider does not manage, changed: %v %v", n, ok)
					}
					vols, _, _ := unstructured.NestedSlice(o.Object, "spec", "podTemplate", "spec", "volumes")
					if len(vols) != 1 || !strings.Contains(fmt.Sprint(vols), "hostPath") {
						return fmt.Errorf("the pod template's volumes changed: %v", vols)
					}
					if o.GetGeneration() != gen0+1 {
						return fmt.Errorf("generation %d, want %d: one spec change", o.GetGeneration(), gen0+1)
					}
					return nil
				},
			},
		},
	})
}

// A secret in sensitive_flink_configuration reaches the object but never the
// plan's effective configuration; changed outside Terraform it is planned
// back.
func TestAccDeployment_sensitiveConfiguration(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	secret := `  sensitive_flink_configuration = { "security.ssl.keystore-password" = "s3cr3t" }` + "\n" + waitRunning
	key := "security.ssl.keystore-password"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkDeploymentGone(t, ns),
		Steps: []resource.TestStep{
			{
				Config: deploymentConfig(ns, "flink:2.2.1-java17", secret),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(depAddr, tfjsonPath("effective_flink_configuration").AtMapKey(key), knownString(flinkconf.SensitivePlaceholder)),
					expectAPI(func() error {
						o, err := getDeployment(t, ns, "orders")
						if err != nil {
							return err
						}
						if v, _, _ := unstructured.NestedString(o.Object, "spec", "flinkConfiguration", key); v != "s3cr3t" {
							return fmt.Errorf("%s in the object is %q, want the secret", key, v)
						}
						return nil
					}),
				},
			},
			{
				PreConfig: func() {
					patchDeployment(t, ns, `{"spec":{"flinkConfiguration":{"security.ssl.keystore-password":"changed"}}}`)
				},
				Config:           deploymentConfig(ns, "flink:2.2.1-java17", secret),
				ConfigPlanChecks: deploymentPlanAction(plancheck.ResourceActionUpdate),
			},
		},
	})
}

// The operator's pod-template example, applied server-side by kubectl and
// adopted with a hand-written configuration: the first plan is empty; an
// update that changes nothing in the spec keeps the generation; removing
// task_slots removes the key; the sidecar, the volumes and the JobManager's
// own pod template (a field the provider does not model) stay as they were.
func TestAccDeployment_adoptKeepsPodTemplate(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	name := "pod-template-adopt"
	obj := operatorExamples(t, "FlinkDeployment")["pod-template"]
	adaptExample(t, obj, ns, name)
	applied := kubectlApply(t, obj, true)
	gen0 := applied.GetGeneration()
	jmPod0, _, _ := unstructured.NestedMap(applied.Object, "spec", "jobManager", "podTemplate")
	config := func(taskSlots, extra string) string {
		return fmt.Sprintf(`
resource "flinkstate_deployment" "adopted" {
  namespace       = %[1]q
  name            = %[2]q
  image           = "flink:2.2"
  flink_version   = "2.2.1"
  service_account = "flink"
  identity        = "irsa"
  pod_template = jsonencode({
    spec = {
      containers = [
        {
          name = "flink-main-container"
          volumeMounts = [
            { mountPath = "/opt/flink/log", name = "flink-logs" },
            { mountPath = "/opt/flink/downloads", name = "downloads" },
          ]
        },
        {
          name    = "fluentbit"
          image   = "fluent/fluent-bit:1.9.6-debug"
          command = ["sh", "-c", "/fluent-bit/bin/fluent-bit -i tail -p path=/flink-logs/*.log -p multiline.parser=java -o stdout"]
          volumeMounts = [{ mountPath = "/flink-logs", name = "flink-logs" }]
        },
      ]
      volumes = [
        { name = "flink-logs", emptyDir = {} },
        { name = "downloads", emptyDir = {} },
      ]
    }
  })
  job_manager {
    memory = "2048m"
    cpu    = 1
  }
  task_manager {
    memory = "2048m"
    cpu    = 1
%[3]s
  }
  job {
    jar_uri     = "local:///opt/flink/downloads/flink-examples-streaming.jar"
    entry_class = "org.apache.flink.streaming.examples.statemachine.StateMachineExample"
    parallelism = 2
  }
  state {
    checkpoint_dir = "s3://acme-flink-state/adopt/%[2]s/checkpoints"
  }
%[4]s
}
`, ns, name, taskSlots, extra)
	}
	slots := "    task_slots = 2"
	timeouts := "  timeouts {\n    update = \"9m\"\n  }"
	live := func() (*unstructured.Unstructured, error) { return getDeployment(t, ns, name) }
	keptUnmanaged := func(o *unstructured.Unstructured) error {
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "podTemplate", "spec", "containers")
		if len(containers) != 2 || !strings.Contains(fmt.Sprint(containers), "fluentbit") {
			return fmt.Errorf("the sidecar is gone: containers %v", containers)
		}
		if vols, _, _ := unstructured.NestedSlice(o.Object, "spec", "podTemplate", "spec", "volumes"); len(vols) != 2 {
			return fmt.Errorf("volumes changed: %v", vols)
		}
		if jm, _, _ := unstructured.NestedMap(o.Object, "spec", "jobManager", "podTemplate"); fmt.Sprint(jm) != fmt.Sprint(jmPod0) {
			return fmt.Errorf("spec.jobManager.podTemplate changed: %v, was %v", jm, jmPod0)
		}
		return nil
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:             config(slots, ""),
				ResourceName:       "flinkstate_deployment.adopted",
				ImportState:        true,
				ImportStateId:      ns + "/" + name,
				ImportStatePersist: true,
			},
			{Config: config(slots, ""), PlanOnly: true},
			{
				Config: config(slots, timeouts),
				Check: func(*terraform.State) error {
					o, err := live()
					if err != nil {
						return err
					}
					if o.GetGeneration() != gen0 {
						return fmt.Errorf("generation %d after an update that changes nothing, want %d", o.GetGeneration(), gen0)
					}
					return keptUnmanaged(o)
				},
			},
			{
				Config: config("", timeouts),
				Check: func(*terraform.State) error {
					o, err := live()
					if err != nil {
						return err
					}
					if _, ok, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "flinkConfiguration", "taskmanager.numberOfTaskSlots"); ok {
						return fmt.Errorf("taskmanager.numberOfTaskSlots still in the object after task_slots was removed")
					}
					if o.GetGeneration() != gen0+1 {
						return fmt.Errorf("generation %d, want %d", o.GetGeneration(), gen0+1)
					}
					return keptUnmanaged(o)
				},
			},
			{
				// A new name replaces the adopted object: the new one is the
				// provider's own, with every default written (what the import
				// left unwritten was the old object's), and plans no change
				// afterwards.
				Config: strings.Replace(config("", timeouts), `name            = "`+name+`"`, `name            = "`+name+`-2"`, 1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flinkstate_deployment.adopted", plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: func(*terraform.State) error {
					o, err := getDeployment(t, ns, name+"-2")
					if err != nil {
						return err
					}
					if m, _, _ := unstructured.NestedString(o.Object, "spec", "mode"); m != "native" {
						return fmt.Errorf("spec.mode %q on the new object, want the provider's native", m)
					}
					if _, ok, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "podTemplate", "spec", "securityContext", "fsGroup"); !ok {
						return fmt.Errorf("no fsGroup on the new object")
					}
					return nil
				},
			},
		},
	})
}

// runExampleDeployment runs the job the example snapshots name
// (jobReference example-deployment): the operator's basic-checkpoint-ha
// example, adapted, under the operator model.
func runExampleDeployment(t *testing.T, ns string) {
	t.Helper()
	dep := operatorExamples(t, "FlinkDeployment")["basic-checkpoint-ha"]
	adaptExample(t, dep, ns, "example-deployment")
	kubectlApply(t, dep, true)
	if _, err := kube.WaitDeployment(context.Background(), testKube(t).Dynamic, ns, "example-deployment", "running", time.Minute, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
}

// adaptSnapshotExample moves an example snapshot's path to S3 and returns
// the object's name.
func adaptSnapshotExample(obj *unstructured.Unstructured, ns, example string) string {
	name := strings.ReplaceAll(strings.TrimPrefix(example, "snapshot_"), "_", "-")
	obj.SetNamespace(ns)
	obj.SetName(name)
	if sp, ok, _ := unstructured.NestedString(obj.Object, "spec", "savepoint", "path"); ok {
		rest := strings.TrimPrefix(strings.TrimPrefix(sp, "file://"), "/flink-data/")
		_ = unstructured.SetNestedField(obj.Object, "s3://"+fixtureBucket+"/adopt/"+rest, "spec", "savepoint", "path")
	}
	return name
}

// applySnapshotExample applies it as kubectl does and waits until a
// snapshot of a job has completed.
func applySnapshotExample(t *testing.T, obj *unstructured.Unstructured, serverSide bool) {
	t.Helper()
	kubectlApplyGVR(t, kube.FlinkStateSnapshotGVR, obj, serverSide)
	if _, ok, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "jobReference"); ok {
		st, err := kube.WaitSnapshot(context.Background(), testKube(t).Dynamic, obj.GetNamespace(), obj.GetName(), time.Minute, 100*time.Millisecond)
		if err != nil || st.Path == "" {
			t.Fatalf("snapshot %s: %+v, %v", obj.GetName(), st, err)
		}
	}
}

// A last-state job without checkpoint_interval shows the operator's
// interval (5 min) in effective_flink_configuration; setting
// checkpoint_interval = "5m" afterwards is planned and applied alike (the
// plan spells derived keys against what the object holds, not against what
// the operator adds), and nothing is left to plan.
func TestAccDeployment_intervalLikeOperatorDefault(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	without := strings.Replace(deploymentConfig(ns, "flink:2.2.1-java17", waitRunning), "    checkpoint_interval = \"60s\"\n", "", 1)
	with := strings.Replace(deploymentConfig(ns, "flink:2.2.1-java17", waitRunning), `checkpoint_interval = "60s"`, `checkpoint_interval = "5m"`, 1)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkDeploymentGone(t, ns),
		Steps: []resource.TestStep{
			{
				Config: without,
				ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue(depAddr,
					tfjsonPath("effective_flink_configuration").AtMapKey("execution.checkpointing.interval"), knownString("5 min"))},
			},
			{
				Config: with,
				ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue(depAddr,
					tfjsonPath("effective_flink_configuration").AtMapKey("execution.checkpointing.interval"), knownString("5m"))},
			},
		},
	})
}
