package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// maxParallelismRefusal is what Flink 2.2.1 says when a restored operator's
// max parallelism is below its vertex's new parallelism
// (StateAssignmentOperation.checkParallelismPreconditions).
const maxParallelismRefusal = "The maximum parallelism (8) of the restored state is lower than the configured parallelism (12)"

// TestAccRealOperator_preflightMaxParallelism: issue 44's first row on the
// real operator 1.15.0 with the node running real Flink 2.2.1, and its
// differential. A last-state job with Kubernetes HA and
// pipeline.max-parallelism = 8 checkpoints with max parallelism 8 (its
// _metadata says so); a parallelism change within it (1 -> 2) is applied
// and restores, the counters continuing; parallelism 12 with the key
// dropped is refused by the provider's pre-flight before anything is
// written (same generation, the same cluster counting on). The same spec
// change written directly on the FlinkDeployment, bypassing the provider,
// is refused by Flink itself when the new job restores the checkpoint:
// the pre-flight's refusal is one Flink makes. The destroy at the end
// needs no clean-up step: the job is not RUNNING then, so the provider
// takes no final savepoint (it warns) and deletes the FlinkDeployment,
// whose finalizer the operator removes as for any failed cluster.
func TestAccRealOperator_preflightMaxParallelism(t *testing.T) {
	fx := newRealOperatorFixture(t)
	ns, node, bucket, role, oidc := fx.ns, fx.node, fx.bucket, fx.role, fx.oidc
	ctx := context.Background()
	const maxKey = `"pipeline.max-parallelism" = "8"`
	config := func(parallelism int, flinkConf string) string {
		return strings.Replace(realOperatorLastStateUpgradeConfig(bucket, oidc, role, ns, flinkConf),
			"parallelism  = 1", fmt.Sprintf("parallelism  = %d", parallelism), 1)
	}
	var jobID, checkpointDir string
	var first, scaled *testbed.FlinkCluster
	var gen int64
	var beforeRefusal map[int]int64
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config(1, maxKey),
				ConfigStateChecks: []statecheck.StateCheck{
					recordAttr(countsAddr, "job_id", &jobID),
					recordAttr("flinkstate_state_store.counts", "checkpoint_dir", &checkpointDir),
					expectAPI(func() error {
						c, err := lastCluster(node, ns, "counts")
						if err != nil {
							return err
						}
						first = c
						// Past the first checkpoints (2 s interval).
						if _, _, err := c.WaitCounts(ctx, 4, 2*time.Minute); err != nil {
							return err
						}
						time.Sleep(5 * time.Second)
						return checkpointMaxParallelism(t, checkpointDir, jobID, 8, 1)
					}),
				},
			},
			{
				// Accepted: parallelism 2 is within the checkpoint's max
				// parallelism 8, which stays configured.
				Config: config(2, maxKey),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(countsAddr, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					expectAPI(func() error {
						c, err := lastCluster(node, ns, "counts")
						if err != nil {
							return err
						}
						if c == first {
							return fmt.Errorf("the parallelism change did not redeploy the cluster")
						}
						scaled = c
						if got := c.Configuration["execution.savepoint.path"]; got != kube.LastStateDummyPath {
							return fmt.Errorf("the rescaled cluster's execution.savepoint.path %q, want the operator's last-state dummy %q", got, kube.LastStateDummyPath)
						}
						_, before := first.Counts()
						restored, err := firstCountsContinue(ctx, c, "the rescaled job", "the first job", before)
						if err != nil {
							return err
						}
						t.Logf("parallelism 1 -> 2 (max 8): the rescaled job's first counts %v, the first job's last %v", restored, before)
						// Its own checkpoints, at parallelism 2, are what the
						// next update's pre-flight reads.
						if _, _, err := c.WaitCounts(ctx, 4, 2*time.Minute); err != nil {
							return err
						}
						time.Sleep(5 * time.Second)
						return checkpointMaxParallelism(t, checkpointDir, jobID, 8, 2)
					}),
				},
			},
			{
				// Refused: parallelism 12 above the checkpoint's max
				// parallelism 8, the key dropped (Flink would then adopt 8).
				PreConfig: func() {
					gen = generationOf(t, ns, "counts")
					_, beforeRefusal = scaled.Counts()
				},
				Config: config(12, ""),
				ExpectError: errorRE("Flink would refuse to restore the job's state", "was not changed", "its job keeps running",
					"s3://"+bucket+"/flink/counts/checkpoints/", "/chk-", "job.parallelism (12)",
					"StateAssignmentOperation.checkParallelismPreconditions", maxParallelismRefusal, "at most 8"),
			},
			{
				// The refused update wrote nothing: the same generation, the
				// same cluster, still counting.
				Config: config(2, maxKey),
				Check: func(*terraform.State) error {
					if g := generationOf(t, ns, "counts"); g != gen {
						return fmt.Errorf("generation %d after the refused update, want %d", g, gen)
					}
					if c, err := lastCluster(node, ns, "counts"); err != nil || c != scaled {
						return fmt.Errorf("the node runs another cluster after the refused update (%v)", err)
					}
					return countsAdvance(ctx, scaled, beforeRefusal, 2*time.Minute)
				},
			},
			{
				// The differential: the same change written on the
				// FlinkDeployment directly, bypassing the provider (its
				// job.parallelism and its flinkConfiguration without the
				// key, as the provider would write them). Flink refuses it
				// when the new job restores the checkpoint. The plan then
				// wants the spec back.
				PreConfig: func() {
					flinkRefusesMaxParallelism(t, node, ns, scaled)
				},
				Config:             config(2, maxKey),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
		},
	})
}

// checkpointMaxParallelism checks that the newest completed checkpoint of
// jobID under dir records every operator with state at max parallelism
// want and parallelism p (the operators Flink checks on restore:
// preflight.restored's rule; a non-parallel operator has max parallelism 1).
func checkpointMaxParallelism(t *testing.T, dir, jobID string, want, p int32) error {
	ctx := context.Background()
	bucket, prefix, err := checkpoint.ParseS3URI(dir)
	if err != nil {
		return err
	}
	cp, err := checkpoint.Latest(ctx, testAWS(t).S3, bucket, prefix, jobID)
	if err != nil {
		return err
	}
	if cp == nil {
		return fmt.Errorf("no completed checkpoint of job %s under %s", jobID, dir)
	}
	meta, err := checkpoint.ReadMetadataAt(ctx, testAWS(t).S3, cp.Path)
	if err != nil {
		return err
	}
	checked := 0
	for _, op := range meta.Operators {
		if op.FullyFinished || len(op.Subtasks) == 0 || op.MaxParallelism == 1 {
			continue
		}
		checked++
		if op.MaxParallelism != want || op.Parallelism != p {
			return fmt.Errorf("%s: operator %s (%q) has parallelism %d, max parallelism %d; want %d, %d", cp.Path, op.ID, op.Name,
				op.Parallelism, op.MaxParallelism, p, want)
		}
	}
	if checked == 0 {
		return fmt.Errorf("%s records no operator with state", cp.Path)
	}
	t.Logf("%s: %d operators with state, parallelism %d, max parallelism %d", cp.Path, checked, p, want)
	return nil
}

// countsAdvance waits until every key of c printed a count above before's.
func countsAdvance(ctx context.Context, c *testbed.FlinkCluster, before map[int]int64, timeout time.Duration) error {
	var last map[int]int64
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(time.Second) {
		_, last = c.Counts()
		advanced := len(last) == 4
		for k, n := range last {
			if n <= before[k] {
				advanced = false
			}
		}
		if advanced {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return fmt.Errorf("the job's counts %v did not advance past %v within %s", last, before, timeout)
}

// flinkRefusesMaxParallelism writes parallelism 12 without
// pipeline.max-parallelism on ns/counts directly (a JSON merge patch: null
// removes the key) and waits for the new cluster's JobManager to log
// Flink's refusal; it logs what the operator reports after it.
func flinkRefusesMaxParallelism(t *testing.T, node *testbed.Node, ns string, running *testbed.FlinkCluster) {
	t.Helper()
	ctx := context.Background()
	dyn := testKube(t).Dynamic.Resource(kube.FlinkDeploymentGVR).Namespace(ns)
	before := len(node.Clusters(ns, "counts"))
	patch := `{"spec":{"job":{"parallelism":12},"flinkConfiguration":{"pipeline.max-parallelism":null}}}`
	if _, err := dyn.Patch(ctx, "counts", ktypes.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatalf("patching out of band: %v", err)
	}
	start := time.Now()
	var refused *testbed.FlinkCluster
	var line string
	for deadline := time.Now().Add(5 * time.Minute); refused == nil; time.Sleep(time.Second) {
		if time.Now().After(deadline) {
			c, _ := lastCluster(node, ns, "counts")
			tail := ""
			if c != nil {
				tail = c.LogTail(60)
			}
			t.Fatalf("no JobManager logged %q within 5 minutes of the patch; the newest cluster's log:\n%s", maxParallelismRefusal, tail)
		}
		cs := node.Clusters(ns, "counts")
		for _, c := range cs[before:] {
			for _, l := range c.LogLines("jobmanager.log") {
				if strings.Contains(l, maxParallelismRefusal) {
					refused, line = c, l
					break
				}
			}
		}
	}
	if refused == running {
		t.Fatalf("the running cluster logged the refusal, not a new one")
	}
	t.Logf("Flink refused the restore %s after the patch (parallelism %s, pipeline.max-parallelism %q): %s",
		time.Since(start).Round(time.Second), refused.Configuration["parallelism.default"], refused.Configuration["pipeline.max-parallelism"], line)
	// What the operator makes of it: its status and events, over a minute.
	seen := ""
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(2 * time.Second) {
		obj, err := dyn.Get(ctx, "counts", metav1.GetOptions{})
		if err != nil {
			t.Logf("reading the FlinkDeployment: %v", err)
			continue
		}
		lc, _, _ := unstructured.NestedString(obj.Object, "status", "lifecycleState")
		js, _, _ := unstructured.NestedString(obj.Object, "status", "jobStatus", "state")
		jm, _, _ := unstructured.NestedString(obj.Object, "status", "jobManagerDeploymentStatus")
		e, _, _ := unstructured.NestedString(obj.Object, "status", "error")
		s := fmt.Sprintf("lifecycleState %s, jobStatus.state %s, jobManagerDeploymentStatus %s, error %s", lc, js, jm, e)
		if s != seen {
			t.Logf("operator status after Flink's refusal: %s", s)
			seen = s
		}
	}
	evs, err := testTyped(t).CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Logf("listing events: %v", err)
		return
	}
	for _, ev := range evs.Items {
		at := ev.LastTimestamp.Time
		if at.IsZero() {
			at = ev.EventTime.Time
		}
		if ev.InvolvedObject.Name == "counts" && at.After(start.Add(-time.Second)) {
			t.Logf("event %s %s (x%d): %s", ev.Type, ev.Reason, ev.Count, ev.Message)
		}
	}
}

// TestAccRealOperator_backendChangeThroughSavepointInOneApply: issue 44's
// way that works in one apply, on the real operator 1.15.0 with real Flink
// 2.2.1. A last-state job (RocksDB, incremental checkpoints) moved to the
// hashmap backend is refused by the pre-flight, whose message names the
// way: the same change with upgrade_mode = "savepoint". That apply is one
// upgrade: the operator upgrades with the new spec's upgrade mode
// (AbstractJobReconciler.getJobUpgrade), stops the job with a CANONICAL
// savepoint (its default format), and the hashmap job restores it, every
// counter going on from the old job's last (the backend/format table:
// a CANONICAL savepoint restores into any backend).
func TestAccRealOperator_backendChangeThroughSavepointInOneApply(t *testing.T) {
	fx := newRealOperatorFixture(t)
	ns, node, bucket, role, oidc := fx.ns, fx.node, fx.bucket, fx.role, fx.oidc
	ctx := context.Background()
	rocksdb := realOperatorLastStateUpgradeConfig(bucket, oidc, role, ns, "")
	hashmap := strings.Replace(strings.Replace(rocksdb, `backend             = "rocksdb"`, `backend             = "hashmap"`, 1),
		"    incremental         = true\n", "", 1)
	viaSavepoint := strings.Replace(hashmap, `upgrade_mode = "last-state"`, `upgrade_mode = "savepoint"`, 1)
	var first *testbed.FlinkCluster
	var gen int64
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: rocksdb,
				ConfigStateChecks: []statecheck.StateCheck{
					expectAPI(func() error {
						c, err := lastCluster(node, ns, "counts")
						if err != nil {
							return err
						}
						first = c
						// Past the first checkpoints (2 s interval).
						if _, _, err := c.WaitCounts(ctx, 4, 2*time.Minute); err != nil {
							return err
						}
						time.Sleep(5 * time.Second)
						return nil
					}),
				},
			},
			{
				PreConfig: func() { gen = generationOf(t, ns, "counts") },
				Config:    hashmap,
				ExpectError: errorRE("Flink would refuse to restore the job's state", "was not changed", "state.backend (hashmap, was rocksdb)",
					"HeapRestoreOperation", `In one apply: set job.upgrade_mode = "savepoint" together with state.backend = "hashmap"`),
			},
			{
				Config: viaSavepoint,
				ConfigStateChecks: []statecheck.StateCheck{
					expectAPI(func() error {
						if g := generationOf(t, ns, "counts"); g != gen+1 {
							return fmt.Errorf("generation %d, want %d: the refused change wrote nothing, this one once", g, gen+1)
						}
						c, err := lastCluster(node, ns, "counts")
						if err != nil {
							return err
						}
						if c == first {
							return fmt.Errorf("the backend change did not redeploy the cluster")
						}
						if b := c.Configuration["state.backend.type"]; b != "hashmap" {
							return fmt.Errorf("the new cluster's state.backend.type %q, want hashmap", b)
						}
						from := c.Configuration["execution.savepoint.path"]
						if !strings.HasPrefix(from, "s3://"+bucket+"/flink/counts/savepoints/") {
							return fmt.Errorf("the new cluster restores %q, want the upgrade's savepoint under the store's savepoints/", from)
						}
						_, before := first.Counts()
						restored, err := firstCountsContinue(ctx, c, "the hashmap job", "the RocksDB job", before)
						if err != nil {
							return err
						}
						t.Logf("rocksdb (last-state) -> hashmap with upgrade_mode savepoint in one apply: restored %s; first counts %v, the old job's last %v",
							from, restored, before)
						return nil
					}),
				},
			},
		},
	})
}

// TestAccRealOperator_backendChangeToForStFromCheckpoint: issue 44's
// fourth row, now that the test bed's Flink has ForSt as the official
// image does. A last-state job moves from rocksdb to forst: the restore
// pre-flight lets it through (ForSt reads RocksDB's own files, measured by
// TestRealFlink_backendSwitch), the operator's last-state upgrade restores
// the newest checkpoint into ForSt, and the counters go on. (Before,
// the pre-flight refused it: only a CANONICAL savepoint was let through,
// and ForSt restores none.)
func TestAccRealOperator_backendChangeToForStFromCheckpoint(t *testing.T) {
	fx := newRealOperatorFixture(t)
	ns, node, bucket, role, oidc := fx.ns, fx.node, fx.bucket, fx.role, fx.oidc
	ctx := context.Background()
	rocksdb := realOperatorLastStateUpgradeConfig(bucket, oidc, role, ns, "")
	forst := strings.Replace(strings.Replace(realOperatorLastStateUpgradeConfig(bucket, oidc, role, ns,
		`"kubernetes.operator.savepoint.format.type" = "NATIVE"`), `backend             = "rocksdb"`, `backend             = "forst"`, 1),
		"    incremental         = true\n", "", 1)
	var first *testbed.FlinkCluster
	var gen int64
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: rocksdb,
				ConfigStateChecks: []statecheck.StateCheck{
					expectAPI(func() error {
						c, err := lastCluster(node, ns, "counts")
						if err != nil {
							return err
						}
						first = c
						if _, _, err := c.WaitCounts(ctx, 4, 2*time.Minute); err != nil {
							return err
						}
						time.Sleep(5 * time.Second)
						return nil
					}),
				},
			},
			{
				PreConfig: func() { gen = generationOf(t, ns, "counts") },
				Config:    forst,
				ConfigStateChecks: []statecheck.StateCheck{
					expectAPI(func() error {
						if g := generationOf(t, ns, "counts"); g != gen+1 {
							return fmt.Errorf("generation %d, want %d: one upgrade", g, gen+1)
						}
						c, err := lastCluster(node, ns, "counts")
						if err != nil {
							return err
						}
						if c == first {
							return fmt.Errorf("the backend change did not redeploy the cluster")
						}
						if b := c.Configuration["state.backend.type"]; b != "forst" {
							return fmt.Errorf("the new cluster's state.backend.type %q, want forst", b)
						}
						_, before := first.Counts()
						restored, err := firstCountsContinue(ctx, c, "the ForSt job", "the RocksDB job", before)
						if err != nil {
							return err
						}
						t.Logf("rocksdb -> forst, last-state (the newest checkpoint): first counts %v, the old job's last %v", restored, before)
						return nil
					}),
				},
			},
		},
	})
}
