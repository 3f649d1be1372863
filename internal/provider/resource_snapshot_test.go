package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

func snapshotConfig(ns, body string) string {
	return fmt.Sprintf(`
resource "flinkstate_snapshot" "test" {
  namespace       = %q
  deployment_name = "orders"
%s
}
`, ns, body)
}

func getSnapshot(t *testing.T, ns, name string) (*unstructured.Unstructured, error) {
	return testKube(t).Dynamic.Resource(kube.FlinkStateSnapshotGVR).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
}

func checkNoSnapshots(t *testing.T, ns string) func(*terraform.State) error {
	return func(*terraform.State) error {
		list, err := testKube(t).Dynamic.Resource(kube.FlinkStateSnapshotGVR).Namespace(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return err
		}
		if n := len(list.Items); n != 0 {
			return fmt.Errorf("%d FlinkStateSnapshots left in %s after destroy", n, ns)
		}
		return nil
	}
}

const snapAddr = "flinkstate_snapshot.test"

const snapSavepointDir = "s3://acme-flink-state/flink/orders/savepoints"

// snapshotJob is a namespace with the operator model and a running job
// "orders" that writes its savepoints to snapSavepointDir.
func snapshotJob(t *testing.T) string {
	t.Helper()
	ns := testNamespace(t)
	startOperator(t, ns)
	runningJob(t, ns, "orders", map[string]any{"execution.checkpointing.savepoint-dir": snapSavepointDir})
	return ns
}

// snapshotBeforeUpgrade is a savepoint triggered by the image (triggers =
// { image = ... }).
func snapshotBeforeUpgrade(ns, image, extra string) string {
	return snapshotConfig(ns, fmt.Sprintf(`  name_prefix = "orders-before-upgrade-"
  triggers    = { image = %q }
%s`, image, extra))
}

func TestAccSnapshot_basic(t *testing.T) {
	skipUnlessAcc(t)
	ns := snapshotJob(t)
	var name string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkNoSnapshots(t, ns),
		Steps: []resource.TestStep{{
			Config: snapshotBeforeUpgrade(ns, "flink:2.2.1-java17", ""),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(snapAddr, tfjsonPath("state"), knownvalue.StringExact("COMPLETED")),
				statecheck.ExpectKnownValue(snapAddr, tfjsonPath("name"), knownvalue.StringRegexp(regexpMust(`^orders-before-upgrade-[a-z0-9]{5}$`))),
				statecheck.ExpectKnownValue(snapAddr, tfjsonPath("path"), knownvalue.StringRegexp(regexpMust(`^`+snapSavepointDir+`/savepoint-[0-9a-f]{6}-[0-9a-f]{12}$`))),
				statecheck.ExpectKnownValue(snapAddr, tfjsonPath("result_timestamp"), knownvalue.NotNull()),
				statecheck.ExpectKnownValue(snapAddr, tfjsonPath("error"), knownvalue.Null()),
				recordAttr(snapAddr, "name", &name),
				expectAPI(func() error {
					obj, err := getSnapshot(t, ns, name)
					if err != nil {
						return err
					}
					// The spec the operator sees: jobReference, a finite backoff, and disposeOnDelete written as false.
					spec := obj.Object["spec"].(map[string]any)
					sp := spec["savepoint"].(map[string]any)
					if sp["disposeOnDelete"] != false || sp["formatType"] != "CANONICAL" || spec["backoffLimit"] != int64(1) {
						return fmt.Errorf("spec %v", spec)
					}
					if ref := spec["jobReference"].(map[string]any); ref["kind"] != "FlinkDeployment" || ref["name"] != "orders" {
						return fmt.Errorf("jobReference %v", ref)
					}
					return nil
				}),
			},
		}},
	})
}

func TestAccSnapshot_import(t *testing.T) {
	skipUnlessAcc(t)
	ns := snapshotJob(t)
	var name string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkNoSnapshots(t, ns),
		Steps: []resource.TestStep{
			{
				Config:            snapshotBeforeUpgrade(ns, "flink:2.2.1-java17", ""),
				ConfigStateChecks: []statecheck.StateCheck{recordAttr(snapAddr, "name", &name)},
			},
			{
				ResourceName: snapAddr,
				ImportState:  true,
				ImportStateIdFunc: func(*terraform.State) (string, error) {
					return exampleImportID(t, "flinkstate_snapshot", "data-processing", ns, "orders-adhoc-x7k2p", name), nil
				},
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"}, // triggers come back from the object
			},
		},
	})
}

// dispose_on_delete changes in place on the same object.
func TestAccSnapshot_updateDisposeOnDelete(t *testing.T) {
	skipUnlessAcc(t)
	ns := snapshotJob(t)
	var name string
	sameName := statecheck.CompareValue(compare.ValuesSame())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkNoSnapshots(t, ns),
		Steps: []resource.TestStep{
			{
				Config:            snapshotBeforeUpgrade(ns, "flink:2.2.1-java17", ""),
				ConfigStateChecks: []statecheck.StateCheck{sameName.AddStateValue(snapAddr, tfjsonPath("name"))},
			},
			{
				Config: snapshotBeforeUpgrade(ns, "flink:2.2.1-java17", "  dispose_on_delete = true"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(snapAddr, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					sameName.AddStateValue(snapAddr, tfjsonPath("name")),
					recordAttr(snapAddr, "name", &name),
					expectAPI(func() error {
						obj, err := getSnapshot(t, ns, name)
						if err != nil {
							return err
						}
						if d, _, _ := unstructured.NestedBool(obj.Object, "spec", "savepoint", "disposeOnDelete"); !d {
							return fmt.Errorf("disposeOnDelete not updated on %s", name)
						}
						return nil
					}),
				},
			},
		},
	})
}

// A new image in triggers: a new snapshot; the old object is deleted (after its finalizer).
func TestAccSnapshot_replaceOnTriggers(t *testing.T) {
	skipUnlessAcc(t)
	ns := snapshotJob(t)
	var firstName string
	nameChanges := statecheck.CompareValue(compare.ValuesDiffer())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkNoSnapshots(t, ns),
		Steps: []resource.TestStep{
			{
				Config: snapshotBeforeUpgrade(ns, "flink:2.2.1-java17", ""),
				ConfigStateChecks: []statecheck.StateCheck{
					recordAttr(snapAddr, "name", &firstName),
					nameChanges.AddStateValue(snapAddr, tfjsonPath("name")),
				},
			},
			{
				Config: snapshotBeforeUpgrade(ns, "flink:2.2.1-java21", ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(snapAddr, plancheck.ResourceActionDestroyBeforeCreate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(snapAddr, tfjsonPath("state"), knownvalue.StringExact("COMPLETED")),
					nameChanges.AddStateValue(snapAddr, tfjsonPath("name")),
					expectAPI(func() error {
						if _, err := getSnapshot(t, ns, firstName); !apierrors.IsNotFound(err) {
							return fmt.Errorf("the replaced snapshot %s still exists (%v)", firstName, err)
						}
						return nil
					}),
				},
			},
		},
	})
}

// Deleted out of band: dropped from state and planned (and taken) again.
func TestAccSnapshot_disappears(t *testing.T) {
	skipUnlessAcc(t)
	ns := snapshotJob(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkNoSnapshots(t, ns),
		Steps: []resource.TestStep{
			{Config: snapshotBeforeUpgrade(ns, "flink:2.2.1-java17", "")},
			{
				PreConfig: func() {
					list, _ := testKube(t).Dynamic.Resource(kube.FlinkStateSnapshotGVR).Namespace(ns).List(context.Background(), metav1.ListOptions{})
					for _, o := range list.Items {
						if err := kube.DeleteAndWait(context.Background(), testKube(t).Dynamic, kube.FlinkStateSnapshotGVR, ns, o.GetName(), 30e9); err != nil {
							t.Fatalf("deleting out of band: %v", err)
						}
					}
				},
				Config: snapshotBeforeUpgrade(ns, "flink:2.2.1-java17", ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(snapAddr, plancheck.ResourceActionCreate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(snapAddr, tfjsonPath("state"), knownvalue.StringExact("COMPLETED")),
				},
			},
		},
	})
}

func TestAccSnapshot_operatorFailures(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	cases := map[string]struct {
		setup func(t *testing.T, ns string)
		want  []string
	}{
		// Flink fails the savepoint twice: failures exceed backoff_limit 1
		// (FlinkStateSnapshotController.updateErrorStatus).
		kube.SnapshotFailed: {
			setup: func(t *testing.T, ns string) {
				startOperator(t, ns).SetFaults(func(f *testbed.Faults) {
					f.SavepointFailures, f.SavepointError = 2, "Checkpoint expired before completing."
				})
				runningJob(t, ns, "orders", map[string]any{"execution.checkpointing.savepoint-dir": "s3://acme-flink-state/flink/orders/savepoints"})
			},
			want: []string{"is FAILED after 2 failure(s)", "Checkpoint expired before completing", "ReconciliationException"},
		},
		// The FlinkDeployment "orders" exists but its job does not run:
		// the operator abandons the snapshot
		// (FlinkStateSnapshotUtils.abandonSnapshotIfJobNotRunning). A
		// missing FlinkDeployment is refused instead, without a status
		// (TestAccSnapshot_targetMissingFailsAtOnce).
		kube.SnapshotAbandoned: {
			setup: func(t *testing.T, ns string) {
				startOperator(t, ns).SetFaults(func(f *testbed.Faults) { f.JobNeverRuns = true })
				obj := &unstructured.Unstructured{Object: map[string]any{
					"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkDeployment",
					"metadata": map[string]any{"name": "orders", "namespace": ns},
					"spec": map[string]any{"image": "flink:2.2.1-java17", "flinkVersion": "v2_2", "serviceAccount": "flink",
						"flinkConfiguration": map[string]any{"execution.checkpointing.savepoint-dir": "s3://acme-flink-state/flink/orders/savepoints"},
						"jobManager":         map[string]any{"resource": map[string]any{"memory": "2048m", "cpu": int64(1)}},
						"taskManager":        map[string]any{"resource": map[string]any{"memory": "2048m", "cpu": int64(1)}},
						"job":                map[string]any{"jarURI": "local:///opt/flink/examples/streaming/StateMachineExample.jar", "upgradeMode": "stateless", "parallelism": int64(1)}},
				}}
				if _, err := testKube(t).Dynamic.Resource(kube.FlinkDeploymentGVR).Namespace(ns).Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			},
			want: []string{"is ABANDONED after 0 failure(s)", "Secondary resource orders (FlinkDeployment) for savepoint", "is not running"},
		},
	}
	for state, tc := range cases {
		t.Run(state, func(t *testing.T) {
			t.Parallel()
			ns := testNamespace(t)
			tc.setup(t, ns)
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testProviderFactories,
				CheckDestroy:             checkNoSnapshots(t, ns),
				Steps: []resource.TestStep{{
					Config:      snapshotConfig(ns, ""),
					ExpectError: errorRE(append([]string{"Snapshot did not complete"}, tc.want...)...),
				}},
			})
		})
	}
}

func TestSnapshot_invalidInput(t *testing.T) {
	t.Parallel()
	cases := map[string]struct{ body, want string }{
		"path without already_exists": {`  path = "s3://acme-flink-state/sp/savepoint-1"`, "path needs already_exists"},
		"already_exists without path": {`  already_exists = true`, "already_exists needs path"},
		"no deployment_name":          {"-", "deployment_name is required"},
		"savepoint options on checkpoint": {`  type = "checkpoint"
  format_type = "NATIVE"`, "format_type applies to savepoints only"},
		"infinite backoff":  {`  backoff_limit = -1`, "backoff_limit"},
		"bad format":        {`  format_type = "UNKNOWN"`, "format_type"},
		"target dir not s3": {`  target_dir = "/tmp/savepoints"`, "target_dir"},
	}
	for label, tc := range cases {
		t.Run(label, func(t *testing.T) {
			t.Parallel()
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testProviderFactories,
				Steps: []resource.TestStep{{
					Config:      strings.Replace(snapshotConfig("data", tc.body), "  deployment_name = \"orders\"\n-", "", 1),
					PlanOnly:    true,
					ExpectError: errorRE(strings.Split(tc.want, "|")...),
				}},
			})
		})
	}
}

// An upgrade flow in one configuration: a savepoint of the running
// job, taken because the image changes, and its path as the starting point
// of the upgraded deployment.
func TestAccSnapshot_upgradeFlow(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	cfg := deploymentConfig(ns, "flink:2.2.1-java17", `  wait_for = "running"`) + fmt.Sprintf(`
resource "flinkstate_snapshot" "before_upgrade" {
  namespace       = %[1]q
  deployment_name = flinkstate_deployment.orders.name
  name_prefix     = "orders-before-upgrade-"
  triggers        = { image = "flink:2.2.1-java21" }
}

resource "flinkstate_deployment" "orders_v2" {
  namespace       = %[1]q
  name            = "orders-v2"
  image           = "flink:2.2.1-java21"
  flink_version   = "2.2.1"
  service_account = "flink-orders"
  identity        = "irsa"
  wait_for        = "running"
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
    jar_uri                = "local:///opt/flink/examples/streaming/StateMachineExample.jar"
    parallelism            = 2
    upgrade_mode           = "savepoint"
    initial_savepoint_path = flinkstate_snapshot.before_upgrade.path
  }
  state {
    store_id = "acme-flink-state/flink/orders-v2"
  }
}

data "flinkstate_latest_savepoint" "orders" {
  namespace       = %[1]q
  deployment_name = "orders"
  depends_on      = [flinkstate_snapshot.before_upgrade]
}
`, ns)
	var want string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: cfg,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.CompareValuePairs("flinkstate_deployment.orders_v2", tfjsonPath("job").AtMapKey("initial_savepoint_path"),
					"flinkstate_snapshot.before_upgrade", tfjsonPath("path"), compare.ValuesSame()),
				statecheck.CompareValuePairs("data.flinkstate_latest_savepoint.orders", tfjsonPath("path"),
					"flinkstate_snapshot.before_upgrade", tfjsonPath("path"), compare.ValuesSame()),
				recordAttr("flinkstate_snapshot.before_upgrade", "path", &want),
				expectAPI(func() error {
					obj, err := getDeployment(t, ns, "orders-v2")
					if err != nil {
						return err
					}
					got, _, _ := unstructured.NestedString(obj.Object, "spec", "job", "initialSavepointPath")
					if got != want || !strings.HasPrefix(got, "s3://acme-flink-state/flink/orders/savepoints/savepoint-") {
						return fmt.Errorf("orders-v2 starts from %q, want the savepoint %q", got, want)
					}
					return nil
				}),
			},
		}},
	})
}

// A FlinkStateSnapshot written as the operator's examples write it
// (savepoint: {}) imports with the operator's defaults (SavepointSpec:
// disposeOnDelete true, formatType CANONICAL; backoffLimit -1), not this
// provider's: otherwise state says false while the operator would dispose of
// the savepoint on delete. Adopting it with this provider's defaults is an
// in-place update (the same object, its savepoint kept), never a replacement.
func TestAccSnapshot_importReadsOperatorDefaults(t *testing.T) {
	skipUnlessAcc(t)
	ns := snapshotJob(t)
	ctx := context.Background()
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkStateSnapshot",
		"metadata": map[string]any{"name": "adopted", "namespace": ns},
		"spec":     map[string]any{"jobReference": map[string]any{"kind": "FlinkDeployment", "name": "orders"}, "savepoint": map[string]any{}},
	}}
	created, err := testKube(t).Dynamic.Resource(kube.FlinkStateSnapshotGVR).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kube.WaitSnapshot(ctx, testKube(t).Dynamic, ns, "adopted", time.Minute, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`
resource "flinkstate_snapshot" "adopted" {
  namespace       = %q
  deployment_name = "orders"
  name_prefix     = "adopted"
}
`, ns)
	const addr = "flinkstate_snapshot.adopted"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:             cfg,
				ResourceName:       addr,
				ImportState:        true,
				ImportStateId:      ns + "/adopted",
				ImportStatePersist: true,
				ImportStateCheck: func(is []*terraform.InstanceState) error {
					a := is[0].Attributes
					for k, want := range map[string]string{"dispose_on_delete": "true", "format_type": "CANONICAL", "backoff_limit": "-1"} {
						if a[k] != want {
							return fmt.Errorf("imported %s = %q, want the operator's default %q", k, a[k], want)
						}
					}
					return nil
				},
			},
			{
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error {
					live, err := testKube(t).Dynamic.Resource(kube.FlinkStateSnapshotGVR).Namespace(ns).Get(ctx, "adopted", metav1.GetOptions{})
					if err != nil {
						return err
					}
					if live.GetUID() != created.GetUID() {
						return fmt.Errorf("the snapshot was replaced")
					}
					if d, _, _ := unstructured.NestedBool(live.Object, "spec", "savepoint", "disposeOnDelete"); d {
						return fmt.Errorf("disposeOnDelete still true")
					}
					return nil
				},
			},
		},
	})
}

// A flinkstate_snapshot that would dispose of its files refuses to be
// deleted while a FlinkDeployment restores from its path.
func TestAccSnapshot_disposeRefusedWhileRestoring(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	prefix := randName("keep-")
	snapshot := func(trigger, extra string) string {
		return fmt.Sprintf(`
resource "flinkstate_snapshot" "sp" {
  namespace         = %q
  deployment_name   = "orders"
  dispose_on_delete = %t
  triggers          = { v = %q }
  %s
}
`, ns, !strings.HasPrefix(trigger, "keep"), strings.TrimPrefix(trigger, "keep"), extra)
	}
	wait := `  wait_for = "running"`
	restoring := restoreConfig(ns, prefix, "flink:2.2.1-java17", "initial_savepoint_path = flinkstate_snapshot.sp.path", wait)
	var savepoint string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: restoreConfig(ns, prefix, "flink:2.2.1-java17", "", wait) + snapshot("1", "depends_on = [flinkstate_deployment.orders]"),
				Check:  func(s *terraform.State) error { savepoint = attrOf(s, "flinkstate_snapshot.sp", "path"); return nil },
			},
			{
				// The deployment is redeployed from the savepoint.
				Config: restoring + snapshot("1", ""),
				Check:  checkRestoredFrom(t, ns, &savepoint),
			},
			{
				// Replacing the snapshot deletes the old one first: refused, its files stay.
				Config:      restoring + snapshot("2", ""),
				ExpectError: errorRE("Savepoint still in use", "was not deleted", "FlinkDeployment [orders]", "initialSavepointPath"),
			},
			{
				PreConfig: func() {
					bucket, key, _ := strings.Cut(strings.TrimPrefix(savepoint, "s3://"), "/")
					if _, err := testAWS(t).S3.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(bucket),
						Key: aws.String(key + "/_metadata")}); err != nil {
						t.Fatalf("savepoint files gone after a refused delete: %v", err)
					}
				},
				// Kept on destroy: the operator disposes of a savepoint only while its job runs
				// (StateSnapshotReconciler.cleanup), and destroy deletes the deployment first.
				Config: restoring + snapshot("keep1", ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flinkstate_snapshot.sp", plancheck.ResourceActionUpdate),
				}},
			},
		},
	})
}

// contents says what the completed savepoint's _metadata records (here
// the model's savepoint of its one operator, which has no uid): the facts
// the restore pre-flight reads, for a user's precondition.
func TestAccSnapshot_contents(t *testing.T) {
	skipUnlessAcc(t)
	ns := snapshotJob(t)
	ops := tfjsonPath("contents").AtMapKey("operators")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkNoSnapshots(t, ns),
		Steps: []resource.TestStep{
			{
				Config: snapshotBeforeUpgrade(ns, "flink:2.2.1-java17", ""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(snapAddr, tfjsonPath("contents").AtMapKey("metadata_version"), knownvalue.Int64Exact(6)),
					statecheck.ExpectKnownValue(snapAddr, tfjsonPath("contents").AtMapKey("format"), knownvalue.StringExact("CANONICAL savepoint")),
					statecheck.ExpectKnownValue(snapAddr, ops, knownvalue.ListSizeExact(1)),
					statecheck.ExpectKnownValue(snapAddr, ops.AtSliceIndex(0).AtMapKey("name"), knownvalue.StringExact("test bed job")),
					statecheck.ExpectKnownValue(snapAddr, ops.AtSliceIndex(0).AtMapKey("uid"), knownvalue.Null()),
					statecheck.ExpectKnownValue(snapAddr, ops.AtSliceIndex(0).AtMapKey("max_parallelism"), knownvalue.Int64Exact(128)),
				},
			},
			{
				// Kept while the path stays: no change, no read.
				Config:   snapshotBeforeUpgrade(ns, "flink:2.2.1-java17", ""),
				PlanOnly: true,
			},
		},
	})
}
