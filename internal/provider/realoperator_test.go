package provider

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// startRealOperator runs the real Flink Kubernetes Operator 1.15.0 on ns
// until the test ends, with its JobManager pods run as real Flink 2.2.1 by
// the test bed's node stand-in and kube-controller-manager's garbage
// collector; it skips, saying why, without the operator's jars
// (FLINKSTATE_OPERATOR_DIR).
// opts change the node's options (e.g. its Pod Identity associations).
func startRealOperator(t *testing.T, rf *realFlinkBed, ns string, opts ...func(*testbed.NodeOptions)) *testbed.Node {
	t.Helper()
	return startRealOperatorIn(t, rf, []string{ns}, opts...)
}

// startRealOperatorIn is startRealOperator with the operator and the node
// watching each of namespaces.
func startRealOperatorIn(t *testing.T, rf *realFlinkBed, namespaces []string, opts ...func(*testbed.NodeOptions)) *testbed.Node {
	t.Helper()
	requireOperatorJars(t)
	ctx := context.Background()
	if err := testbed.EnsureControllerManager(ctx, rf.root, rf.env, t.Logf); err != nil {
		t.Fatal(err)
	}
	hosts := filepath.Join(t.TempDir(), "hosts")
	no := testbed.NodeOptions{Namespaces: namespaces, HostsFile: hosts, Logf: t.Logf}
	for _, o := range opts {
		o(&no)
	}
	node, err := testbed.StartNode(ctx, rf.dist, rf.env, testKube(t).Dynamic, no)
	if err != nil {
		t.Fatal(err)
	}
	op, err := testbed.StartRealOperator(ctx, rf.root, rf.env, testbed.RealOperatorOptions{Namespaces: namespaces, Logf: t.Logf, HostsFile: hosts,
		// Snapshots are observed once per reconcile interval (the chart's
		// is 15 s).
		Conf: map[string]string{"kubernetes.operator.reconcile.interval": "5 s"}})
	if err != nil {
		node.Stop()
		t.Fatal(err)
	}
	// t.Cleanup runs after resource.Test's destroy: the destroy (and its
	// final savepoint) still has the operator and the node.
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("real operator log (tail):\n%s\nFlink logs:\n%s", fileTail(op.Log, 60), node.LogTail(20))
		}
		op.Stop()
		node.Stop()
	})
	return node
}

// fileTail is the last n lines of a log file, for a failed test.
func fileTail(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(string(b), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// lastCluster is the newest Flink cluster the node ran for ns/name.
func lastCluster(node *testbed.Node, ns, name string) (*testbed.FlinkCluster, error) {
	cs := node.Clusters(ns, name)
	if len(cs) == 0 {
		return nil, fmt.Errorf("the node runs no Flink cluster for %s/%s", ns, name)
	}
	return cs[len(cs)-1], nil
}

// restoredFrom checks what the real operator did with a restore path: it
// recorded it in status.jobStatus.upgradeSavepointPath
// (AbstractFlinkResourceReconciler.updateStatusBeforeFirstDeployment on a
// first deploy, AbstractJobReconciler.redeployWithSavepoint on a new
// savepointRedeployNonce; release-1.15.0) and handed it to Flink as
// execution.savepoint.path (ApplicationReconciler.deploy, its Flink 1.20
// client's key), which the node's Flink cluster ran with.
func restoredFrom(t *testing.T, c *testbed.FlinkCluster, ns, name, path string) error {
	obj, err := testKube(t).Dynamic.Resource(kube.FlinkDeploymentGVR).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if got, _, _ := unstructured.NestedString(obj.Object, "status", "jobStatus", "upgradeSavepointPath"); got != path {
		return fmt.Errorf("status.jobStatus.upgradeSavepointPath %q, want %q", got, path)
	}
	if got := c.Configuration["execution.savepoint.path"]; got != path {
		return fmt.Errorf("the node's Flink cluster ran with execution.savepoint.path %q, want %q", got, path)
	}
	return nil
}

// requireOperatorJars skips the test, saying why, without the operator's
// jars (FLINKSTATE_OPERATOR_DIR): CI has none.
func requireOperatorJars(t *testing.T) {
	t.Helper()
	if _, err := testbed.OperatorDir(); err != nil {
		if errors.Is(err, testbed.ErrNoOperatorJars) {
			t.Skipf("real operator skipped: %v", err)
		}
		t.Fatal(err)
	}
}

// realOperatorUpgradeConfig is the real-Flink stack with the given image
// and savepoint_before_upgrade.
func realOperatorUpgradeConfig(bucket, oidc, role, ns, image string) string {
	c := realFlinkOperatorConfig(bucket, oidc, role, ns, "", "")
	c = strings.Replace(c, `image             = "flink:2.2.1-java17"`, fmt.Sprintf("image             = %q", image), 1)
	return strings.Replace(c, `wait_for          = "running"`, `wait_for          = "running"
  savepoint_before_upgrade {
    timeout = "10m"
  }`, 1)
}

// TestAccRealOperator_savepointBeforeUpgrade: terraform applies a
// deployment that the real operator 1.15.0 deploys and the node runs as
// real Flink; an image change with savepoint_before_upgrade has the
// operator take a savepoint first (a FlinkStateSnapshot, COMPLETED, with
// Flink's _metadata at upgrade_savepoint_path), then the operator's own
// savepoint upgrade; the job's counters continue. The destroy at the end
// takes the provider's final savepoint on the real operator too.
func TestAccRealOperator_savepointBeforeUpgrade(t *testing.T) {
	fx := newRealOperatorFixture(t)
	ns, node, bucket, role, oidc := fx.ns, fx.node, fx.bucket, fx.role, fx.oidc
	ctx := context.Background()
	var before map[int]int64
	var upgradeSavepoint string
	current := func() (*testbed.FlinkCluster, error) {
		cs := node.Clusters(ns, "counts")
		if len(cs) == 0 {
			return nil, fmt.Errorf("the node runs no Flink cluster for %s/counts", ns)
		}
		return cs[len(cs)-1], nil
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: realOperatorUpgradeConfig(bucket, oidc, role, ns, "flink:2.2.1-java17"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("flinkstate_deployment.counts", tfjsonpath.New("upgrade_savepoint_path"), knownvalue.Null()),
					expectAPI(func() error {
						c, err := current()
						if err != nil {
							return err
						}
						_, before, err = c.WaitCounts(ctx, 2, 2*time.Minute)
						return err
					}),
				},
			},
			{
				Config: realOperatorUpgradeConfig(bucket, oidc, role, ns, "flink:2.2.1-java21"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flinkstate_deployment.counts", plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("flinkstate_deployment.counts", tfjsonpath.New("upgrade_savepoint_path"),
						knownvalue.StringRegexp(regexp.MustCompile(`^s3://`+regexp.QuoteMeta(bucket)+`/flink/counts/savepoints/savepoint-[0-9a-f]{6}-[0-9a-f]{12}$`))),
					recordAttr("flinkstate_deployment.counts", "upgrade_savepoint_path", &upgradeSavepoint),
					expectAPI(func() error {
						if err := wholeMetadata(t, upgradeSavepoint); err != nil {
							return err
						}
						c, err := current()
						if err != nil {
							return err
						}
						if len(node.Clusters(ns, "counts")) < 2 {
							return errors.New("the image change did not redeploy the cluster")
						}
						first, _, err := c.WaitCounts(ctx, 1, 2*time.Minute)
						if err != nil {
							return err
						}
						for k, n := range first {
							if n <= before[k] {
								return fmt.Errorf("key %d: the upgraded job counted from %d, the first job had reached %d: its state was lost", k, n, before[k])
							}
						}
						t.Logf("savepoint before the upgrade %s; the upgraded job's first counts %v (the first job's %v)", upgradeSavepoint, first, before)
						return nil
					}),
				},
			},
		},
	})
}

// countsAddr is the deployment of the real-Flink stack
// (realFlinkOperatorConfig).
const countsAddr = "flinkstate_deployment.counts"

// realOperatorFixture is what most real-operator acceptance tests start
// from: the real-Flink test bed, a namespace the real operator and the node
// watch, and the names of the stack's bucket, IAM role and OIDC provider.
type realOperatorFixture struct {
	rf                 *realFlinkBed
	ns                 string
	node               *testbed.Node
	bucket, role, oidc string
}

// newRealOperatorFixture skips the test, saying why, without the
// operator's jars (requireOperatorJars); else it starts the real operator
// and the node on a new namespace until the test ends (startRealOperator).
func newRealOperatorFixture(t *testing.T) realOperatorFixture {
	t.Helper()
	requireOperatorJars(t)
	rf := newRealFlink(t)
	ns := testNamespace(t)
	node := startRealOperator(t, rf, ns)
	return realOperatorFixture{rf: rf, ns: ns, node: node,
		bucket: randName("ro-"), role: randName("ro-"), oidc: testOIDCProvider(t)}
}

// countsContinue checks that a job restored from its predecessor's state
// (a checkpoint or a savepoint taken when it stopped) goes on counting:
// for each key, its first count (after) is 2..before[k]+1, where before is
// the last count the predecessor printed — on from (at most) there, not
// from 1. job and prev name the two jobs in the error, one line a key.
func countsContinue(job, prev string, before, after map[int]int64) error {
	var errs []error
	for k, n := range after {
		if n <= 1 || n > before[k]+1 {
			errs = append(errs, fmt.Errorf("key %d: %s printed %d first, %s %d last: its state was not restored (want 2..%d)", k, job, n, prev, before[k], before[k]+1))
		}
	}
	return errors.Join(errs...)
}

// firstCountsContinue waits for the first count of each key of c (up to
// 2 minutes) and checks them with countsContinue; it returns them.
func firstCountsContinue(ctx context.Context, c *testbed.FlinkCluster, job, prev string, before map[int]int64) (map[int]int64, error) {
	first, _, err := c.WaitCounts(ctx, 1, 2*time.Minute)
	if err != nil {
		return nil, err
	}
	return first, countsContinue(job, prev, before, first)
}
