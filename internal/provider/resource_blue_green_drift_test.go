package provider

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// editBlueGreen merge-patches the live FlinkBlueGreenDeployment orders, as
// kubectl edit would (another field manager).
func editBlueGreen(t *testing.T, ns, patch string) {
	t.Helper()
	_, err := testKube(t).Dynamic.Resource(kube.FlinkBlueGreenDeploymentGVR).Namespace(ns).Patch(context.Background(), "orders",
		k8stypes.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "kubectl-edit"})
	if err != nil {
		t.Fatal(err)
	}
}

// The operator's options changed outside Terraform (a longer abort grace
// period, a deletion delay added: both jobs would run side by side longer)
// show in the plan as an update, and its apply writes the configuration's
// options back, removing the one it leaves out.
func TestAccBlueGreen_optionsDriftIsPlannedAndUndone(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	cfg := blueGreenConfig(ns, "flink:2.2.1-java17", "  blue_green {\n    abort_grace_period = \"10 min\"\n  }")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBlueGreenGone(t, ns),
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig: func() {
					editBlueGreen(t, ns, `{"spec":{"configuration":{"kubernetes.operator.bluegreen.abort.grace-period":"1 h",`+
						`"kubernetes.operator.bluegreen.deployment-deletion.delay":"1 h"}}}`)
				},
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(bgAddr, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{expectAPI(func() error {
					obj, err := testKube(t).Dynamic.Resource(kube.FlinkBlueGreenDeploymentGVR).Namespace(ns).Get(context.Background(), "orders", metav1.GetOptions{})
					if err != nil {
						return err
					}
					got, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "configuration")
					if want := map[string]string{"kubernetes.operator.bluegreen.abort.grace-period": "10 min"}; !reflect.DeepEqual(got, want) {
						return fmt.Errorf("spec.configuration %v after the apply, want %v", got, want)
					}
					return nil
				})},
			},
			{Config: cfg, PlanOnly: true},
		},
	})
}

// The template's upgrade mode changed outside Terraform to stateless (the
// next transition would start the new child without the running one's
// state; the operator patches it into the active child in place, a change
// of only a field its diff ignores) shows in the plan.
func TestAccBlueGreen_templateDriftIsPlanned(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	cfg := blueGreenConfig(ns, "flink:2.2.1-java17", "")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBlueGreenGone(t, ns),
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig:          func() { editBlueGreen(t, ns, `{"spec":{"template":{"spec":{"job":{"upgradeMode":"stateless"}}}}}`) },
				Config:             cfg,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(bgAddr, plancheck.ResourceActionUpdate),
				}},
			},
		},
	})
}
