package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// startRealFlinkOperator runs the operator model on ns until the test ends,
// its jobs as real Flink (testbed.RealFlink): the model decides when to
// deploy, snapshot and restore, as the operator's rules say, and Flink runs
// the job and takes the savepoints. The pods' credentials are IRSA's, for
// the role in the deployment's ServiceAccount annotation. The snapshot
// retry delay is the operator's own (10s × 2^(failures-1)): real Flink
// refuses a savepoint while the job's tasks are still starting.
func startRealFlinkOperator(t *testing.T, rf *realFlinkBed, ns string) *testbed.Operator {
	t.Helper()
	dyn := testKube(t).Dynamic
	op := &testbed.Operator{Namespace: ns, S3: testAWS(t).S3, Logf: t.Logf,
		Flink: &testbed.RealFlink{Dist: rf.dist, Env: rf.env, Dyn: dyn, PodEnv: testbed.IRSAPodEnv(dyn, rf.env, t.TempDir()), Logf: t.Logf}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); op.Run(ctx, dyn, 150*time.Millisecond) }()
	t.Cleanup(func() { cancel(); <-done; op.Flink.(*testbed.RealFlink).Close() })
	return op
}

// realFlinkOperatorConfig is realFlinkConfig with the ServiceAccount the
// operator model's pods take their IRSA role from, and create and update
// waiting for the job to run (from its restore path, when there is one).
func realFlinkOperatorConfig(bucket, oidc, role, ns, jobExtra, data string) string {
	c := realFlinkConfig(bucket, oidc, role, ns, jobExtra, data+`
resource "flinkstate_service_account" "counts" {
  namespace     = `+fmt.Sprintf("%q", ns)+`
  name          = "flink-counts"
  irsa_role_arn = flinkstate_iam_role.counts.arn
}
`)
	c = strings.Replace(c, "\n  service_account   = \"flink-counts\"", "\n  service_account   = flinkstate_service_account.counts.name", 1)
	return strings.Replace(c, `wait_for          = "none"`, `wait_for          = "running"`, 1)
}

// realSavepointData is the snapshot and the data source, naming the
// deployment by its literal names: the deployment restores from the
// snapshot's path in the last step, so the snapshot cannot refer back to it
// (a cycle). The deployment exists from the first step on.
func realSavepointData(ns string) string {
	return fmt.Sprintf(`
resource "flinkstate_snapshot" "sp" {
  namespace       = %[1]q
  deployment_name = "counts"
  type            = "savepoint"
}

data "flinkstate_latest_savepoint" "counts" {
  namespace       = %[1]q
  deployment_name = "counts"
  type            = "savepoint"
  depends_on      = [flinkstate_snapshot.sp]
}
`, ns)
}

// TestAccRealFlink_savepointSnapshotRestore: terraform applies a deployment
// that the operator model runs on real Flink; a flinkstate_snapshot of type
// savepoint is taken by Flink (the model asks Flink's REST API for it, as
// the operator does) into the store's savepoint directory;
// flinkstate_latest_savepoint returns that path; the path holds a real
// _metadata (Flink's header); and the deployment pointed at it with
// job.initial_savepoint_path is redeployed in place and its job resumes
// with its state: every counter continues from the savepoint's value.
func TestAccRealFlink_savepointSnapshotRestore(t *testing.T) {
	rf := newRealFlink(t)
	ns := testNamespace(t)
	bucket, role := randName("rf-"), randName("rf-")
	oidc := testOIDCProvider(t)
	op := startRealFlinkOperator(t, rf, ns)
	ctx := context.Background()
	// before: the counts the job printed before the savepoint was asked
	// for; taken: those printed once it completed. Each count is printed in
	// the processElement that changes the state, before any later barrier,
	// so the savepoint holds, per key, a count in [before, taken].
	var before, taken map[int]int64
	var savepoint string
	cluster := func() (*testbed.FlinkCluster, error) {
		obj, err := testKube(t).Dynamic.Resource(kube.FlinkDeploymentGVR).Namespace(ns).Get(ctx, "counts", metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		c := op.Flink.(*testbed.RealFlink).ClusterOf(obj)
		if c == nil {
			return nil, fmt.Errorf("the operator model runs no Flink cluster for %s/counts", ns)
		}
		return c, nil
	}
	savepointRE := regexp.MustCompile(`^s3://` + regexp.QuoteMeta(bucket) + `/flink/counts/savepoints/savepoint-[0-9a-f]{6}-[0-9a-f]{12}$`)

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				// The deployment runs: wait_for = "running" returned once the
				// model reported the real job RUNNING.
				Config: realFlinkOperatorConfig(bucket, oidc, role, ns, "", ""),
				ConfigStateChecks: []statecheck.StateCheck{
					expectAPI(func() error {
						c, err := cluster()
						if err != nil {
							return err
						}
						_, before, err = c.WaitCounts(ctx, 2, 2*time.Minute)
						return err
					}),
				},
			},
			{
				// A savepoint, taken by Flink for the snapshot resource.
				Config: realFlinkOperatorConfig(bucket, oidc, role, ns, "", realSavepointData(ns)),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("flinkstate_snapshot.sp", tfjsonpath.New("state"), knownvalue.StringExact("COMPLETED")),
					statecheck.ExpectKnownValue("flinkstate_snapshot.sp", tfjsonpath.New("path"), knownvalue.StringRegexp(savepointRE)),
					recordAttr("flinkstate_snapshot.sp", "path", &savepoint),
					statecheck.ExpectKnownValue("data.flinkstate_latest_savepoint.counts", tfjsonpath.New("found"), knownvalue.Bool(true)),
					statecheck.CompareValuePairs("data.flinkstate_latest_savepoint.counts", tfjsonpath.New("path"),
						"flinkstate_snapshot.sp", tfjsonpath.New("path"), compare.ValuesSame()),
					statecheck.CompareValuePairs("data.flinkstate_latest_savepoint.counts", tfjsonpath.New("name"),
						"flinkstate_snapshot.sp", tfjsonpath.New("name"), compare.ValuesSame()),
					// What real Flink 2.2.1's savepoint records (issue 44): a
					// CANONICAL savepoint (the snapshot's default format) of
					// the test job, its keyed counter "count" among them.
					statecheck.ExpectKnownValue("data.flinkstate_latest_savepoint.counts", tfjsonpath.New("contents").AtMapKey("metadata_version"), knownvalue.Int64Exact(6)),
					statecheck.ExpectKnownValue("data.flinkstate_latest_savepoint.counts", tfjsonpath.New("contents").AtMapKey("format"), knownvalue.StringExact("CANONICAL savepoint")),
					statecheck.ExpectKnownValue("data.flinkstate_latest_savepoint.counts", tfjsonpath.New("contents").AtMapKey("keyed_state_kind"), knownvalue.StringExact("canonical")),
					statecheck.ExpectKnownValue("data.flinkstate_latest_savepoint.counts", tfjsonpath.New("contents").AtMapKey("operators"), knownvalue.ListPartial(map[int]knownvalue.Check{
						1: knownvalue.ObjectPartial(map[string]knownvalue.Check{"uid": knownvalue.StringExact("count"), "keyed_state": knownvalue.Bool(true),
							"max_parallelism": knownvalue.Int64Exact(128)}),
					})),
					expectAPI(func() error {
						// Flink's own _metadata, not a placeholder.
						if err := wholeMetadata(t, savepoint); err != nil {
							return err
						}
						c, err := cluster()
						if err != nil {
							return err
						}
						_, taken = c.Counts()
						return nil
					}),
				},
			},
			{
				// Restoring from it: an in-place redeploy (a new
				// savepoint_redeploy_nonce) that waits until the job runs
				// from the savepoint; the counters continue from it.
				Config: realFlinkOperatorConfig(bucket, oidc, role, ns,
					`    initial_savepoint_path = flinkstate_snapshot.sp.path`, realSavepointData(ns)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flinkstate_deployment.counts", plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("flinkstate_deployment.counts", tfjsonpath.New("savepoint_redeploy_nonce"), knownvalue.Int64Exact(1)),
					statecheck.CompareValuePairs("flinkstate_deployment.counts", tfjsonpath.New("job").AtMapKey("initial_savepoint_path"),
						"flinkstate_snapshot.sp", tfjsonpath.New("path"), compare.ValuesSame()),
					expectAPI(func() error {
						c, err := cluster()
						if err != nil {
							return err
						}
						first, _, err := c.WaitCounts(ctx, 1, 2*time.Minute)
						if err != nil {
							return err
						}
						for k, n := range first {
							if n < before[k]+1 || n > taken[k]+1 {
								return fmt.Errorf("key %d: the job restored from %s counted from %d; the savepoint held a count in [%d, %d]",
									k, savepoint, n, before[k], taken[k])
							}
						}
						t.Logf("restored from %s: first counts %v (before the savepoint %v, when it completed %v)", savepoint, first, before, taken)
						return nil
					}),
				},
			},
		},
	})
}
