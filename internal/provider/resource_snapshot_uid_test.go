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

// Without a refresh, a destroy reaches the API server with the name of a
// FlinkStateSnapshot that was deleted and created again by someone else:
// the UID precondition leaves the other object alone.
func TestAccSnapshot_destroyNeverDeletesReplacement(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	ns := testNamespace(t)
	startOperator(t, ns)
	runningJob(t, ns, "orders", map[string]any{"execution.checkpointing.savepoint-dir": "s3://acme-flink-state/flink/orders/savepoints"})
	var name string
	var theirUID ktypes.UID
	config := snapshotConfig(ns, "")
	rec := &diagRecorder{}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.factories(),
		AdditionalCLIOptions:     &resource.AdditionalCLIOptions{Plan: resource.PlanOptions{NoRefresh: true}},
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: func(s *terraform.State) error {
					name = s.RootModule().Resources["flinkstate_snapshot.test"].Primary.Attributes["name"]
					return nil
				},
			},
			{
				PreConfig: func() {
					ctx, r := context.Background(), testKube(t).Dynamic.Resource(kube.FlinkStateSnapshotGVR).Namespace(ns)
					ours, err := r.Get(ctx, name, metav1.GetOptions{})
					if err != nil {
						t.Fatal(err)
					}
					if err := kube.DeleteAndWait(ctx, testKube(t).Dynamic, kube.FlinkStateSnapshotGVR, ns, name, 30*time.Second); err != nil {
						t.Fatal(err)
					}
					theirs := &unstructured.Unstructured{Object: map[string]any{
						"apiVersion": ours.GetAPIVersion(), "kind": ours.GetKind(),
						"metadata": map[string]any{"name": name, "namespace": ns, "annotations": map[string]any{"owner": "other-team"}},
						"spec":     ours.Object["spec"],
					}}
					created, err := r.Create(ctx, theirs, metav1.CreateOptions{FieldManager: "other-team"})
					if err != nil {
						t.Fatal(err)
					}
					theirUID = created.GetUID()
				},
				Config:  config,
				Destroy: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flinkstate_snapshot.test", plancheck.ResourceActionDestroy),
				}},
			},
			destroyThenCheck(config, resource.ComposeAggregateTestCheckFunc(
				rec.expectWarning("ApplyResourceChange", "FlinkStateSnapshot replaced outside Terraform", "it was not deleted"),
				func(*terraform.State) error {
					obj, err := getSnapshot(t, ns, name)
					if err != nil {
						return fmt.Errorf("the other owner's FlinkStateSnapshot: %w", err)
					}
					if obj.GetUID() != theirUID {
						return fmt.Errorf("the other owner's FlinkStateSnapshot was replaced: uid %s, was %s", obj.GetUID(), theirUID)
					}
					return nil
				},
			)),
		},
	})
}
