package provider

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// movedToBlueGreen is the moved block of flinkstate_deployment.orders
// into flinkstate_blue_green_deployment.orders.
const movedToBlueGreen = `
moved {
  from = flinkstate_deployment.orders
  to   = flinkstate_blue_green_deployment.orders
}
`

// A moved block from a running flinkstate_deployment to
// flinkstate_blue_green_deployment hands the job's state over in one
// apply: the plan is an update that says so (the old job stopped with a
// savepoint, orders-blue started from it, no overlap), the apply ends at
// ACTIVE_BLUE with orders-blue started from the old job's final savepoint
// (a savepoint with _metadata, recorded in FlinkStateSnapshot
// orders-final-*), the old FlinkDeployment is gone, and the plan after it
// is empty (the testing framework plans again after every apply).
func TestAccBlueGreen_moveFromDeployment(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	rec := &diagRecorder{}
	var oldJob string
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_8_0)},
		ProtoV6ProviderFactories: rec.factories(),
		CheckDestroy:             checkBlueGreenGone(t, ns),
		Steps: []resource.TestStep{
			{
				Config:            deploymentConfig(ns, "flink:2.2.1-java17", `  wait_for = "running"`),
				ConfigStateChecks: []statecheck.StateCheck{recordAttr("flinkstate_deployment.orders", "job_id", &oldJob)},
			},
			{
				PreConfig: rec.reset,
				Config:    blueGreenConfig(ns, "flink:2.2.1-java17", "") + movedToBlueGreen,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(bgAddr, plancheck.ResourceActionUpdate),
					// Known after apply, as for a create: a wait that runs out
					// keeps the deployment short of ACTIVE_BLUE.
					plancheck.ExpectUnknownValue(bgAddr, tfjsonPath("blue_green_state")),
					plancheck.ExpectKnownValue(bgAddr, tfjsonPath("active_deployment_name"), knownString("orders-blue")),
					rec.planWarning("hands the job's state over", "stops the running job of FlinkDeployment "+ns+"/orders with a savepoint",
						"orders-final-*", "deletes FlinkDeployment "+ns+"/orders", "orders-blue starts from it", "never run side by side"),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(bgAddr, tfjsonPath("id"), knownString(ns+"/orders")),
					statecheck.ExpectKnownValue(bgAddr, tfjsonPath("blue_green_state"), knownString("ACTIVE_BLUE")),
					statecheck.ExpectKnownValue(bgAddr, tfjsonPath("job_state"), knownString("RUNNING")),
					// A new job (ApplicationReconciler.setJobIdIfNecessary).
					statecheck.ExpectKnownValue(bgAddr, tfjsonPath("job_id"), knownvalue.StringFunc(func(v string) error {
						if v == "" || v == oldJob {
							return fmt.Errorf("job_id %q, want a new job's id (the old one was %s)", v, oldJob)
						}
						return nil
					})),
					expectChildFrom(t, ns, "orders-blue"),
					expectAPI(func() error {
						sps := finalSavepoints(t, ns, "orders")
						if len(sps) != 1 || sps[0].State != "COMPLETED" {
							return fmt.Errorf("final savepoints of orders: %+v, want one COMPLETED", sps)
						}
						blue, err := getDeployment(t, ns, "orders-blue")
						if err != nil {
							return err
						}
						if p, _, _ := unstructured.NestedString(blue.Object, "spec", "job", "initialSavepointPath"); p != sps[0].Path {
							return fmt.Errorf("orders-blue starts from %q, want the old job's final savepoint %q", p, sps[0].Path)
						}
						if _, err := getDeployment(t, ns, "orders"); !apierrors.IsNotFound(err) {
							return fmt.Errorf("FlinkDeployment orders still there after the move (%v)", err)
						}
						return nil
					}),
				},
			},
			{Config: blueGreenConfig(ns, "flink:2.2.1-java17", "") + movedToBlueGreen, PlanOnly: true},
		},
	})
}

// A move whose apply fails after the old job was stopped (S3 does not
// show the savepoint's files when the provider checks them) deletes
// nothing and creates nothing: the old FlinkDeployment stays suspended
// with its savepoint, its job is not restarted. The next apply goes on
// from that savepoint (the plan says the job is stopped already) without
// a second stop: orders-blue starts from the one savepoint taken.
func TestAccBlueGreen_moveResumesAfterAFailureAfterTheStop(t *testing.T) {
	moveResumes(t, false)
}

// As TestAccBlueGreen_moveResumesAfterAFailureAfterTheStop, with the
// stopped FlinkDeployment deleted before the next apply (as when an apply
// is cut off after the delete, before Terraform records it): the savepoint
// recorded for the blue/green deployment in the cluster is found, and the
// next apply creates it from there, not from empty state.
func TestAccBlueGreen_moveResumesWithTheOldDeploymentGone(t *testing.T) {
	moveResumes(t, true)
}

func moveResumes(t *testing.T, deleteOld bool) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	p := newFaultProxy(t)
	rec := &diagRecorder{}
	savepoints := func(w http.ResponseWriter, r *http.Request) bool {
		if strings.Contains(r.URL.Path, "/savepoints/") || strings.Contains(r.URL.Query().Get("prefix"), "savepoints/") {
			w.WriteHeader(http.StatusNotFound)
			return true
		}
		return false
	}
	moved := awsProxyProvider(p.URL) + blueGreenConfig(ns, "flink:2.2.1-java17", "") + movedToBlueGreen
	warning := []string{"hands the job's state over", "is stopped already, with savepoint s3://acme-flink-state/flink/orders/savepoints/"}
	if deleteOld {
		warning = []string{"Move to blue/green resumes", "orders-blue starts from s3://acme-flink-state/flink/orders/savepoints/"}
	}
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_8_0)},
		ProtoV6ProviderFactories: rec.factories(),
		CheckDestroy:             checkBlueGreenGone(t, ns),
		Steps: []resource.TestStep{
			{Config: awsProxyProvider(p.URL) + deploymentConfig(ns, "flink:2.2.1-java17", `  wait_for = "running"`)},
			{
				PreConfig: func() { p.intercept.Store(&savepoints) },
				Config:    moved,
				ExpectError: errorRE("Move to blue/green stopped before the create", "FlinkDeployment "+ns+"/orders is stopped (suspended), not deleted",
					"savepoint", "is kept", "apply again"),
			},
			{
				PreConfig: func() {
					p.intercept.Store(nil)
					obj, err := getDeployment(t, ns, "orders")
					if err != nil {
						t.Fatalf("FlinkDeployment orders after the failed move: %v", err)
					}
					if js, _, _ := unstructured.NestedString(obj.Object, "spec", "job", "state"); js != "suspended" {
						t.Errorf("FlinkDeployment orders after the failed move: job.state %q, want suspended (stopped with its savepoint)", js)
					}
					if _, err := getMovedBlueGreen(t, ns, "orders"); !apierrors.IsNotFound(err) {
						t.Errorf("FlinkBlueGreenDeployment orders after the failed move (%v)", err)
					}
					if deleteOld {
						deleteAndWait(t, ns, "orders")
					}
					rec.reset()
				},
				Config: moved,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(bgAddr, plancheck.ResourceActionUpdate),
					rec.planWarning(warning...),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(bgAddr, tfjsonPath("blue_green_state"), knownString("ACTIVE_BLUE")),
					expectAPI(func() error {
						sps := finalSavepoints(t, ns, "orders")
						if len(sps) != 1 {
							return fmt.Errorf("final savepoints of orders: %+v, want the one the failed apply took", sps)
						}
						blue, err := getDeployment(t, ns, "orders-blue")
						if err != nil {
							return err
						}
						if p, _, _ := unstructured.NestedString(blue.Object, "spec", "job", "initialSavepointPath"); p != sps[0].Path {
							return fmt.Errorf("orders-blue starts from %q, want the savepoint the failed apply took %q", p, sps[0].Path)
						}
						return nil
					}),
				},
			},
		},
	})
}

// deleteAndWait deletes FlinkDeployment ns/name outside Terraform and
// waits until the operator has let it go (its finalizer).
func deleteAndWait(t *testing.T, ns, name string) {
	t.Helper()
	if err := testKube(t).Dynamic.Resource(kube.FlinkDeploymentGVR).Namespace(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting %s/%s: %v", ns, name, err)
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if _, err := getDeployment(t, ns, name); apierrors.IsNotFound(err) {
			return
		}
	}
	t.Fatalf("%s/%s still there a minute after its deletion", ns, name)
}

// The blue/green deployment may take another name than the deployment it
// replaces: the move is still one update (no replacement, which would
// create it without the handover), and its children are named for the new
// name.
func TestAccBlueGreen_moveToAnotherName(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	renamed := strings.Replace(blueGreenConfig(ns, "flink:2.2.1-java17", ""), `name            = "orders"`, `name            = "orders-bg"`, 1)
	if !strings.Contains(renamed, `"orders-bg"`) {
		t.Fatal("the configuration's name is not as expected")
	}
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_8_0)},
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			if _, err := getMovedBlueGreen(t, ns, "orders-bg"); !apierrors.IsNotFound(err) {
				return fmt.Errorf("FlinkBlueGreenDeployment orders-bg still exists after destroy (%v)", err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{Config: deploymentConfig(ns, "flink:2.2.1-java17", `  wait_for = "running"`)},
			{
				Config: renamed + movedToBlueGreen,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(bgAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(bgAddr, tfjsonPath("id"), knownString(ns+"/orders-bg")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(bgAddr, tfjsonPath("active_deployment_name"), knownString("orders-bg-blue")),
					statecheck.ExpectKnownValue(bgAddr, tfjsonPath("blue_green_state"), knownString("ACTIVE_BLUE")),
					expectAPI(func() error {
						sps := finalSavepoints(t, ns, "orders")
						if len(sps) != 1 {
							return fmt.Errorf("final savepoints of orders: %+v, want one", sps)
						}
						blue, err := getDeployment(t, ns, "orders-bg-blue")
						if err != nil {
							return err
						}
						if p, _, _ := unstructured.NestedString(blue.Object, "spec", "job", "initialSavepointPath"); p != sps[0].Path {
							return fmt.Errorf("orders-bg-blue starts from %q, want %q", p, sps[0].Path)
						}
						if _, err := getDeployment(t, ns, "orders"); !apierrors.IsNotFound(err) {
							return fmt.Errorf("FlinkDeployment orders still there after the move (%v)", err)
						}
						return nil
					}),
				},
			},
		},
	})
}

// A moved resource destroyed before its handover (terraform destroy with
// the moved block in the configuration: the move comes first) destroys
// the old FlinkDeployment as flinkstate_deployment does: its job is stopped
// with a final savepoint first, which is kept.
func TestAccBlueGreen_moveThenDestroyKeepsTheFinalSavepoint(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_8_0)},
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			if _, err := getDeployment(t, ns, "orders"); !apierrors.IsNotFound(err) {
				return fmt.Errorf("FlinkDeployment orders still there after the destroy (%v)", err)
			}
			if sps := finalSavepoints(t, ns, "orders"); len(sps) != 1 || sps[0].State != "COMPLETED" {
				return fmt.Errorf("final savepoints of orders: %+v, want one COMPLETED", sps)
			}
			if _, err := getMovedBlueGreen(t, ns, "orders"); !apierrors.IsNotFound(err) {
				return fmt.Errorf("a FlinkBlueGreenDeployment orders exists after the destroy (%v)", err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{Config: deploymentConfig(ns, "flink:2.2.1-java17", `  wait_for = "running"`)},
			{
				Config:  blueGreenConfig(ns, "flink:2.2.1-java17", "") + movedToBlueGreen,
				Destroy: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(bgAddr, plancheck.ResourceActionDestroy),
				}},
			},
		},
	})
}

func getMovedBlueGreen(t *testing.T, ns, name string) (*unstructured.Unstructured, error) {
	return testKube(t).Dynamic.Resource(kube.FlinkBlueGreenDeploymentGVR).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
}

// A move whose blue child could not restore the old job's state
// (parallelism 12, the state written with max parallelism 8) is refused at
// plan, before anything is changed: the old FlinkDeployment keeps running
// at its generation, and no FlinkBlueGreenDeployment is created.
func TestAccBlueGreen_moveRefusedByPreflight(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	prefix := randName("bgmove-")
	store := func(c string) string {
		return strings.Replace(c, "acme-flink-state/flink/orders", "acme-flink-state/"+prefix, 1)
	}
	first := store(deploymentConfig(ns, "flink:2.2.1-java17", `  wait_for = "running"
  flink_configuration = {
    "pipeline.max-parallelism" = "8"
  }`))
	moved := store(strings.Replace(blueGreenConfig(ns, "flink:2.2.1-java17", ""), "parallelism  = 2", "parallelism  = 12", 1)) + movedToBlueGreen
	var gen int64
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_8_0)},
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: first},
			{
				PreConfig: func() { gen = generationOf(t, ns, "orders") },
				Config:    moved,
				ExpectError: errorRE("Flink would refuse to restore the job's state", "FlinkDeployment "+ns+"/orders moves to FlinkBlueGreenDeployment "+ns+"/orders",
					"s3://acme-flink-state/"+prefix+"/checkpoints/", "job.parallelism (12)",
					"The maximum parallelism (8) of the restored state is lower than the configured parallelism (12)", "Nothing was changed"),
			},
			{
				Config: first,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("flinkstate_deployment.orders", tfjsonPath("job_state"), knownString("RUNNING")),
					expectAPI(func() error {
						if g := generationOf(t, ns, "orders"); g != gen {
							return fmt.Errorf("orders at generation %d after the refused move, want %d", g, gen)
						}
						if sps := finalSavepoints(t, ns, "orders"); len(sps) != 0 {
							return fmt.Errorf("the refused move took savepoints: %+v", sps)
						}
						if _, err := getMovedBlueGreen(t, ns, "orders"); !apierrors.IsNotFound(err) {
							return fmt.Errorf("FlinkBlueGreenDeployment orders exists after the refused move (%v)", err)
						}
						return nil
					}),
				},
			},
		},
	})
}
