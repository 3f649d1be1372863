package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// Every operator example FlinkStateSnapshot (paths moved to S3) imports with
// an import block and -generate-config-out: the generated configuration is
// valid as written (its computed path included) and the import plans no
// change, in particular no replacement, which for a savepoint the operator
// disposes of on delete (its default) would delete the savepoint's files.
func TestAccSnapshot_adoptOperatorExamples(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	ns := testNamespace(t)
	examples := operatorExamples(t, "FlinkStateSnapshot")
	if len(examples) != 5 {
		t.Fatalf("found %d example FlinkStateSnapshots, want the operator's 5", len(examples))
	}
	names := slices.Sorted(maps.Keys(examples))
	// The job the examples snapshot (jobReference example-deployment), run
	// by the operator model so that they complete before the import.
	startOperator(t, ns)
	runExampleDeployment(t, ns)
	for i, n := range names {
		obj := examples[n]
		name := adaptSnapshotExample(obj, ns, n)
		serverSide := i%2 == 0
		t.Run(n, func(t *testing.T) {
			applySnapshotExample(t, obj, serverSide)
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testProviderFactories,
				Steps: []resource.TestStep{{
					Config:          "# adopting " + n + "\n",
					ResourceName:    "flinkstate_snapshot.adopted",
					ImportState:     true,
					ImportStateKind: resource.ImportBlockWithID,
					ImportStateId:   ns + "/" + name,
					GenerateConfig:  true,
				}},
			})
		})
	}
}

// An imported savepoint that the operator disposes of on delete (its
// default, or disposeOnDelete: true) is never deleted by a replacement: a
// change that would replace it is refused at plan, naming the files; its
// destroy is announced with them.
func TestAccSnapshot_adoptedDisposingNotReplaced(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	dep := operatorExamples(t, "FlinkDeployment")["basic-checkpoint-ha"]
	adaptExample(t, dep, ns, "example-deployment")
	kubectlApply(t, dep, false)
	if _, err := kube.WaitDeployment(context.Background(), testKube(t).Dynamic, ns, "example-deployment", "running", time.Minute, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	sp := operatorExamples(t, "FlinkStateSnapshot")["snapshot_savepoint-job-defaults"]
	sp.SetNamespace(ns)
	kubectlApplyGVR(t, kube.FlinkStateSnapshotGVR, sp, true)
	st, err := kube.WaitSnapshot(context.Background(), testKube(t).Dynamic, ns, "example-savepoint", time.Minute, 100*time.Millisecond)
	if err != nil || st.Path == "" {
		t.Fatalf("savepoint: %+v, %v", st, err)
	}
	cfg := func(format string, dispose bool) string {
		return fmt.Sprintf(`
resource "flinkstate_snapshot" "adopted" {
  namespace         = %q
  deployment_name   = "example-deployment"
  name_prefix       = "example-savepoint"
  format_type       = %q
  dispose_on_delete = %v
  backoff_limit     = 0
}
`, ns, format, dispose)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		// Destroyed with dispose_on_delete = false: the savepoint stays.
		CheckDestroy: func(*terraform.State) error {
			return restorable(t, st.Path)
		},
		Steps: []resource.TestStep{
			{
				Config:             cfg("CANONICAL", true),
				ResourceName:       "flinkstate_snapshot.adopted",
				ImportState:        true,
				ImportStateId:      ns + "/example-savepoint",
				ImportStatePersist: true,
			},
			{
				// The operator's default, read as such: disposed of on delete.
				Config:   cfg("CANONICAL", true),
				PlanOnly: true,
			},
			{
				Config:      cfg("NATIVE", true),
				PlanOnly:    true,
				ExpectError: errorRE("Replacing the snapshot would delete its savepoint", "format_type", st.Path, "dispose_on_delete = false"),
			},
			{
				// Keeping it: an in-place update of the same object.
				Config: cfg("CANONICAL", false),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flinkstate_snapshot.adopted", plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error {
					o, err := getSnapshot(t, ns, "example-savepoint")
					if err != nil {
						return err
					}
					if d, _, _ := unstructured.NestedBool(o.Object, "spec", "savepoint", "disposeOnDelete"); d {
						return fmt.Errorf("spec.savepoint.disposeOnDelete still true")
					}
					return nil
				},
			},
		},
	})
}
