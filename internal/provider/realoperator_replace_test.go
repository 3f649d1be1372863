package provider

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// TestAccRealOperator_replace: renaming a running stateful deployment
// forces its replacement (name is RequiresReplace). On the real operator
// 1.15.0, with its pods run as real Flink 2.2.1: the provider's final
// savepoint of the old job is taken by the operator in Flink before the
// FlinkDeployment is deleted (resource_deployment_final.go; the operator
// itself would cancel without one), and the replacement starts from it
// (spec.job.initialSavepointPath, which the operator records and hands to
// Flink): its counters continue from the old job's, nothing is lost; the
// next plan is empty.
func TestAccRealOperator_replace(t *testing.T) {
	fx := newRealOperatorFixture(t)
	ns, node, bucket, role, oidc := fx.ns, fx.node, fx.bucket, fx.role, fx.oidc
	ctx := context.Background()
	var before map[int]int64
	var jobA, carried string
	var old *testbed.FlinkCluster
	orders := realFlinkOperatorConfig(bucket, oidc, role, ns, "", "")
	renamed := strings.Replace(orders, `name              = "counts"`, `name              = "counts-v2"`, 1)
	if renamed == orders {
		t.Fatal("the configuration names no deployment counts")
	}
	savepointRE := regexp.MustCompile(`^s3://` + regexp.QuoteMeta(bucket) + `/flink/counts/savepoints/savepoint-[0-9a-f]{6}-[0-9a-f]{12}$`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: orders,
				ConfigStateChecks: []statecheck.StateCheck{
					recordAttr("flinkstate_deployment.counts", "job_id", &jobA),
					expectAPI(func() error {
						c, err := lastCluster(node, ns, "counts")
						if err != nil {
							return err
						}
						old = c
						_, before, err = c.WaitCounts(ctx, 2, 2*time.Minute)
						return err
					}),
				},
			},
			{
				Config: renamed,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flinkstate_deployment.counts", plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectUnknownValue("flinkstate_deployment.counts", tfjsonpath.New("upgrade_savepoint_path")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("flinkstate_deployment.counts", tfjsonpath.New("upgrade_savepoint_path"), knownvalue.StringRegexp(savepointRE)),
					statecheck.ExpectKnownValue("flinkstate_deployment.counts", tfjsonpath.New("job_state"), knownvalue.StringExact("RUNNING")),
					recordAttr("flinkstate_deployment.counts", "upgrade_savepoint_path", &carried),
					expectAPI(func() error {
						// The final savepoint: one FlinkStateSnapshot of the
						// old deployment, COMPLETED by the real operator, of
						// job A, every file it references in S3, and the one
						// the replacement carries.
						if err := checkFinalSavepoint(t, ns, "counts"); err != nil {
							return err
						}
						if sps := finalSavepoints(t, ns, "counts"); sps[0].Path != carried {
							return fmt.Errorf("upgrade_savepoint_path %q, want the final savepoint %q", carried, sps[0].Path)
						}
						if !strings.Contains(carried, "/savepoint-"+jobA[:6]+"-") {
							return fmt.Errorf("final savepoint %s is not one of the old job %s", carried, jobA)
						}
						obj, err := getDeployment(t, ns, "counts-v2")
						if err != nil {
							return err
						}
						if got, _, _ := unstructured.NestedString(obj.Object, "spec", "job", "initialSavepointPath"); got != carried {
							return fmt.Errorf("counts-v2 starts from %q, want %q", got, carried)
						}
						if _, err := getDeployment(t, ns, "counts"); err == nil {
							return errors.New("the old FlinkDeployment counts is still there")
						}
						c, err := lastCluster(node, ns, "counts-v2")
						if err != nil {
							return err
						}
						if err := restoredFrom(t, c, ns, "counts-v2", carried); err != nil {
							return err
						}
						// The old job printed until the operator cancelled it,
						// after the savepoint: its last counts bound the
						// savepoint's from above, step 1's from below.
						_, last := old.Counts()
						firstCounts, _, err := c.WaitCounts(ctx, 1, 2*time.Minute)
						if err != nil {
							return err
						}
						for k, n := range firstCounts {
							if n <= before[k] || n > last[k]+1 {
								return fmt.Errorf("key %d: the replacement counted from %d; the old job had printed %d at step 1 and %d last: state lost", k, n, before[k], last[k])
							}
						}
						t.Logf("replacement started from %s: first counts %v (the old job's %v at step 1, %v last)", carried, firstCounts, before, last)
						return nil
					}),
				},
			},
			{Config: renamed, PlanOnly: true},
		},
	})
}

// movedToNamespace is the real-Flink stack of realFlinkOperatorConfig with
// its deployment moved to ns2: a second IAM role, trusted by ns2's
// ServiceAccount (IRSA trusts one namespace and ServiceAccount) and
// granted the same state store, and that ServiceAccount in ns2. The
// first role and ServiceAccount stay: the old deployment's final savepoint
// is taken with them before it is deleted.
func movedToNamespace(c, oidc, ns, ns2, role2 string) (string, error) {
	moved := strings.Replace(c, "\n  namespace         = "+fmt.Sprintf("%q", ns), "\n  namespace         = "+fmt.Sprintf("%q", ns2), 1)
	moved = strings.Replace(moved, "\n  service_account   = flinkstate_service_account.counts.name", "\n  service_account   = flinkstate_service_account.counts_moved.name", 1)
	if strings.Count(moved, ns2) != 1 || !strings.Contains(moved, "counts_moved") {
		return "", errors.New("the configuration's deployment block is not as expected")
	}
	return moved + fmt.Sprintf(`
resource "flinkstate_iam_role" "counts_moved" {
  name = %[1]q
  irsa {
    oidc_provider_arn = %[2]q
    namespace         = %[3]q
    service_account   = "flink-counts"
  }
  state_store_ids = [flinkstate_state_store.counts.id]
}

resource "flinkstate_service_account" "counts_moved" {
  namespace     = %[3]q
  name          = "flink-counts"
  irsa_role_arn = flinkstate_iam_role.counts_moved.arn
}
`, role2, oidc, ns2), nil
}

// TestAccRealOperator_replaceIntoOtherNamespace (issue 34): moving a
// running stateful deployment to another namespace forces its replacement
// (namespace is RequiresReplace), as renaming does
// (TestAccRealOperator_replace). The real operator 1.15.0 watches both
// namespaces and the node runs both as real Flink 2.2.1: the provider's
// final savepoint of the old job is taken before its FlinkDeployment in
// the first namespace is deleted, and the replacement in the second
// namespace, with its own ServiceAccount and IRSA role on the same state
// store, starts from it (spec.job.initialSavepointPath, recorded by the
// operator as status.jobStatus.upgradeSavepointPath and handed to Flink):
// its counters continue; the next plan is empty.
func TestAccRealOperator_replaceIntoOtherNamespace(t *testing.T) {
	requireOperatorJars(t)
	rf := newRealFlink(t)
	ns, ns2 := testNamespace(t), testNamespace(t)
	node := startRealOperatorIn(t, rf, []string{ns, ns2})
	bucket, role, role2 := randName("ro-"), randName("ro-"), randName("ro-")
	oidc := testOIDCProvider(t)
	ctx := context.Background()
	var before map[int]int64
	var jobA, carried string
	var old *testbed.FlinkCluster
	orders := realFlinkOperatorConfig(bucket, oidc, role, ns, "", "")
	moved, err := movedToNamespace(orders, oidc, ns, ns2, role2)
	if err != nil {
		t.Fatal(err)
	}
	savepointRE := regexp.MustCompile(`^s3://` + regexp.QuoteMeta(bucket) + `/flink/counts/savepoints/savepoint-[0-9a-f]{6}-[0-9a-f]{12}$`)
	const addr = "flinkstate_deployment.counts"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: orders,
				ConfigStateChecks: []statecheck.StateCheck{
					recordAttr(addr, "job_id", &jobA),
					expectAPI(func() error {
						c, err := lastCluster(node, ns, "counts")
						if err != nil {
							return err
						}
						old = c
						_, before, err = c.WaitCounts(ctx, 2, 2*time.Minute)
						return err
					}),
				},
			},
			{
				Config: moved,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectUnknownValue(addr, tfjsonpath.New("upgrade_savepoint_path")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("namespace"), knownvalue.StringExact(ns2)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("upgrade_savepoint_path"), knownvalue.StringRegexp(savepointRE)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("job_state"), knownvalue.StringExact("RUNNING")),
					recordAttr(addr, "upgrade_savepoint_path", &carried),
					expectAPI(func() error {
						// The final savepoint: one FlinkStateSnapshot of the
						// old deployment in the first namespace, COMPLETED
						// by the real operator, of job A, and the one the
						// replacement carries.
						if err := checkFinalSavepoint(t, ns, "counts"); err != nil {
							return err
						}
						if sps := finalSavepoints(t, ns, "counts"); sps[0].Path != carried {
							return fmt.Errorf("upgrade_savepoint_path %q, want the final savepoint %q", carried, sps[0].Path)
						}
						if !strings.Contains(carried, "/savepoint-"+jobA[:6]+"-") {
							return fmt.Errorf("final savepoint %s is not one of the old job %s", carried, jobA)
						}
						if _, err := getDeployment(t, ns, "counts"); err == nil {
							return fmt.Errorf("the old FlinkDeployment %s/counts is still there", ns)
						}
						obj, err := getDeployment(t, ns2, "counts")
						if err != nil {
							return err
						}
						if got, _, _ := unstructured.NestedString(obj.Object, "spec", "job", "initialSavepointPath"); got != carried {
							return fmt.Errorf("%s/counts starts from %q, want %q", ns2, got, carried)
						}
						if got, _, _ := unstructured.NestedString(obj.Object, "spec", "serviceAccount"); got != "flink-counts" {
							return fmt.Errorf("%s/counts runs as ServiceAccount %q", ns2, got)
						}
						c, err := lastCluster(node, ns2, "counts")
						if err != nil {
							return err
						}
						if err := restoredFrom(t, c, ns2, "counts", carried); err != nil {
							return err
						}
						// The old job printed until the operator cancelled it,
						// after the savepoint: its last counts bound the
						// savepoint's from above, step 1's from below.
						_, last := old.Counts()
						firstCounts, _, err := c.WaitCounts(ctx, 1, 2*time.Minute)
						if err != nil {
							return err
						}
						for k, n := range firstCounts {
							if n <= before[k] || n > last[k]+1 {
								return fmt.Errorf("key %d: the replacement counted from %d; the old job had printed %d at step 1 and %d last: state lost", k, n, before[k], last[k])
							}
						}
						t.Logf("replacement in %s started from %s: first counts %v (the old job's %v at step 1, %v last)", ns2, carried, firstCounts, before, last)
						return nil
					}),
				},
			},
			{Config: moved, PlanOnly: true},
		},
	})
}
