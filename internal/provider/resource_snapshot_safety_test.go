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

// Issue item 9: a snapshot with triggers, imported through an import
// block, plans no change (the triggers are stored on the object).
func TestAccSnapshot_importKeepsTriggers(t *testing.T) {
	skipUnlessAcc(t)
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
