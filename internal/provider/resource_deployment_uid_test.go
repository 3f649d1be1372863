package provider

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// replaceDeploymentOutOfBand deletes the FlinkDeployment "orders" that
// terraform created and creates another owner's of the same name, as a
// kubectl user would; it returns the new object's UID.
func replaceDeploymentOutOfBand(t *testing.T, ns string) ktypes.UID {
	t.Helper()
	ctx, dyn := context.Background(), testKube(t).Dynamic
	if err := kube.DeleteAndWait(ctx, dyn, kube.FlinkDeploymentGVR, ns, "orders", 30*time.Second); err != nil {
		t.Fatal(err)
	}
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
	created, err := dyn.Resource(kube.FlinkDeploymentGVR).Namespace(ns).Create(ctx, theirs, metav1.CreateOptions{FieldManager: "other-team"})
	if err != nil {
		t.Fatal(err)
	}
	return created.GetUID()
}

// foreignDeploymentUntouched checks that the other owner's FlinkDeployment
// is still there with its UID, generation (nothing rewrote its spec) and
// checkpoint directory.
func foreignDeploymentUntouched(t *testing.T, ns string, uid *ktypes.UID) func(*terraform.State) error {
	return func(*terraform.State) error {
		obj, err := getDeployment(t, ns, "orders")
		if err != nil {
			return fmt.Errorf("the other owner's FlinkDeployment: %w", err)
		}
		dir, _, _ := unstructured.NestedString(obj.Object, "spec", "flinkConfiguration", "execution.checkpointing.dir")
		if obj.GetUID() != *uid || obj.GetGeneration() != 1 || dir != "s3://other-team/checkpoints" {
			return fmt.Errorf("the other owner's FlinkDeployment changed: uid %s (was %s), generation %d, checkpoint dir %q",
				obj.GetUID(), *uid, obj.GetGeneration(), dir)
		}
		return nil
	}
}

// destroyThenCheck is a terraform destroy of config followed by check. A
// TestCase's CheckDestroy runs only when the state still holds a resource,
// so a test whose last step left the state empty checks what the destroy
// left with this step instead. (A destroy step with a Check refreshes
// before destroying.)
func destroyThenCheck(config string, check resource.TestCheckFunc) resource.TestStep {
	return resource.TestStep{Config: config, Destroy: true, Check: check}
}

// The FlinkDeployment this configuration created is deleted and another
// owner creates one of the same name: the refresh does not take it for
// ours, so the plan is a create (not an update that would rewrite it), the
// create refuses it, and the destroy leaves it with its UID.
func TestAccDeployment_replacedOutsideTerraformIsNotOurs(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	ns := testNamespace(t)
	var theirUID ktypes.UID
	config := deploymentConfig(ns, "flink:2.2.1-java17", `  wait_for = "none"`)
	rec := &diagRecorder{}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.factories(),
		CheckDestroy:             foreignDeploymentUntouched(t, ns, &theirUID),
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig: func() { theirUID = replaceDeploymentOutOfBand(t, ns) },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flinkstate_deployment.orders", plancheck.ResourceActionCreate),
				}},
				ExpectError: errorRE("FlinkDeployment already exists", "terraform import ADDRESS "+ns+"/orders"),
			},
			destroyThenCheck(config, resource.ComposeAggregateTestCheckFunc(
				rec.expectWarning("ReadResource", "FlinkDeployment replaced outside Terraform", ns+"/orders now has UID",
					"dropped from this state and left alone"),
				foreignDeploymentUntouched(t, ns, &theirUID),
			)),
		},
	})
}

// Without a refresh (terraform plan -refresh=false), the state still names
// the replaced object: the update refuses to rewrite the other owner's
// FlinkDeployment (its UID is not ours).
func TestAccDeployment_updateNeverRewritesReplacement(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	ns := testNamespace(t)
	var theirUID ktypes.UID
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		AdditionalCLIOptions:     &resource.AdditionalCLIOptions{Plan: resource.PlanOptions{NoRefresh: true}},
		CheckDestroy:             foreignDeploymentUntouched(t, ns, &theirUID),
		Steps: []resource.TestStep{
			{Config: deploymentConfig(ns, "flink:2.2.1-java17", `  wait_for = "none"`)},
			{
				PreConfig: func() { theirUID = replaceDeploymentOutOfBand(t, ns) },
				Config:    deploymentConfig(ns, "flink:2.2.1-java21", `  wait_for = "none"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flinkstate_deployment.orders", plancheck.ResourceActionUpdate),
				}},
				ExpectError: errorRE("Updating FlinkDeployment "+ns+"/orders failed", "replaced outside Terraform", "UID"),
			},
		},
	})
}

// Without a refresh, a destroy reaches the API server with the replaced
// object's name: the UID precondition makes the API server refuse to delete
// the other owner's FlinkDeployment, and the destroy ends without error
// (nothing of this configuration is left).
func TestAccDeployment_destroyNeverDeletesReplacement(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	ns := testNamespace(t)
	var theirUID ktypes.UID
	config := deploymentConfig(ns, "flink:2.2.1-java17", `  wait_for = "none"`)
	rec := &diagRecorder{}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.factories(),
		AdditionalCLIOptions:     &resource.AdditionalCLIOptions{Plan: resource.PlanOptions{NoRefresh: true}},
		CheckDestroy:             foreignDeploymentUntouched(t, ns, &theirUID),
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig: func() { theirUID = replaceDeploymentOutOfBand(t, ns) },
				Config:    config,
				Destroy:   true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flinkstate_deployment.orders", plancheck.ResourceActionDestroy),
				}},
			},
			// Checked in a step of its own: a Check on the destroy step
			// would refresh first (dropping the replaced object from state,
			// so Delete would not be reached), and CheckDestroy is skipped
			// once the state is empty.
			destroyThenCheck(config, resource.ComposeAggregateTestCheckFunc(
				rec.expectWarning("ApplyResourceChange", "FlinkDeployment replaced outside Terraform", "has UID", "it was not deleted"),
				foreignDeploymentUntouched(t, ns, &theirUID),
			)),
		},
	})
}
