package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// Restore and upgrade, through the operator model's rules (testbed.Operator):
// it honours initialSavepointPath only on first deployment or a new
// savepointRedeployNonce, records the path it restored from in
// status.jobStatus.upgradeSavepointPath, and fails a restore from a path
// without _metadata.

const depAddr = "flinkstate_deployment.orders"

// restoreConfig is deploymentConfig with a store of its own (so checkpoints
// of other tests are not seen) and job lines added.
func restoreConfig(ns, prefix, image, jobExtra, extra string) string {
	cfg := deploymentConfig(ns, image, extra)
	cfg = strings.Replace(cfg, `upgrade_mode = "last-state"`, `upgrade_mode = "last-state"`+"\n"+jobExtra, 1)
	return strings.Replace(cfg, "acme-flink-state/flink/orders", "acme-flink-state/"+prefix, 1)
}

// liveStatus reads what the operator model recorded about the job.
func liveJobStatus(t *testing.T, ns, field string) string {
	t.Helper()
	obj, err := getDeployment(t, ns, "orders")
	if err != nil {
		t.Fatal(err)
	}
	v, _, _ := unstructured.NestedString(obj.Object, "status", "jobStatus", field)
	return v
}

func checkRestoredFrom(t *testing.T, ns string, path *string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if got := liveJobStatus(t, ns, "upgradeSavepointPath"); got != *path {
			return fmt.Errorf("the operator restored the job from %q, want %q", got, *path)
		}
		return nil
	}
}

func attrOf(s *terraform.State, res, attr string) string {
	return s.RootModule().Resources[res].Primary.Attributes[attr]
}

// A savepoint path set on an existing deployment redeploys the job from it:
// a new nonce, and the operator (which ignores initialSavepointPath without
// one) restores from the path.
func TestAccDeployment_redeployFromSavepoint(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	prefix := randName("restore-")
	wait := `  wait_for = "running"`
	snapshot := fmt.Sprintf(`
resource "flinkstate_snapshot" "sp" {
  namespace       = %q
  deployment_name = "orders"
  %%s
}
`, ns)
	var savepoint string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: restoreConfig(ns, prefix, "flink:2.2.1-java17", "", wait) + fmt.Sprintf(snapshot, "depends_on = [flinkstate_deployment.orders]"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					// last-state defaults externalized_retention to RETAIN_ON_CANCELLATION, visible at plan.
					plancheck.ExpectKnownValue(depAddr, tfjsonPath("effective_flink_configuration").AtMapKey("execution.checkpointing.externalized-checkpoint-retention"),
						knownString("RETAIN_ON_CANCELLATION")),
					plancheck.ExpectKnownValue(depAddr, tfjsonPath("savepoint_redeploy_nonce"), knownvalue.Null()),
				}},
				Check: func(s *terraform.State) error {
					savepoint = attrOf(s, "flinkstate_snapshot.sp", "path")
					if savepoint == "" {
						return fmt.Errorf("snapshot has no path")
					}
					return nil
				},
			},
			{
				Config: restoreConfig(ns, prefix, "flink:2.2.1-java17", "initial_savepoint_path = flinkstate_snapshot.sp.path", wait) + fmt.Sprintf(snapshot, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(depAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(depAddr, tfjsonPath("savepoint_redeploy_nonce"), knownvalue.Int64Exact(1)),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(depAddr, tfjsonPath("savepoint_redeploy_nonce"), knownvalue.Int64Exact(1)),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkRestoredFrom(t, ns, &savepoint),
					func(*terraform.State) error {
						obj, err := getDeployment(t, ns, "orders")
						if err != nil {
							return err
						}
						if n, _, _ := unstructured.NestedInt64(obj.Object, "spec", "job", "savepointRedeployNonce"); n != 1 {
							return fmt.Errorf("spec.job.savepointRedeployNonce = %d, want 1", n)
						}
						return nil
					},
				),
			},
			{
				// Same path: nothing to do.
				Config:   restoreConfig(ns, prefix, "flink:2.2.1-java17", "initial_savepoint_path = flinkstate_snapshot.sp.path", wait) + fmt.Sprintf(snapshot, ""),
				PlanOnly: true,
			},
		},
	})
}

// lostJob runs a job into the store and deletes its deployment, leaving its
// checkpoints behind; it returns the job's id.
func lostJob(t *testing.T, ns, prefix string) string {
	t.Helper()
	live := runningJob(t, ns, "orders-lost", map[string]any{"execution.checkpointing.dir": "s3://acme-flink-state/" + prefix + "/checkpoints",
		"execution.checkpointing.savepoint-dir": "s3://acme-flink-state/" + prefix + "/savepoints"})
	waitForCheckpoint(t, "acme-flink-state", prefix)
	jobID, _, _ := unstructured.NestedString(live.Object, "status", "jobStatus", "jobId")
	if err := kube.DeleteAndWait(context.Background(), testKube(t).Dynamic, kube.FlinkDeploymentGVR, ns, "orders-lost", time.Minute); err != nil {
		t.Fatal(err)
	}
	return jobID
}

// The latest completed checkpoint of an earlier job, set on an existing
// deployment, redeploys it from that checkpoint. (job_id pins the earlier
// job: the redeployed job writes checkpoints of its own, which would
// otherwise become "the latest" and ask for another redeploy.)
func TestAccDeployment_redeployFromLatestCheckpoint(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	prefix := randName("restore-")
	wait := `  wait_for = "running"`
	oldJob := lostJob(t, ns, prefix)
	data := fmt.Sprintf(`
data "flinkstate_latest_checkpoint" "cp" {
  store_id = "acme-flink-state/%s"
  job_id   = %q
}
`, prefix, oldJob)
	var chk string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: restoreConfig(ns, prefix, "flink:2.2.1-java17", "", wait),
			},
			{
				Config: restoreConfig(ns, prefix, "flink:2.2.1-java17", "initial_savepoint_path = data.flinkstate_latest_checkpoint.cp.path", wait) + data,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(depAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(depAddr, tfjsonPath("savepoint_redeploy_nonce"), knownvalue.Int64Exact(1)),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(depAddr, tfjsonPath("savepoint_redeploy_nonce"), knownvalue.Int64Exact(1)),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					func(s *terraform.State) error {
						chk = attrOf(s, "data.flinkstate_latest_checkpoint.cp", "path")
						if !strings.Contains(chk, oldJob+"/chk-") {
							return fmt.Errorf("latest checkpoint %q, want one of job %s", chk, oldJob)
						}
						return nil
					},
					checkRestoredFrom(t, ns, &chk),
				),
			},
		},
	})
}

// waitForCheckpoint waits until the model's running job has completed a
// checkpoint under the store (a _metadata in a chk-N directory).
func waitForCheckpoint(t *testing.T, bucket, prefix string) {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < 600; i++ {
		out, err := testAWS(t).S3.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix + "/checkpoints/")})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range out.Contents {
			if strings.HasSuffix(aws.ToString(o.Key), "/_metadata") {
				return
			}
		}
		time.Sleep(200 * time.Millisecond) // polling S3; the bound is the loop's, not an assertion on time
	}
	t.Fatalf("no completed checkpoint under s3://%s/%s/checkpoints", bucket, prefix)
}

// A restore target without _metadata is refused before the deployment is touched.
func TestAccDeployment_restoreTargetWithoutMetadata(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	prefix := randName("restore-")
	wait := `  wait_for = "running"`
	var generation int64
	target := "s3://acme-flink-state/" + prefix + "/checkpoints"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: restoreConfig(ns, prefix, "flink:2.2.1-java17", "", wait),
				Check: func(*terraform.State) error {
					obj, err := getDeployment(t, ns, "orders")
					generation = obj.GetGeneration()
					return err
				},
			},
			{
				// The checkpoints base directory: no _metadata there.
				Config:      restoreConfig(ns, prefix, "flink:2.2.1-java17", fmt.Sprintf("initial_savepoint_path = %q", target), wait),
				ExpectError: errorRE("Restore target is not a completed snapshot", "initial_savepoint_path", "was not changed", target+"/_metadata"),
			},
			{
				// Nothing changed: same generation, no restore path, no nonce.
				Config:             restoreConfig(ns, prefix, "flink:2.2.1-java17", "", wait),
				PlanOnly:           true,
				ExpectNonEmptyPlan: false,
				PreConfig: func() {
					obj, err := getDeployment(t, ns, "orders")
					if err != nil {
						t.Fatal(err)
					}
					p, _, _ := unstructured.NestedString(obj.Object, "spec", "job", "initialSavepointPath")
					if obj.GetGeneration() != generation || p != "" {
						t.Fatalf("deployment changed by a refused restore: generation %d (was %d), initialSavepointPath %q", obj.GetGeneration(), generation, p)
					}
				},
			},
		},
	})
}

// watchOrder records, by the API server's resourceVersion (with one etcd it
// is etcd's global revision: k8s.io/apiserver storage/etcd3 sets it from the
// modRevision), when an upgrade savepoint became COMPLETED and when the
// deployment's generation first moved past from.
type watchOrder struct {
	mu                  sync.Mutex
	completedRV, specRV int64
}

func startWatchOrder(t *testing.T, ns string, from int64) *watchOrder {
	t.Helper()
	w := &watchOrder{}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	dyn := testKube(t).Dynamic
	sw, err := dyn.Resource(kube.FlinkStateSnapshotGVR).Namespace(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dw, err := dyn.Resource(kube.FlinkDeploymentGVR).Namespace(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rv := func(o *unstructured.Unstructured) int64 {
		n, _ := strconv.ParseInt(o.GetResourceVersion(), 10, 64)
		return n
	}
	go func() {
		for ev := range sw.ResultChan() {
			o, ok := ev.Object.(*unstructured.Unstructured)
			if !ok || ev.Type == watch.Deleted || !strings.HasPrefix(o.GetName(), "orders-upgrade-") {
				continue
			}
			if st, _, _ := unstructured.NestedString(o.Object, "status", "state"); st == kube.SnapshotCompleted {
				w.mu.Lock()
				if w.completedRV == 0 {
					w.completedRV = rv(o)
				}
				w.mu.Unlock()
			}
		}
	}()
	go func() {
		for ev := range dw.ResultChan() {
			o, ok := ev.Object.(*unstructured.Unstructured)
			if !ok || o.GetName() != "orders" || o.GetGeneration() <= from {
				continue
			}
			w.mu.Lock()
			if w.specRV == 0 {
				w.specRV = rv(o)
			}
			w.mu.Unlock()
		}
	}()
	return w
}

// savepoint_before_upgrade: the savepoint is COMPLETED before the spec
// changes, in the same apply, and its path is in state.
func TestAccDeployment_savepointBeforeUpgrade(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	prefix := randName("upgrade-")
	extra := `  wait_for = "running"
  savepoint_before_upgrade {}`
	var order *watchOrder
	savepoints := statecheck.CompareValue(compare.ValuesDiffer())
	jmCPU2 := strings.Replace(restoreConfig(ns, prefix, "flink:2.2.1-java21", "", extra), `cpu    = 1
  }
  task_manager`, `cpu    = 2
  }
  task_manager`, 1)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: restoreConfig(ns, prefix, "flink:2.2.1-java17", "", extra),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(depAddr, tfjsonPath("upgrade_savepoint_path"), knownvalue.Null()),
				},
			},
			{
				PreConfig: func() {
					obj, err := getDeployment(t, ns, "orders")
					if err != nil {
						t.Fatal(err)
					}
					order = startWatchOrder(t, ns, obj.GetGeneration())
				},
				Config: restoreConfig(ns, prefix, "flink:2.2.1-java21", "", extra),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue(depAddr, tfjsonPath("upgrade_savepoint_path")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(depAddr, tfjsonPath("upgrade_savepoint_path"),
						knownvalue.StringRegexp(regexpMust(`^s3://acme-flink-state/`+prefix+`/savepoints/savepoint-`))),
					savepoints.AddStateValue(depAddr, tfjsonPath("upgrade_savepoint_path")),
				},
				Check: func(*terraform.State) error {
					order.mu.Lock()
					defer order.mu.Unlock()
					if order.completedRV == 0 || order.specRV == 0 || order.completedRV >= order.specRV {
						return fmt.Errorf("savepoint COMPLETED at resourceVersion %d, spec changed at %d: the savepoint must complete first",
							order.completedRV, order.specRV)
					}
					return nil
				},
			},
			{
				// The operator restarts the job for a resources change too
				// (JobManagerSpec is not Diffable: any change is UPGRADE): a
				// savepoint is taken.
				Config: jmCPU2,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue(depAddr, tfjsonPath("upgrade_savepoint_path")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(depAddr, tfjsonPath("upgrade_savepoint_path"),
						knownvalue.StringRegexp(regexpMust(`^s3://acme-flink-state/`+prefix+`/savepoints/savepoint-`))),
					savepoints.AddStateValue(depAddr, tfjsonPath("upgrade_savepoint_path")), // a new one, not step 2's
				},
			},
			{
				// A kubernetes.operator.* key the operator ignores: no savepoint, path kept.
				Config: strings.Replace(jmCPU2, "  savepoint_before_upgrade {}", "  savepoint_before_upgrade {}\n  flink_configuration = { \"kubernetes.operator.savepoint.history.max.count\" = \"5\" }", 1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(depAddr, tfjsonPath("upgrade_savepoint_path"),
						knownvalue.StringRegexp(regexpMust(`/savepoints/savepoint-`))),
				}},
			},
		},
	})
}

// A savepoint that FAILS leaves the old spec running and the state as it was.
func TestAccDeployment_savepointBeforeUpgradeFails(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	op := startOperator(t, ns)
	prefix := randName("upgrade-")
	extra := `  wait_for = "running"
  savepoint_before_upgrade {}`
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: restoreConfig(ns, prefix, "flink:2.2.1-java17", "", extra),
			},
			{
				PreConfig: func() {
					op.SetFaults(func(f *testbed.Faults) {
						f.SavepointFailures = 1
						f.SavepointError = "Checkpoint Coordinator is suspending."
					})
				},
				Config:      restoreConfig(ns, prefix, "flink:2.2.1-java21", "", extra),
				ExpectError: errorRE("Savepoint before upgrade failed", "was not changed", "FAILED", "Checkpoint Coordinator is suspending."),
			},
			{
				// The old image still runs; the upgrade is still pending.
				PreConfig: func() {
					obj, err := getDeployment(t, ns, "orders")
					if err != nil {
						t.Fatal(err)
					}
					if img, _, _ := unstructured.NestedString(obj.Object, "spec", "image"); img != "flink:2.2.1-java17" {
						t.Fatalf("image %q after a failed savepoint, want the old flink:2.2.1-java17", img)
					}
				},
				Config:             restoreConfig(ns, prefix, "flink:2.2.1-java21", "", extra),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
		},
	})
}

// exampleConfig reads examples/<path> and applies replacements (old, new
// pairs); an old string that is no longer there fails the test.
// exampleProviderBlock is how every example under examples/ starts.
const exampleProviderBlock = exampleTerraformBlock + `
provider "flinkstate" {}
`

// exampleTerraformBlock is the terraform block of every runnable example:
// the published source and the version constraint (the standalone test
// installs the provider under the version CHANGELOG.md names last, which
// it must satisfy).
const exampleTerraformBlock = `terraform {
  required_providers {
    flinkstate = {
      source  = "flinkstate/flinkstate"
      version = "~> 0.1"
    }
  }
}
`

func exampleConfig(t *testing.T, path string, replacements ...string) string {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(here), "..", "..", "examples", path))
	if err != nil {
		t.Fatalf("reading example: %v", err)
	}
	// The example's required_providers block names the published source;
	// the test serves the provider under its local name instead.
	cfg := strings.Replace(string(b), exampleProviderBlock, "", 1)
	for i := 0; i+1 < len(replacements); i += 2 {
		if !strings.Contains(cfg, replacements[i]) {
			t.Fatalf("example %s no longer contains %q: update this test", path, replacements[i])
		}
		cfg = strings.ReplaceAll(cfg, replacements[i], replacements[i+1])
	}
	return cfg
}

// The guide's "Restore from the latest checkpoint": a new deployment from
// the newest completed checkpoint a lost job left in its store.
func TestAccExample_restoreFromLatestCheckpoint(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	prefix := randName("dr-")
	// The lost job: it ran and checkpointed into the store, then its deployment was deleted.
	oldJob := lostJob(t, ns, prefix)
	var restored string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: exampleConfig(t, "restore-from-latest-checkpoint/main.tf", `"data-processing"`, fmt.Sprintf("%q", ns), "flink/orders", prefix),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(depAddr, tfjsonPath("savepoint_redeploy_nonce"), knownvalue.Null()),
				statecheck.ExpectKnownOutputValue("restored_from", knownvalue.StringRegexp(regexpMust(oldJob+`/chk-\d+$`))),
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				func(s *terraform.State) error {
					restored = s.RootModule().Outputs["restored_from"].Value.(string)
					return nil
				},
				checkRestoredFrom(t, ns, &restored),
			),
		}},
	})
}

// The guide's "Roll back an existing job to a savepoint": the example
// applied to the deployment it assumes, already in state (its import block
// then does nothing), pointed at a savepoint of that job.
func TestAccExample_rollbackToSavepoint(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	prefix := randName("rb-")
	const importBlock = `# The running deployment this configuration rolls back.
import {
  to = flinkstate_deployment.orders
  id = "data-processing/orders"
}
`
	const variableBlock = `variable "savepoint_path" {`
	// rollback is the example; without it, the deployment the example
	// assumes (the same configuration, no restore path, no import).
	base := func(rollback bool, pathLine string) string {
		cfg := exampleConfig(t, "rollback-to-savepoint/main.tf",
			`"data-processing/orders"`, fmt.Sprintf("%q", ns+"/orders"),
			`"data-processing"`, fmt.Sprintf("%q", ns),
			"initial_savepoint_path = var.savepoint_path", pathLine, "flink/orders", prefix)
		v := strings.Index(cfg, variableBlock)
		if v < 0 {
			t.Fatalf("examples/rollback-to-savepoint/main.tf no longer declares %s: update this test", variableBlock)
		}
		// The path comes from the snapshot below, not a variable.
		cfg = cfg[:v] + cfg[v+strings.Index(cfg[v:], "\n}\n")+3:]
		if !rollback {
			imp := strings.Replace(importBlock, "data-processing/orders", ns+"/orders", 1)
			if !strings.Contains(cfg, imp) {
				t.Fatal("examples/rollback-to-savepoint/main.tf no longer has its import block: update this test")
			}
			cfg = strings.Replace(cfg, imp, "", 1)
		}
		return cfg
	}
	snapshot := fmt.Sprintf(`
resource "flinkstate_snapshot" "before" {
  namespace       = %q
  deployment_name = "orders"
  %%s
}
`, ns)
	var savepoint string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				// The job runs, and a savepoint of it is taken.
				Config: base(false, "") + fmt.Sprintf(snapshot, "depends_on = [flinkstate_deployment.orders]"),
				Check: func(s *terraform.State) error {
					savepoint = attrOf(s, "flinkstate_snapshot.before", "path")
					return nil
				},
			},
			{
				// The example, pointed at that savepoint.
				Config: base(true, "initial_savepoint_path = flinkstate_snapshot.before.path") + fmt.Sprintf(snapshot, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(depAddr, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownOutputValue("redeploy_nonce", knownvalue.Int64Exact(1)),
				},
				Check: checkRestoredFrom(t, ns, &savepoint),
			},
		},
	})
}

// A redeploy from a savepoint that goes away after the provider checked it
// (its _metadata deleted before the operator deploys): Flink cannot start
// the job from it, which the operator reports as "Job Not Found", the job
// RECONCILING, never as a failed job (so seen on the real operator 1.15.0
// with Flink 2.2.1: TestDifferential_restoreFromMissingPath). The apply
// fails at once, saying that Flink could not start the job from the path
// and where its reason is.
func TestAccDeployment_redeployFlinkCannotStartSaysSo(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	op := startOperator(t, ns)
	prefix := randName("restorefail-")
	snapshot := fmt.Sprintf(`
resource "flinkstate_snapshot" "sp" {
  namespace       = %q
  deployment_name = "orders"
  %%s
}
`, ns)
	wait := `  wait_for = "running"`
	var savepoint string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: restoreConfig(ns, prefix, "flink:2.2.1-java17", "", wait) + fmt.Sprintf(snapshot, "depends_on = [flinkstate_deployment.orders]"),
				Check: func(s *terraform.State) error {
					savepoint = attrOf(s, "flinkstate_snapshot.sp", "path")
					return nil
				},
			},
			{
				// The operator is held until the provider has checked the
				// path and written the redeploy; then the path's _metadata
				// goes, and the operator deploys from it.
				PreConfig: func() {
					op.SetFaults(func(f *testbed.Faults) { f.Down = true })
					go func() {
						defer op.SetFaults(func(f *testbed.Faults) { f.Down = false })
						for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
							obj, err := getDeployment(t, ns, "orders")
							if err != nil {
								continue
							}
							if n, ok, _ := unstructured.NestedInt64(obj.Object, "spec", "job", "savepointRedeployNonce"); ok && n > 0 {
								bucket, key, _ := checkpoint.ParseS3URI(savepoint + "/_metadata")
								if _, err := testAWS(t).S3.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: &bucket, Key: &key}); err != nil {
									t.Errorf("deleting %s/_metadata: %v", savepoint, err)
								}
								return
							}
						}
						t.Error("the redeploy was never written")
					}()
				},
				Config:      restoreConfig(ns, prefix, "flink:2.2.1-java17", "initial_savepoint_path = flinkstate_snapshot.sp.path", wait) + fmt.Sprintf(snapshot, ""),
				ExpectError: errorRE("Job Not Found", "Flink could not start the job from it", "JobManager's log"),
			},
		},
	})
}
