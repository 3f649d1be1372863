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
	requireOperatorJars(t)
	rf := newRealFlink(t)
	ns := testNamespace(t)
	node := startRealOperator(t, rf, ns)
	bucket, role := randName("ro-"), randName("ro-")
	oidc := testOIDCProvider(t)
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
