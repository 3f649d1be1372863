package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
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

const bgAddr = "flinkstate_blue_green_deployment.orders"

// blueGreenConfig is deploymentConfig's deployment as a blue/green one, in
// savepoint mode; extra goes inside the resource.
func blueGreenConfig(ns, image, extra string) string {
	c := strings.Replace(deploymentConfig(ns, image, extra), `resource "flinkstate_deployment"`, `resource "flinkstate_blue_green_deployment"`, 1)
	return strings.Replace(c, `upgrade_mode = "last-state"`, `upgrade_mode = "savepoint"`, 1)
}

func checkBlueGreenGone(t *testing.T, ns string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		d := testKube(t).Dynamic
		if _, err := d.Resource(kube.FlinkBlueGreenDeploymentGVR).Namespace(ns).Get(context.Background(), "orders", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("FlinkBlueGreenDeployment still exists after destroy (%v)", err)
		}
		for _, c := range []string{"orders-blue", "orders-green"} {
			if _, err := d.Resource(kube.FlinkDeploymentGVR).Namespace(ns).Get(context.Background(), c, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("child FlinkDeployment %s left behind after destroy (%v)", c, err)
			}
		}
		return nil
	}
}

// expectChildFrom checks that the child's job started from the savepoint
// the state reports, one of the other child's (under the store's
// savepoints/, with _metadata).
func expectChildFrom(t *testing.T, ns, child string) statecheck.StateCheck {
	return expectAPI(func() error {
		obj, err := testKube(t).Dynamic.Resource(kube.FlinkDeploymentGVR).Namespace(ns).Get(context.Background(), child, metav1.GetOptions{})
		if err != nil {
			return err
		}
		p, _, _ := unstructured.NestedString(obj.Object, "spec", "job", "initialSavepointPath")
		if !strings.HasPrefix(p, "s3://acme-flink-state/flink/orders/savepoints/savepoint-") {
			return fmt.Errorf("%s job.initialSavepointPath %q: want a savepoint under the store's savepoints/", child, p)
		}
		bucket, key, _ := strings.Cut(strings.TrimPrefix(p, "s3://"), "/")
		if _, err := testAWS(t).S3.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key + "/_metadata")}); err != nil {
			return fmt.Errorf("%s starts from %s, which has no _metadata", child, p)
		}
		return nil
	})
}

// Create waits for ACTIVE_BLUE with the job running; the plan after it is
// empty; an image change is a transition to green from a savepoint of
// blue (the plan says both run side by side), which the apply waits for;
// a second change goes back to blue; destroy takes the final savepoint and
// leaves no child behind.
func TestAccBlueGreen_lifecycle(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBlueGreenGone(t, ns),
		Steps: []resource.TestStep{
			{
				Config: blueGreenConfig(ns, "flink:2.2.1-java17", ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(bgAddr, tfjsonPath("effective_flink_configuration").AtMapKey("kubernetes.cluster-id"), knownString("orders-blue")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(bgAddr, tfjsonPath("blue_green_state"), knownString("ACTIVE_BLUE")),
					statecheck.ExpectKnownValue(bgAddr, tfjsonPath("active_deployment_name"), knownString("orders-blue")),
					statecheck.ExpectKnownValue(bgAddr, tfjsonPath("job_state"), knownString("RUNNING")),
					statecheck.ExpectKnownValue(bgAddr, tfjsonPath("transition_savepoint_path"), knownvalue.Null()),
				},
			},
			{Config: blueGreenConfig(ns, "flink:2.2.1-java17", ""), PlanOnly: true},
			{
				Config: blueGreenConfig(ns, "flink:2.2.1-java21", ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(bgAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(bgAddr, tfjsonPath("active_child"), knownString("green")),
					plancheck.ExpectKnownValue(bgAddr, tfjsonPath("effective_flink_configuration").AtMapKey("kubernetes.cluster-id"), knownString("orders-green")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(bgAddr, tfjsonPath("blue_green_state"), knownString("ACTIVE_GREEN")),
					statecheck.ExpectKnownValue(bgAddr, tfjsonPath("job_state"), knownString("RUNNING")),
					statecheck.ExpectKnownValue(bgAddr, tfjsonPath("transition_savepoint_path"),
						knownvalue.StringRegexp(regexpMust(`^s3://acme-flink-state/flink/orders/savepoints/savepoint-[0-9a-f]{6}-[0-9a-f]{12}$`))),
					expectChildFrom(t, ns, "orders-green"),
					expectAPI(func() error {
						if _, err := getDeployment(t, ns, "orders-blue"); !apierrors.IsNotFound(err) {
							return fmt.Errorf("orders-blue still there at ACTIVE_GREEN (%v)", err)
						}
						return nil
					}),
				},
			},
			{Config: blueGreenConfig(ns, "flink:2.2.1-java21", ""), PlanOnly: true},
			{
				Config: blueGreenConfig(ns, "flink:2.2.1-java17", ""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(bgAddr, tfjsonPath("blue_green_state"), knownString("ACTIVE_BLUE")),
					expectChildFrom(t, ns, "orders-blue"),
				},
			},
		},
	})
}

// The plan of a transition says that both jobs run side by side, and
// what that means for an exactly-once sink; a change the operator patches
// into the active child (an ignored key only) says nothing of it.
func TestAccBlueGreen_planSaysOverlap(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	rec := &diagRecorder{}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.factories(),
		CheckDestroy:             checkBlueGreenGone(t, ns),
		Steps: []resource.TestStep{
			{Config: blueGreenConfig(ns, "flink:2.2.1-java17", "")},
			{
				PreConfig: rec.reset,
				Config:    blueGreenConfig(ns, "flink:2.2.1-java21", ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					rec.planWarning("both jobs run side by side", "image", "orders-blue", "orders-green", "exactly-once", "transactionalIdPrefix"),
				}},
			},
		},
	})
}

// import adopts a running FlinkBlueGreenDeployment with an empty plan.
func TestAccBlueGreen_import(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBlueGreenGone(t, ns),
		Steps: []resource.TestStep{
			{Config: blueGreenConfig(ns, "flink:2.2.1-java17", "")},
			{
				ResourceName:            bgAddr,
				ImportState:             true,
				ImportStateId:           ns + "/orders",
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
		},
	})
}

// A stateful blue/green deployment without a savepoint directory fails
// validate (the operator could not trigger the transition's savepoint).
func TestAccBlueGreen_statefulNeedsSavepointDir(t *testing.T) {
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: strings.Replace(blueGreenConfig("default", "flink:2.2.1-java17", ""), `store_id            = "acme-flink-state/flink/orders"`,
				`checkpoint_dir      = "s3://acme-flink-state/flink/orders/checkpoints"`, 1),
			PlanOnly:    true,
			ExpectError: errorRE("A stateful blue/green deployment needs a savepoint directory", "state.savepoint_dir"),
		}},
	})
}

// A transition whose new child cannot run (its image cannot be pulled)
// fails the apply as soon as the operator records the child's
// DeploymentFailedException, saying that the old child keeps running;
// the old child's job is untouched.
func TestAccBlueGreen_failedTransitionKeepsTheActiveChild(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	op := startOperator(t, ns)
	var jobID string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBlueGreenGone(t, ns),
		Steps: []resource.TestStep{
			{
				Config:            blueGreenConfig(ns, "flink:2.2.1-java17", ""),
				ConfigStateChecks: []statecheck.StateCheck{recordAttr(bgAddr, "job_id", &jobID)},
			},
			{
				PreConfig: func() {
					op.SetFaults(func(f *testbed.Faults) {
						f.ContainerWaiting = &testbed.ContainerState{Reason: "ImagePullBackOff", Message: `Back-off pulling image "flink:no-such-tag"`}
					})
				},
				Config:      blueGreenConfig(ns, "flink:no-such-tag", ""),
				ExpectError: errorRE("orders-green", "Back-off pulling image", "orders-blue keeps running"),
			},
			{
				// The operator recorded the failed spec: no change to plan.
				PreConfig: func() {
					op.SetFaults(func(f *testbed.Faults) { f.ContainerWaiting = nil })
					obj, err := getDeployment(t, ns, "orders-blue")
					if err != nil {
						t.Fatal(err)
					}
					if st := kube.ReadDeploymentStatus(obj); st.JobID != jobID || st.JobState != "RUNNING" {
						t.Errorf("orders-blue after the failed transition: job %s %s, want %s RUNNING", st.JobID, st.JobState, jobID)
					}
				},
				Config:   blueGreenConfig(ns, "flink:no-such-tag", ""),
				PlanOnly: true,
			},
		},
	})
}

// A transition whose new child could not restore the running child's state
// (parallelism 12, the state written with max parallelism 8) is refused at
// plan, before anything is written: the operator would take blue's savepoint
// and start green from it, and Flink would fail green's job
// (StateAssignmentOperation.checkParallelismPreconditions), to be aborted
// only after abort_grace_period. Blue keeps running at its generation, and
// no green child is created.
func TestAccBlueGreen_preflightRefusesTransitionAboveCheckpointMax(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	prefix := randName("bgpreflight-")
	store := func(c string) string {
		return strings.Replace(c, "acme-flink-state/flink/orders", "acme-flink-state/"+prefix, 1)
	}
	first := store(blueGreenConfig(ns, "flink:2.2.1-java17", `  flink_configuration = {
    "pipeline.max-parallelism" = "8"
  }`))
	scaled := store(strings.Replace(blueGreenConfig(ns, "flink:2.2.1-java17", ""), "parallelism  = 2", "parallelism  = 12", 1))
	var gen int64
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBlueGreenGone(t, ns),
		Steps: []resource.TestStep{
			{Config: first},
			{
				PreConfig: func() { gen = generationOf(t, ns, "orders-blue") },
				Config:    scaled,
				ExpectError: errorRE("Flink would refuse to restore the job's state", "transitions from orders-blue to orders-green",
					"s3://acme-flink-state/"+prefix+"/checkpoints/", "the newest checkpoint of the running job", "job.parallelism (12)",
					"The maximum parallelism (8) of the restored state is lower than the configured parallelism (12)", "Nothing was changed"),
			},
			{
				Config: first,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(bgAddr, tfjsonPath("blue_green_state"), knownString("ACTIVE_BLUE")),
					statecheck.ExpectKnownValue(bgAddr, tfjsonPath("job_state"), knownString("RUNNING")),
					expectAPI(func() error {
						if g := generationOf(t, ns, "orders-blue"); g != gen {
							return fmt.Errorf("orders-blue at generation %d after the refused transition, want %d", g, gen)
						}
						if _, err := getDeployment(t, ns, "orders-green"); !apierrors.IsNotFound(err) {
							return fmt.Errorf("orders-green exists after the refused transition (%v)", err)
						}
						return nil
					}),
				},
			},
		},
	})
}
