package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

func liveDeployment(t *testing.T, ns string) func() (*unstructured.Unstructured, error) {
	return func() (*unstructured.Unstructured, error) { return getDeployment(t, ns, "orders") }
}

// The API server is unreachable for 3 s while create waits for the job:
// the wait rides it out, and the job is neither tainted nor replaced.
func TestAccDeployment_apiServerStopDuringCreateWait(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	ns := testNamespace(t)
	proxy, provider := kubeFaultProxy(t)
	faultOver := stopAPIServerDuringWait(t, proxy, startOperator(t, ns), 3*time.Second, func() bool {
		_, err := getDeployment(t, ns, "orders")
		return err == nil
	})
	var uid ktypes.UID
	config := provider + deploymentConfig(ns, "flink:2.2.1-java17", `  wait_for = "running"`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: resource.ComposeAggregateTestCheckFunc(
					func(*terraform.State) error { return faultOver() },
					resource.TestCheckResourceAttr("flinkstate_deployment.orders", "job_state", "RUNNING"),
					uidOf(t, liveDeployment(t, ns), &uid),
				),
			},
			{
				// Not tainted: nothing to do, the same object.
				Config:           config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check:            uidOf(t, liveDeployment(t, ns), &uid),
			},
		},
	})
}

// A job slower than the create timeout: the create keeps the object (no
// error, so no taint), the next plans show an update whose apply waits
// again, until the job runs; the object is never replaced.
func TestAccDeployment_slowerThanCreateTimeout(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	ns := testNamespace(t)
	// The operator is not running yet: nothing observes the deployment.
	op := startOperator(t, ns)
	op.SetFaults(func(f *testbed.Faults) { f.Down = true })
	var uid ktypes.UID
	config := deploymentConfig(ns, "flink:2.2.1-java17", `  wait_for = "running"
  timeouts {
    create = "5s"
    update = "5s"
  }`)
	update := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
		plancheck.ExpectResourceAction("flinkstate_deployment.orders", plancheck.ResourceActionUpdate),
	}}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:             config,
				ExpectNonEmptyPlan: true, // the wait is pending: the next plan is an update
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("flinkstate_deployment.orders", "lifecycle_state", ""),
					uidOf(t, liveDeployment(t, ns), &uid),
				),
			},
			{
				// Still not running: the update waits again and says so.
				Config:           config,
				ConfigPlanChecks: update,
				ExpectError:      errorRE("FlinkDeployment not ready", "not ready in time", "has not observed generation 1", "pending update"),
			},
			{
				// The operator runs now: the pending update waits once more, and succeeds.
				PreConfig:        func() { op.SetFaults(func(f *testbed.Faults) { f.Down = false }) },
				Config:           strings.Replace(config, `update = "5s"`, `update = "2m"`, 1),
				ConfigPlanChecks: update,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("flinkstate_deployment.orders", "job_state", "RUNNING"),
					uidOf(t, liveDeployment(t, ns), &uid),
				),
			},
			{
				Config:   strings.Replace(config, `update = "5s"`, `update = "2m"`, 1),
				PlanOnly: true,
			},
		},
	})
}

// An update whose job failed is not forgotten.
func TestAccDeployment_failedUpdateStaysPending(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	ns := testNamespace(t)
	op := startOperator(t, ns)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: deploymentConfig(ns, "flink:2.2.1-java17", "")},
			{
				// The kubelet cannot pull the new image.
				PreConfig: func() {
					op.SetFaults(func(f *testbed.Faults) {
						f.ContainerWaiting = &testbed.ContainerState{Reason: "ImagePullBackOff", Message: `Back-off pulling image "flink:no-such-tag"`}
					})
				},
				Config:      deploymentConfig(ns, "flink:no-such-tag", ""),
				ExpectError: errorRE("FlinkDeployment not ready", "failed (lifecycle DEPLOYED", `Back-off pulling image "flink:no-such-tag"`),
			},
			{
				Config:             deploymentConfig(ns, "flink:no-such-tag", ""),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
		},
	})
}

// Another owner's FlinkDeployment of the same name is never adopted: the
// create fails with the import command, the object keeps its UID, spec and
// annotation, and destroying this configuration leaves it alone.
func TestAccDeployment_createNeverAdopts(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	ns := testNamespace(t)
	theirs := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "flink.apache.org/v1beta1",
		"kind":       "FlinkDeployment",
		"metadata":   map[string]any{"name": "orders", "namespace": ns, "annotations": map[string]any{"owner": "other-team"}},
		"spec": map[string]any{
			"image": "flink:1.20.1", "flinkVersion": "v1_20", "serviceAccount": "flink-other",
			"flinkConfiguration": map[string]any{"execution.checkpointing.dir": "s3://other-team/checkpoints"},
			"jobManager":         map[string]any{"resource": map[string]any{"memory": "1024m", "cpu": int64(1)}},
			"taskManager":        map[string]any{"resource": map[string]any{"memory": "1024m", "cpu": int64(1)}},
		},
	}}
	created, err := testKube(t).Dynamic.Resource(kube.FlinkDeploymentGVR).Namespace(ns).Create(context.Background(), theirs,
		metav1.CreateOptions{FieldManager: "other-team"})
	if err != nil {
		t.Fatal(err)
	}
	untouched := func(*terraform.State) error {
		obj, err := getDeployment(t, ns, "orders")
		if err != nil {
			return fmt.Errorf("the other owner's FlinkDeployment: %w", err)
		}
		dir, _, _ := unstructured.NestedString(obj.Object, "spec", "flinkConfiguration", "execution.checkpointing.dir")
		if obj.GetUID() != created.GetUID() || dir != "s3://other-team/checkpoints" || obj.GetAnnotations()["owner"] != "other-team" ||
			obj.GetGeneration() != created.GetGeneration() {
			return fmt.Errorf("the other owner's FlinkDeployment changed: uid %s (was %s), checkpoint dir %q, annotations %v, generation %d",
				obj.GetUID(), created.GetUID(), dir, obj.GetAnnotations(), obj.GetGeneration())
		}
		return nil
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             untouched,
		Steps: []resource.TestStep{
			{
				Config:      deploymentConfig(ns, "flink:2.2.1-java17", `  wait_for = "none"`),
				ExpectError: errorRE("FlinkDeployment already exists", "never takes over", "terraform import ADDRESS "+ns+"/orders"),
			},
			// CheckDestroy runs only when the state still holds something.
			destroyThenCheck(deploymentConfig(ns, "flink:2.2.1-java17", `  wait_for = "none"`), untouched),
		},
	})
}
