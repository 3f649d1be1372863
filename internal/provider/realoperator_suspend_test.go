package provider

import (
	"context"
	"fmt"
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

// TestAccRealOperator_suspendResume: job.state = "suspended" and back, in
// savepoint mode, applied by terraform to the real operator 1.15.0 whose
// JobManager the node runs as real Flink 2.2.1. The suspend plan says a
// savepoint is taken; the apply waits for lifecycle SUSPENDED; the
// operator stopped the job with a savepoint it records in
// status.jobStatus.upgradeSavepointPath (AbstractJobReconciler
// .reconcileSpecChange, SuspendMode.SAVEPOINT), Flink's _metadata is
// there, and the job stops; its JobManager stays up (a native savepoint
// suspend does not delete the cluster: AbstractFlinkService.cancelJob,
// SuspendMode.SAVEPOINT.deleteCluster() false) until the resume deletes
// it (ApplicationReconciler.deploy, "Deleting cluster with terminated
// application before new deployment"). The resume restores from that
// savepoint (AbstractJobReconciler.resumeJob) and the counters continue.
func TestAccRealOperator_suspendResume(t *testing.T) {
	fx := newRealOperatorFixture(t)
	ns, node, bucket, role, oidc := fx.ns, fx.node, fx.bucket, fx.role, fx.oidc
	ctx := context.Background()
	rec := &diagRecorder{}
	var first *testbed.FlinkCluster
	var suspendSavepoint string
	var before map[int]int64
	running := realFlinkOperatorConfig(bucket, oidc, role, ns, `    state = "running"`, "")
	suspended := realFlinkOperatorConfig(bucket, oidc, role, ns, `    state = "suspended"`, "")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.factories(),
		Steps: []resource.TestStep{
			{
				Config: running,
				ConfigStateChecks: []statecheck.StateCheck{
					expectAPI(func() error {
						cs := node.Clusters(ns, "counts")
						if len(cs) != 1 {
							return fmt.Errorf("the node ran %d clusters for %s/counts, want 1", len(cs), ns)
						}
						first = cs[0]
						_, _, err := first.WaitCounts(ctx, 2, 2*time.Minute)
						return err
					}),
				},
			},
			{
				PreConfig: rec.reset,
				Config:    suspended,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(countsAddr, plancheck.ResourceActionUpdate),
					rec.planWarning("The job will be suspended", "the operator takes a savepoint and a resume restores from it"),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(countsAddr, tfjsonpath.New("lifecycle_state"), knownvalue.StringExact("SUSPENDED")),
					expectAPI(func() error {
						obj, err := testKube(t).Dynamic.Resource(kube.FlinkDeploymentGVR).Namespace(ns).Get(ctx, "counts", metav1.GetOptions{})
						if err != nil {
							return err
						}
						suspendSavepoint, _, _ = unstructured.NestedString(obj.Object, "status", "jobStatus", "upgradeSavepointPath")
						if err := wholeMetadata(t, suspendSavepoint); err != nil {
							return fmt.Errorf("the suspend's savepoint %q: %w", suspendSavepoint, err)
						}
						if jm, _, _ := unstructured.NestedString(obj.Object, "status", "jobManagerDeploymentStatus"); jm != "READY" {
							return fmt.Errorf("suspended: JobManager %s, want READY (the cluster stays up)", jm)
						}
						// The job has stopped: its counts no longer move.
						_, before = first.Counts()
						time.Sleep(5 * time.Second)
						if _, later := first.Counts(); fmt.Sprint(later) != fmt.Sprint(before) {
							return fmt.Errorf("suspended: the job still counts (%v, then %v)", before, later)
						}
						return nil
					}),
				},
			},
			{
				Config: running,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(countsAddr, tfjsonpath.New("job_state"), knownvalue.StringExact("RUNNING")),
					expectAPI(func() error {
						cs := node.Clusters(ns, "counts")
						c := cs[len(cs)-1]
						if c == first {
							return fmt.Errorf("the resume did not start a new cluster")
						}
						if got := c.Configuration["execution.savepoint.path"]; got != suspendSavepoint {
							return fmt.Errorf("the resumed cluster restored from %q, want the suspend's savepoint %q", got, suspendSavepoint)
						}
						resumed, err := firstCountsContinue(ctx, c, "the resumed job", "the suspended one", before)
						if err != nil {
							return err
						}
						t.Logf("suspended with %s; the resumed job's first counts %v, the suspended job's last %v", suspendSavepoint, resumed, before)
						return nil
					}),
				},
			},
		},
	})
}
