package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// deploymentConfig is the guide's deployment (docs/guides/flink-state-on-eks.md,
// "The deployment") with a 60 s interval; extra goes inside the resource.
func deploymentConfig(ns, image, extra string) string {
	return fmt.Sprintf(`
resource "flinkstate_deployment" "orders" {
  namespace       = %q
  name            = "orders"
  image           = %q
  flink_version   = "2.2.1"
  service_account = "flink-orders"
  identity        = "irsa"
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
    upgrade_mode = "last-state"
  }
  state {
    store_id            = "acme-flink-state/flink/orders"
    backend             = "rocksdb"
    incremental         = true
    checkpoint_interval = "60s"
    num_retained        = 3
  }
%s
}
`, ns, image, extra)
}

func getDeployment(t *testing.T, ns, name string) (*unstructured.Unstructured, error) {
	return testKube(t).Dynamic.Resource(kube.FlinkDeploymentGVR).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
}

// expectLiveDeployment reads the object from the API server.
func expectLiveDeployment(t *testing.T, ns, image string) statecheck.StateCheck {
	return expectAPI(func() error {
		obj, err := getDeployment(t, ns, "orders")
		if err != nil {
			return err
		}
		spec := obj.Object["spec"].(map[string]any)
		if spec["image"] != image || spec["flinkVersion"] != "v2_2" || spec["serviceAccount"] != "flink-orders" || spec["mode"] != "native" {
			return fmt.Errorf("spec %v", spec)
		}
		cfg, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "flinkConfiguration")
		for k, v := range map[string]string{
			"execution.checkpointing.dir":           "s3://acme-flink-state/flink/orders/checkpoints",
			"execution.checkpointing.savepoint-dir": "s3://acme-flink-state/flink/orders/savepoints",
			"high-availability.storageDir":          "s3://acme-flink-state/flink/orders/ha",
			"high-availability.type":                flinkconf.KubernetesHAFactory,
			"fs.s3a.aws.credentials.provider":       flinkconf.IRSACredentialsProvider,
			"state.backend.type":                    "rocksdb",
			"execution.checkpointing.interval":      "60s",
			"taskmanager.numberOfTaskSlots":         "2",
		} {
			if cfg[k] != v {
				return fmt.Errorf("flinkConfiguration %s = %q, want %q", k, cfg[k], v)
			}
		}
		containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "podTemplate", "spec", "containers")
		main := containers[0].(map[string]any)
		if main["name"] != flinkconf.MainContainer || !strings.Contains(fmt.Sprint(main["env"]), "flink-s3-fs-hadoop-2.2.1.jar") ||
			!strings.Contains(fmt.Sprint(main["volumeMounts"]), "/opt/flink/state") {
			return fmt.Errorf("main container %v", main)
		}
		if fs, _, _ := unstructured.NestedInt64(obj.Object, "spec", "podTemplate", "spec", "securityContext", "fsGroup"); fs != 9999 {
			return fmt.Errorf("fsGroup %d", fs)
		}
		for _, mf := range obj.GetManagedFields() {
			if mf.Manager == kube.FieldManager && mf.Operation == metav1.ManagedFieldsOperationApply {
				return nil
			}
		}
		return fmt.Errorf("not written by server-side apply with field manager %s", kube.FieldManager)
	})
}

const waitRunning = `  wait_for = "running"`

func checkDeploymentGone(t *testing.T, ns string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if _, err := getDeployment(t, ns, "orders"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("FlinkDeployment still exists after destroy (%v)", err)
		}
		return nil
	}
}

func deploymentPlanAction(action plancheck.ResourceActionType) resource.ConfigPlanChecks {
	return resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(depAddr, action)}}
}

// patchDeployment changes the FlinkDeployment as kubectl edit would.
func patchDeployment(t *testing.T, ns, patch string) {
	t.Helper()
	if _, err := testKube(t).Dynamic.Resource(kube.FlinkDeploymentGVR).Namespace(ns).Patch(context.Background(), "orders", ktypes.MergePatchType, []byte(patch),
		metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatalf("patching out of band: %v", err)
	}
}

func TestAccDeployment_basic(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkDeploymentGone(t, ns),
		Steps: []resource.TestStep{
			{
				Config: deploymentConfig(ns, "flink:2.2.1-java17", waitRunning),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(depAddr, tfjsonPath("effective_flink_configuration").AtMapKey("execution.checkpointing.dir"),
						knownString("s3://acme-flink-state/flink/orders/checkpoints")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(depAddr, tfjsonPath("job_state"), knownvalue.StringExact("RUNNING")),
					statecheck.ExpectKnownValue(depAddr, tfjsonPath("lifecycle_state"), knownvalue.StringExact("STABLE")),
					// A JobID the operator generated (ApplicationReconciler.setJobIdIfNecessary).
					statecheck.ExpectKnownValue(depAddr, tfjsonPath("job_id"), knownvalue.StringRegexp(regexpMust(`^[0-9a-f]{32}$`))),
					expectLiveDeployment(t, ns, "flink:2.2.1-java17"),
				},
			},
			{
				// The operator's status, finalizer, label and annotation are there: nothing to change.
				Config:   deploymentConfig(ns, "flink:2.2.1-java17", waitRunning),
				PlanOnly: true,
			},
		},
	})
}

func TestAccDeployment_import(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkDeploymentGone(t, ns),
		Steps: []resource.TestStep{
			{Config: deploymentConfig(ns, "flink:2.2.1-java17", waitRunning)},
			{
				ResourceName:            depAddr,
				ImportState:             true,
				ImportStateId:           exampleImportID(t, "flinkstate_deployment", "data-processing", ns),
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"wait_for", "timeouts"},
			},
		},
	})
}

// A new image: updated in place. In last-state mode the operator's
// upgrade keeps the job id (ApplicationReconciler.setJobIdIfNecessary: a
// last-state deploy keeps it; seen on the real operator 1.15.0:
// TestAccRealOperator_lastStateUpgrade).
func TestAccDeployment_update(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	jobIDKept := statecheck.CompareValue(compare.ValuesSame())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkDeploymentGone(t, ns),
		Steps: []resource.TestStep{
			{
				Config:            deploymentConfig(ns, "flink:2.2.1-java17", waitRunning),
				ConfigStateChecks: []statecheck.StateCheck{jobIDKept.AddStateValue(depAddr, tfjsonPath("job_id"))},
			},
			{
				Config:           deploymentConfig(ns, "flink:2.2.1-java21", waitRunning),
				ConfigPlanChecks: deploymentPlanAction(plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{
					expectLiveDeployment(t, ns, "flink:2.2.1-java21"),
					statecheck.ExpectKnownValue(depAddr, tfjsonPath("job_state"), knownvalue.StringExact("RUNNING")),
					jobIDKept.AddStateValue(depAddr, tfjsonPath("job_id")),
				},
			},
		},
	})
}

// Someone changes a managed key out of band: planned back.
func TestAccDeployment_driftManagedKey(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkDeploymentGone(t, ns),
		Steps: []resource.TestStep{
			{Config: deploymentConfig(ns, "flink:2.2.1-java17", waitRunning)},
			{
				PreConfig: func() {
					patchDeployment(t, ns, `{"spec":{"flinkConfiguration":{"execution.checkpointing.interval":"5 min"}}}`)
				},
				Config:            deploymentConfig(ns, "flink:2.2.1-java17", waitRunning),
				ConfigPlanChecks:  deploymentPlanAction(plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{expectLiveDeployment(t, ns, "flink:2.2.1-java17")},
			},
		},
	})
}

// Someone removes the S3 plugin from the pod template: planned back.
func TestAccDeployment_driftPodTemplate(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkDeploymentGone(t, ns),
		Steps: []resource.TestStep{
			{Config: deploymentConfig(ns, "flink:2.2.1-java17", waitRunning)},
			{
				PreConfig: func() {
					// A merge patch replaces the container list: the plugin env var and the volume mount are gone.
					patchDeployment(t, ns, `{"spec":{"podTemplate":{"spec":{"containers":[{"name":"flink-main-container"}]}}}}`)
				},
				Config:            deploymentConfig(ns, "flink:2.2.1-java17", waitRunning),
				ConfigPlanChecks:  deploymentPlanAction(plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{expectLiveDeployment(t, ns, "flink:2.2.1-java17")},
			},
		},
	})
}

// Deleted out of band (the operator lets go): planned as a create.
func TestAccDeployment_disappears(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkDeploymentGone(t, ns),
		Steps: []resource.TestStep{
			{Config: deploymentConfig(ns, "flink:2.2.1-java17", waitRunning)},
			{
				PreConfig: func() {
					if err := kube.DeleteAndWait(context.Background(), testKube(t).Dynamic, kube.FlinkDeploymentGVR, ns, "orders", 30*time.Second); err != nil {
						t.Fatalf("deleting out of band: %v", err)
					}
				},
				Config:            deploymentConfig(ns, "flink:2.2.1-java17", waitRunning),
				ConfigPlanChecks:  deploymentPlanAction(plancheck.ResourceActionCreate),
				ConfigStateChecks: []statecheck.StateCheck{expectLiveDeployment(t, ns, "flink:2.2.1-java17")},
			},
		},
	})
}

// The API server validates against the operator's CRD; its message reaches the user.
func TestAccDeployment_crdValidationError(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: deploymentConfig(ns, "flink:2.2.1-java17", `  wait_for = "none"
  pod_template = <<-YAML
    spec:
      securityContext:
        runAsGroup: "nine thousand"
  YAML`),
			// A field the plan-time pod template check does not cover: the
			// CRD's schema (the Pod's) still rejects it, and the error names it
			// (a create is a POST: the OpenAPI schema validation's wording).
			ExpectError: errorRE("Applying FlinkDeployment failed", "spec.podTemplate.spec.securityContext.runAsGroup", "must be of type integer"),
		}},
	})
}

func TestDeployment_planTimeChecks(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		replace     [2]string
		extra, want string
	}{
		"unsupported version":    {[2]string{`flink_version   = "2.2.1"`, `flink_version   = "2.3.0"`}, "", "flink_version|Flink 2.3.0 is not supported|1.20.x, 2.0.x, 2.1.x, 2.2.x"},
		"managed key":            {[2]string{}, `  flink_configuration = { "execution.checkpointing.interval" = "5s" }`, `flink_configuration|execution.checkpointing.interval|state.checkpoint_interval`},
		"delete on cancellation": {[2]string{`num_retained        = 3`, `num_retained        = 3` + "\n    externalized_retention = \"DELETE_ON_CANCELLATION\""}, "", "Checkpoints deleted on cancellation|externalized_retention"},
		"savepoint without dir":  {[2]string{`store_id            = "acme-flink-state/flink/orders"`, `checkpoint_dir = "s3://bkt/cp"`}, "", "savepoint"},
		"bad memory":             {[2]string{`memory = "2048m"`, `memory = "two gigs"`}, "", "job_manager.memory|Flink memory size"},
		"bad duration":           {[2]string{`checkpoint_interval = "60s"`, `checkpoint_interval = "every minute"`}, "", "state.checkpoint_interval|duration"},
		"name not DNS-1123":      {[2]string{`name            = "orders"`, `name            = "Orders_V2"`}, "", "name|DNS-1123"},
		"no state location":      {[2]string{`store_id            = "acme-flink-state/flink/orders"`, ``}, "", "store_id|checkpoint_dir"},
		"pod template plugin": {[2]string{}, `  pod_template = <<-YAML
    spec:
      containers:
      - name: flink-main-container
        env:
        - name: ENABLE_BUILT_IN_PLUGINS
          value: flink-gs-fs-hadoop-2.2.1.jar
  YAML`, "pod_template|lacks flink-s3-fs-hadoop-2.2.1.jar"},
	}
	for label, tc := range cases {
		t.Run(label, func(t *testing.T) {
			t.Parallel()
			cfg := deploymentConfig("data", "flink:2.2.1-java17", tc.extra)
			if tc.replace[0] != "" {
				cfg = strings.Replace(cfg, tc.replace[0], tc.replace[1], 1)
			}
			if label == "savepoint without dir" {
				cfg = strings.Replace(cfg, `upgrade_mode = "last-state"`, `upgrade_mode = "savepoint"`, 1)
			}
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testProviderFactories,
				Steps: []resource.TestStep{{
					Config:      cfg,
					PlanOnly:    true,
					ExpectError: errorRE(strings.Split(tc.want, "|")...),
				}},
			})
		})
	}
}

// After an update the operator reports a new status (a savepoint upgrade
// restores into a new job with a new JobID): the plan must leave the status
// attributes unknown, or terraform rejects the apply's result as inconsistent.
func TestAccDeployment_statusChangesOnUpdate(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	savepointMode := func(image string) string {
		return strings.Replace(deploymentConfig(ns, image, `  wait_for = "running"`), `upgrade_mode = "last-state"`, `upgrade_mode = "savepoint"`, 1)
	}
	jobIDChanges := statecheck.CompareValue(compare.ValuesDiffer())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: savepointMode("flink:2.2.1-java17"),
				ConfigStateChecks: []statecheck.StateCheck{
					jobIDChanges.AddStateValue(depAddr, tfjsonPath("job_id")),
				},
			},
			{
				// A new JobID after a savepoint upgrade (and not an empty one).
				Config: savepointMode("flink:2.2.1-java21"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(depAddr, tfjsonPath("job_state"), knownvalue.StringExact("RUNNING")),
					statecheck.ExpectKnownValue(depAddr, tfjsonPath("job_id"), knownvalue.StringRegexp(regexpMust(`^[0-9a-f]{32}$`))),
					jobIDChanges.AddStateValue(depAddr, tfjsonPath("job_id")),
				},
			},
		},
	})
}
