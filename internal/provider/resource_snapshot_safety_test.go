package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// checkOneSnapshot checks the namespace holds exactly one FlinkStateSnapshot,
// the one in state: no second savepoint was triggered.
func checkOneSnapshot(t *testing.T, ns string, name *string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		list, err := testKube(t).Dynamic.Resource(kube.FlinkStateSnapshotGVR).Namespace(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return err
		}
		inState := s.RootModule().Resources["flinkstate_snapshot.test"].Primary.Attributes["name"]
		if *name == "" {
			*name = inState
		}
		if len(list.Items) != 1 || list.Items[0].GetName() != *name || inState != *name {
			var names []string
			for _, o := range list.Items {
				names = append(names, o.GetName())
			}
			return fmt.Errorf("want only snapshot %s (in state: %s), found %v", *name, inState, names)
		}
		return nil
	}
}

// The API server is unreachable for 3 s while create waits for the
// savepoint: the wait rides it out; one snapshot, and nothing to do after.
func TestAccSnapshot_apiServerStopDuringWait(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	ns := testNamespace(t)
	proxy, provider := kubeFaultProxy(t)
	op := startOperator(t, ns)
	runningJob(t, ns, "orders", map[string]any{"execution.checkpointing.savepoint-dir": "s3://acme-flink-state/flink/orders/savepoints"})
	faultOver := stopAPIServerDuringWait(t, proxy, op, 3*time.Second, func() bool {
		list, err := testKube(t).Dynamic.Resource(kube.FlinkStateSnapshotGVR).Namespace(ns).List(context.Background(), metav1.ListOptions{})
		return err == nil && len(list.Items) > 0
	})
	var name string
	config := provider + snapshotConfig(ns, "")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkNoSnapshots(t, ns),
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: resource.ComposeAggregateTestCheckFunc(
					func(*terraform.State) error { return faultOver() },
					resource.TestCheckResourceAttr("flinkstate_snapshot.test", "state", "COMPLETED"),
					checkOneSnapshot(t, ns, &name),
				),
			},
			{
				Config:           config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check:            checkOneSnapshot(t, ns, &name),
			},
		},
	})
}

// A savepoint slower than the create timeout is kept, not tainted: the next
// apply waits for the same object instead of triggering another savepoint.
func TestAccSnapshot_slowerThanCreateTimeout(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	ns := testNamespace(t)
	op := startOperator(t, ns)
	runningJob(t, ns, "orders", map[string]any{"execution.checkpointing.savepoint-dir": "s3://acme-flink-state/flink/orders/savepoints"})
	// The operator stops: nothing answers the snapshot.
	op.SetFaults(func(f *testbed.Faults) { f.Down = true })
	var name string
	config := snapshotConfig(ns, `  timeouts {
    create = "3s"
  }`)
	slow := strings.Replace(config, `create = "3s"`, `create = "2m"`, 1)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkNoSnapshots(t, ns),
		Steps: []resource.TestStep{
			{
				Config:             config,
				ExpectNonEmptyPlan: true, // the wait is pending: the next plan is an update
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("flinkstate_snapshot.test", "state", ""),
					checkOneSnapshot(t, ns, &name),
				),
			},
			{
				// Still in progress: the update waits again and says so; no new snapshot.
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flinkstate_snapshot.test", plancheck.ResourceActionUpdate),
				}},
				ExpectError: errorRE("Snapshot did not complete", "did not complete in time", "no status yet"),
			},
			{
				// The operator is back: the same object completes.
				PreConfig: func() { op.SetFaults(func(f *testbed.Faults) { f.Down = false }) },
				Config:    slow,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flinkstate_snapshot.test", plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("flinkstate_snapshot.test", "state", kube.SnapshotCompleted),
					resource.TestCheckResourceAttrSet("flinkstate_snapshot.test", "path"),
					checkOneSnapshot(t, ns, &name),
				),
			},
			{Config: slow, PlanOnly: true},
		},
	})
}

// A snapshot with triggers, imported through an import
// block, plans no change (the triggers are stored on the object).
func TestAccSnapshot_importKeepsTriggers(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	ns := testNamespace(t)
	startOperator(t, ns)
	runningJob(t, ns, "orders", map[string]any{"execution.checkpointing.savepoint-dir": "s3://acme-flink-state/flink/orders/savepoints"})
	config := snapshotConfig(ns, `  triggers = { image = "flink:2.2.1-java17" }`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_5_0)},
		CheckDestroy:             checkNoSnapshots(t, ns),
		Steps: []resource.TestStep{
			{Config: config},
			{
				// terraform plan with an import block must be a no-op import.
				Config:          config,
				ResourceName:    "flinkstate_snapshot.test",
				ImportState:     true,
				ImportStateKind: resource.ImportBlockWithID,
				ImportStateIdFunc: func(s *terraform.State) (string, error) {
					return ns + "/" + s.RootModule().Resources["flinkstate_snapshot.test"].Primary.Attributes["name"], nil
				},
			},
		},
	})
}

// A dispose_on_delete savepoint whose job is gone: the operator would keep
// its finalizer (StateSnapshotReconciler.cleanup disposes only through the
// running job), so destroy refuses at once instead of waiting out the
// delete timeout, deletes nothing, and the way out it names (keep the
// files) destroys cleanly with the savepoint's files still there.
func TestAccSnapshot_disposeRefusedWithoutRunningJob(t *testing.T) {
	skipUnlessAcc(t)
	ns := snapshotJob(t)
	var name, savepoint string
	// A short delete timeout: without the check, destroy would wait on the
	// finalizer for that long and then fail differently.
	config := func(dispose bool) string {
		return snapshotConfig(ns, fmt.Sprintf("  dispose_on_delete = %t\n  timeouts {\n    delete = \"20s\"\n  }", dispose))
	}
	untouched := func() {
		obj, err := getSnapshot(t, ns, name)
		if err != nil {
			t.Fatalf("snapshot %s after a refused destroy: %v", name, err)
		}
		if obj.GetDeletionTimestamp() != nil {
			t.Fatalf("snapshot %s was deleted (deletionTimestamp %v) by a refused destroy", name, obj.GetDeletionTimestamp())
		}
		checkSavepointFiles(t, savepoint)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(checkNoSnapshots(t, ns), func(*terraform.State) error {
			checkSavepointFiles(t, savepoint)
			return nil
		}),
		Steps: []resource.TestStep{
			{
				Config: config(true),
				Check: func(s *terraform.State) error {
					name, savepoint = attrOf(s, snapAddr, "name"), attrOf(s, snapAddr, "path")
					return nil
				},
			},
			{
				PreConfig: func() {
					if err := kube.DeleteAndWait(context.Background(), testKube(t).Dynamic, kube.FlinkDeploymentGVR, ns, "orders", time.Minute); err != nil {
						t.Fatal(err)
					}
				},
				Config:      config(true),
				Destroy:     true,
				ExpectError: errorRE("Savepoint cannot be disposed of now", "was not deleted", "FlinkDeployment "+ns+"/orders", "does not exist", "dispose_on_delete = false"),
			},
			{
				PreConfig: untouched,
				Config:    config(false),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(snapAddr, plancheck.ResourceActionUpdate),
				}},
			},
		},
	})
}

// checkSavepointFiles fails the test unless the savepoint at path (an
// s3:// directory) still has its _metadata.
func checkSavepointFiles(t *testing.T, path string) {
	t.Helper()
	bucket, key, _ := strings.Cut(strings.TrimPrefix(path, "s3://"), "/")
	if _, err := testAWS(t).S3.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(bucket),
		Key: aws.String(key + "/_metadata")}); err != nil {
		t.Fatalf("savepoint %s lost its _metadata: %v", path, err)
	}
}
