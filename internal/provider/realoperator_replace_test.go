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

// realOperatorReplace is a replacement of the running stateful deployment
// counts in ns (orders) by the deployment newName in newNS (replaced) on
// the real operator, whose node runs both as real Flink.
type realOperatorReplace struct {
	node             *testbed.Node
	bucket, ns       string
	orders, replaced string
	newNS, newName   string
	// checks are state checks of the replacement's step besides the
	// shared ones; checkNew checks the new FlinkDeployment besides its
	// initialSavepointPath.
	checks   []statecheck.StateCheck
	checkNew func(obj *unstructured.Unstructured) error
}

// steps: the old job runs and counts; the replacement (destroy before
// create) takes the provider's final savepoint of the old job, deletes the
// old FlinkDeployment and starts the new one from it (recorded by the
// operator and handed to Flink), its counters continuing from the old
// job's; the next plan is empty.
func (r realOperatorReplace) steps(t *testing.T) []resource.TestStep {
	ctx := context.Background()
	var before map[int]int64
	var jobA, carried string
	var old *testbed.FlinkCluster
	savepointRE := regexp.MustCompile(`^s3://` + regexp.QuoteMeta(r.bucket) + `/flink/counts/savepoints/savepoint-[0-9a-f]{6}-[0-9a-f]{12}$`)
	return []resource.TestStep{
		{
			Config: r.orders,
			ConfigStateChecks: []statecheck.StateCheck{
				recordAttr(countsAddr, "job_id", &jobA),
				expectAPI(func() error {
					c, err := lastCluster(r.node, r.ns, "counts")
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
			Config: r.replaced,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(countsAddr, plancheck.ResourceActionDestroyBeforeCreate),
				plancheck.ExpectUnknownValue(countsAddr, tfjsonpath.New("upgrade_savepoint_path")),
			}},
			ConfigStateChecks: append(append([]statecheck.StateCheck{}, r.checks...),
				statecheck.ExpectKnownValue(countsAddr, tfjsonpath.New("upgrade_savepoint_path"), knownvalue.StringRegexp(savepointRE)),
				statecheck.ExpectKnownValue(countsAddr, tfjsonpath.New("job_state"), knownvalue.StringExact("RUNNING")),
				recordAttr(countsAddr, "upgrade_savepoint_path", &carried),
				expectAPI(func() error {
					// The final savepoint: one FlinkStateSnapshot of the
					// old deployment, COMPLETED by the real operator, of
					// job A, every file it references in S3, and the one
					// the replacement carries.
					if err := checkFinalSavepoint(t, r.ns, "counts"); err != nil {
						return err
					}
					if sps := finalSavepoints(t, r.ns, "counts"); sps[0].Path != carried {
						return fmt.Errorf("upgrade_savepoint_path %q, want the final savepoint %q", carried, sps[0].Path)
					}
					if !strings.Contains(carried, "/savepoint-"+jobA[:6]+"-") {
						return fmt.Errorf("final savepoint %s is not one of the old job %s", carried, jobA)
					}
					if _, err := getDeployment(t, r.ns, "counts"); err == nil {
						return fmt.Errorf("the old FlinkDeployment %s/counts is still there", r.ns)
					}
					obj, err := getDeployment(t, r.newNS, r.newName)
					if err != nil {
						return err
					}
					if got, _, _ := unstructured.NestedString(obj.Object, "spec", "job", "initialSavepointPath"); got != carried {
						return fmt.Errorf("%s/%s starts from %q, want %q", r.newNS, r.newName, got, carried)
					}
					if r.checkNew != nil {
						if err := r.checkNew(obj); err != nil {
							return err
						}
					}
					c, err := lastCluster(r.node, r.newNS, r.newName)
					if err != nil {
						return err
					}
					if err := restoredFrom(t, c, r.newNS, r.newName, carried); err != nil {
						return err
					}
					// Stop, don't cancel (issue 45): the operator stopped the
					// old job with the savepoint, so it processed nothing
					// after it, and every key's count runs on from the old
					// job's last printed one: none printed twice (n <=
					// last), none lost (n > last+1).
					_, last := old.Counts()
					firstCounts, _, err := c.WaitCounts(ctx, 1, 2*time.Minute)
					if err != nil {
						return err
					}
					for k, n := range firstCounts {
						switch {
						case n <= last[k]:
							return fmt.Errorf("key %d: the replacement printed %d first, the old job %d last: counts %d..%d printed twice", k, n, last[k], n, last[k])
						case n > last[k]+1:
							return fmt.Errorf("key %d: the replacement printed %d first, the old job %d last: counts lost", k, n, last[k])
						}
					}
					if len(firstCounts) != len(last) || len(last) == 0 {
						return fmt.Errorf("the replacement printed keys %v, the old job %v", firstCounts, last)
					}
					t.Logf("replacement %s/%s started from %s: first counts %v (the old job's %v at step 1, %v last)", r.newNS, r.newName, carried, firstCounts, before, last)
					return nil
				}),
			),
		},
		{Config: r.replaced, PlanOnly: true},
	}
}

// TestAccRealOperator_replace: renaming a running stateful deployment
// forces its replacement (name is RequiresReplace). On the real operator
// 1.15.0, with its pods run as real Flink 2.2.1: the provider's final
// savepoint of the old job is taken by the operator in Flink before the
// FlinkDeployment is deleted (resource_deployment_restore.go; the operator
// itself would cancel without one), and the replacement starts from it
// (spec.job.initialSavepointPath, which the operator records and hands to
// Flink): its counters continue from the old job's, nothing is lost; the
// next plan is empty.
func TestAccRealOperator_replace(t *testing.T) {
	fx := newRealOperatorFixture(t)
	orders := realFlinkOperatorConfig(fx.bucket, fx.oidc, fx.role, fx.ns, "", "")
	renamed := strings.Replace(orders, `name              = "counts"`, `name              = "counts-v2"`, 1)
	if renamed == orders {
		t.Fatal("the configuration names no deployment counts")
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: realOperatorReplace{node: fx.node, bucket: fx.bucket, ns: fx.ns, orders: orders, replaced: renamed,
			newNS: fx.ns, newName: "counts-v2"}.steps(t),
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
	orders := realFlinkOperatorConfig(bucket, oidc, role, ns, "", "")
	moved, err := movedToNamespace(orders, oidc, ns, ns2, role2)
	if err != nil {
		t.Fatal(err)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: realOperatorReplace{node: node, bucket: bucket, ns: ns, orders: orders, replaced: moved,
			newNS: ns2, newName: "counts",
			checks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(countsAddr, tfjsonpath.New("namespace"), knownvalue.StringExact(ns2)),
			},
			checkNew: func(obj *unstructured.Unstructured) error {
				if got, _, _ := unstructured.NestedString(obj.Object, "spec", "serviceAccount"); got != "flink-counts" {
					return fmt.Errorf("%s/counts runs as ServiceAccount %q", ns2, got)
				}
				return nil
			}}.steps(t),
	})
}
