package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
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

func TestAccSnapshot_savepointBeforeUpgrade(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	dir := "s3://acme-flink-state/flink/orders/savepoints"
	startOperator(t, ns)
	runningJob(t, ns, "orders", map[string]any{"execution.checkpointing.savepoint-dir": dir})
	var firstName string
	body := func(image string) string {
		return fmt.Sprintf(`  name_prefix = "orders-before-upgrade-"
  triggers    = { image = %q }`, image)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkNoSnapshots(t, ns),
		Steps: []resource.TestStep{
			{
				Config: snapshotConfig(ns, body("flink:2.2.1-java17")),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("flinkstate_snapshot.test", "state", "COMPLETED"),
					resource.TestMatchResourceAttr("flinkstate_snapshot.test", "name", regexpMust(`^orders-before-upgrade-[a-z0-9]{5}$`)),
					resource.TestMatchResourceAttr("flinkstate_snapshot.test", "path", regexpMust(`^`+dir+`/savepoint-[0-9a-f]{6}-[0-9a-f]{12}$`)),
					resource.TestCheckResourceAttrSet("flinkstate_snapshot.test", "result_timestamp"),
					resource.TestCheckNoResourceAttr("flinkstate_snapshot.test", "error"),
					func(s *terraform.State) error {
						firstName = s.RootModule().Resources["flinkstate_snapshot.test"].Primary.Attributes["name"]
						obj, err := getSnapshot(t, ns, firstName)
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
					},
				),
			},
			{
				ResourceName:            "flinkstate_snapshot.test",
				ImportState:             true,
				ImportStateIdFunc:       func(s *terraform.State) (string, error) { return ns + "/" + firstName, nil },
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"}, // triggers come back from the object
			},
			{
				// dispose_on_delete changes in place on the same object.
				Config: snapshotConfig(ns, body("flink:2.2.1-java17")+"\n  dispose_on_delete = true"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flinkstate_snapshot.test", plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error {
					obj, err := getSnapshot(t, ns, firstName)
					if err != nil {
						return err
					}
					if d, _, _ := unstructured.NestedBool(obj.Object, "spec", "savepoint", "disposeOnDelete"); !d {
						return fmt.Errorf("disposeOnDelete not updated on %s", firstName)
					}
					return nil
				},
			},
			{
				// A new image in triggers: a new snapshot; the old object is deleted (after its finalizer).
				Config: snapshotConfig(ns, body("flink:2.2.1-java21")),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flinkstate_snapshot.test", plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("flinkstate_snapshot.test", "state", "COMPLETED"),
					func(s *terraform.State) error {
						name := s.RootModule().Resources["flinkstate_snapshot.test"].Primary.Attributes["name"]
						if name == firstName {
							return fmt.Errorf("triggers changed but the snapshot is still %s", name)
						}
						if _, err := getSnapshot(t, ns, firstName); !apierrors.IsNotFound(err) {
							return fmt.Errorf("the replaced snapshot %s still exists (%v)", firstName, err)
						}
						return nil
					},
				),
			},
			{
				// The newest completed snapshot of the deployment, found through the API.
				Config: snapshotConfig(ns, body("flink:2.2.1-java21")) + fmt.Sprintf(`
data "flinkstate_latest_savepoint" "orders" {
  namespace       = %q
  deployment_name = "orders"
  type            = "savepoint"
  depends_on      = [flinkstate_snapshot.test]
}

data "flinkstate_latest_savepoint" "other" {
  namespace       = %q
  deployment_name = "payments"
}
`, ns, ns),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("data.flinkstate_latest_savepoint.orders", "found", "true"),
					resource.TestCheckResourceAttrPair("data.flinkstate_latest_savepoint.orders", "path", "flinkstate_snapshot.test", "path"),
					resource.TestCheckResourceAttrPair("data.flinkstate_latest_savepoint.orders", "name", "flinkstate_snapshot.test", "name"),
					resource.TestCheckResourceAttr("data.flinkstate_latest_savepoint.other", "found", "false"),
				),
			},
			{
				// Deleted out of band: dropped from state and planned again.
				PreConfig: func() {
					list, _ := testKube(t).Dynamic.Resource(kube.FlinkStateSnapshotGVR).Namespace(ns).List(context.Background(), metav1.ListOptions{})
					for _, o := range list.Items {
						if err := kube.DeleteAndWait(context.Background(), testKube(t).Dynamic, kube.FlinkStateSnapshotGVR, ns, o.GetName(), 30e9); err != nil {
							t.Fatalf("deleting out of band: %v", err)
						}
					}
				},
				Config:             snapshotConfig(ns, body("flink:2.2.1-java21")),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
		},
	})
}

func TestAccSnapshot_operatorFailures(t *testing.T) {
	skipUnlessAcc(t)
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
		// No FlinkDeployment "orders": the operator abandons the snapshot
		// (FlinkStateSnapshotUtils.abandonSnapshotIfJobNotRunning).
		kube.SnapshotAbandoned: {
			setup: func(t *testing.T, ns string) { startOperator(t, ns) },
			want:  []string{"is ABANDONED after 0 failure(s)", "Secondary resource orders (FlinkDeployment) for savepoint", "was not found"},
		},
	}
	for state, tc := range cases {
		t.Run(state, func(t *testing.T) {
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
	cases := map[string]struct{ body, want string }{
		"path without already_exists": {`  path = "s3://b/sp/savepoint-1"`, "path needs already_exists"},
		"already_exists without path": {`  already_exists = true`, "already_exists needs path"},
		"savepoint options on checkpoint": {`  type = "checkpoint"
  format_type = "NATIVE"`, "format_type applies to savepoints only"},
		"infinite backoff":  {`  backoff_limit = -1`, "backoff_limit"},
		"bad format":        {`  format_type = "UNKNOWN"`, "format_type"},
		"target dir not s3": {`  target_dir = "/tmp/savepoints"`, "target_dir"},
	}
	for label, tc := range cases {
		t.Run(label, func(t *testing.T) {
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testProviderFactories,
				Steps: []resource.TestStep{{
					Config:      snapshotConfig("data", tc.body),
					PlanOnly:    true,
					ExpectError: errorRE(strings.Split(tc.want, "|")...),
				}},
			})
		})
	}
}

// The seed's upgrade flow in one configuration: a savepoint of the running
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
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: cfg,
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttrPair("flinkstate_deployment.orders_v2", "job.initial_savepoint_path", "flinkstate_snapshot.before_upgrade", "path"),
				resource.TestCheckResourceAttrPair("data.flinkstate_latest_savepoint.orders", "path", "flinkstate_snapshot.before_upgrade", "path"),
				func(s *terraform.State) error {
					want := s.RootModule().Resources["flinkstate_snapshot.before_upgrade"].Primary.Attributes["path"]
					obj, err := getDeployment(t, ns, "orders-v2")
					if err != nil {
						return err
					}
					got, _, _ := unstructured.NestedString(obj.Object, "spec", "job", "initialSavepointPath")
					if got != want || !strings.HasPrefix(got, "s3://acme-flink-state/flink/orders/savepoints/savepoint-") {
						return fmt.Errorf("orders-v2 starts from %q, want the savepoint %q", got, want)
					}
					return nil
				},
			),
		}},
	})
}
