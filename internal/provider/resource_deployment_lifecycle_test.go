package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// suspendedConfig is restoreConfig with job.state set.
func suspendedConfig(ns, prefix, jobState string) string {
	return restoreConfig(ns, prefix, "flink:2.2.1-java17", `state = "`+jobState+`"`, "")
}

// A suspend ends at lifecycle SUSPENDED, which the default wait_for
// ("deployed") never accepted: the apply used to time out. Resume brings the
// job back, and the plan after each apply is empty.
func TestAccDeployment_suspendAndResume(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	prefix := randName("suspend-")
	short := `
  timeouts {
    update = "90s"
  }`
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: suspendedConfig(ns, prefix, "running")},
			{
				Config: strings.Replace(suspendedConfig(ns, prefix, "suspended"), "\n}\n", short+"\n}\n", 1),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(depAddr, tfjsonPath("lifecycle_state"), knownString("SUSPENDED")),
				},
			},
			{
				Config: suspendedConfig(ns, prefix, "running"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(depAddr, tfjsonPath("lifecycle_state"), knownvalue.StringRegexp(regexpMust(`^(DEPLOYED|STABLE)$`))),
				},
			},
		},
	})
}

// restoredConfig is a second deployment, "restored", in a store of its own,
// that starts from the snapshot flinkstate_snapshot.sp of "orders".
func restoredConfig(ns, prefix string) string {
	cfg := restoreConfig(ns, prefix, "flink:2.2.1-java17", "initial_savepoint_path = flinkstate_snapshot.sp.path", "")
	cfg = strings.Replace(cfg, `resource "flinkstate_deployment" "orders"`, `resource "flinkstate_deployment" "restored"`, 1)
	return strings.Replace(cfg, `name            = "orders"`, `name            = "restored"`, 1) + fmt.Sprintf(`
resource "flinkstate_snapshot" "sp" {
  namespace       = %q
  deployment_name = flinkstate_deployment.orders.name
  timeouts {
    create = "3s"
  }
}
`, ns)
}

// A snapshot whose wait ends without COMPLETED is kept with an empty path;
// a deployment planned to restore from it refuses to be created instead of
// starting the job without state (the operator deploys statelessly without
// initialSavepointPath: ApplicationReconciler.deploy). Once the snapshot
// completes, the next apply creates the deployment from it.
func TestAccDeployment_restoreInputNotReady(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	op := startOperator(t, ns)
	prefix := randName("notready-")
	orders := restoreConfig(ns, prefix, "flink:2.2.1-java17", "", `  wait_for = "running"`)
	both := orders + restoredConfig(ns, prefix+"-restored")
	var savepoint string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: orders},
			{
				PreConfig:   func() { op.SetFaults(func(f *testbed.Faults) { f.Down = true }) },
				Config:      both,
				ExpectError: errorRE("Invalid restore path", "initial_savepoint_path", "is empty"),
			},
			{
				PreConfig: func() {
					// (A failed step runs no Check: the refusal is checked here.)
					if _, err := getDeployment(t, ns, "restored"); !apierrors.IsNotFound(err) {
						t.Errorf("FlinkDeployment restored exists (or cannot be read: %v): it was deployed without its restore path", err)
					}
					op.SetFaults(func(f *testbed.Faults) { f.Down = false })
				},
				Config: both,
				Check: resource.ComposeAggregateTestCheckFunc(
					func(s *terraform.State) error {
						savepoint = attrOf(s, "flinkstate_snapshot.sp", "path")
						return nil
					},
					func(*terraform.State) error {
						obj, err := getDeployment(t, ns, "restored")
						if err != nil {
							return err
						}
						if got, _, _ := unstructured.NestedString(obj.Object, "spec", "job", "initialSavepointPath"); got == "" || got != savepoint {
							return fmt.Errorf("restored has initialSavepointPath %q, want the snapshot's %q", got, savepoint)
						}
						return nil
					},
				),
			},
		},
	})
}

// The spec changes the operator refuses on an existing deployment
// (DefaultValidator.validateSpecChange, validateFlinkVersion) fail at plan,
// before anything is applied.
func TestAccDeployment_specChangesTheOperatorRefuses(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	prefix := randName("refused-")
	running := suspendedConfig(ns, prefix, "running")
	suspended := suspendedConfig(ns, prefix, "suspended")
	noJob := running[:strings.Index(running, "  job {")] + running[strings.Index(running, "  state {"):]
	newer := strings.NewReplacer(`flink_version   = "2.2.1"`, `flink_version   = "2.1.2"`, `image           = "flink:2.2.1-java17"`, `image           = "flink:2.1.2-java17"`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: running},
			{
				Config:      strings.Replace(running, `  identity        = "irsa"`, `  identity        = "irsa"`+"\n  mode = \"standalone\"", 1),
				PlanOnly:    true,
				ExpectError: errorRE("Deployment mode cannot change", "Cannot switch from native kubernetes to standalone"),
			},
			{Config: noJob, PlanOnly: true, ExpectError: errorRE("job block cannot be added or removed", "Cannot switch from job to session cluster")},
			{Config: suspended},
			{
				Config:      newer.Replace(suspended),
				PlanOnly:    true,
				ExpectError: errorRE("Flink version cannot change while suspended", "after last-state suspend"),
			},
			// Resume first, then the version may change.
			{Config: running},
			{Config: newer.Replace(running), PlanOnly: true, ExpectNonEmptyPlan: true},
		},
	})
}

// finalSavepoints lists the final savepoints taken of deployment name.
func finalSavepoints(t *testing.T, ns, name string) []kube.SnapshotStatus {
	t.Helper()
	list, err := testKube(t).Dynamic.Resource(kube.FlinkStateSnapshotGVR).Namespace(ns).List(context.Background(),
		metav1.ListOptions{LabelSelector: kube.FinalSavepointLabel + "=" + name})
	if err != nil {
		t.Fatal(err)
	}
	var out []kube.SnapshotStatus
	for i := range list.Items {
		out = append(out, kube.ReadSnapshotStatus(&list.Items[i]))
	}
	return out
}

// checkFinalSavepoint: exactly one final savepoint of name, COMPLETED, whose
// _metadata is in S3.
func checkFinalSavepoint(t *testing.T, ns, name string) error {
	sps := finalSavepoints(t, ns, name)
	if len(sps) != 1 || sps[0].State != kube.SnapshotCompleted || sps[0].Path == "" {
		return fmt.Errorf("final savepoints of %s: %+v, want one COMPLETED with a path", name, sps)
	}
	if err := restorable(t, sps[0].Path); err != nil {
		return fmt.Errorf("final savepoint of %s: %v", name, err)
	}
	return nil
}

// restorable: Flink could restore from path, the provider's own check
// (checkpoint.CheckComplete: its _metadata and every file it references exist).
func restorable(t *testing.T, path string) error {
	t.Helper()
	c, err := checkpoint.CheckComplete(context.Background(), testAWS(t).S3, path)
	if err != nil {
		return err
	}
	return c.Err()
}

// Destroying a stateful deployment takes a final savepoint first: the
// operator would cancel the job without one and delete its HA metadata
// (ApplicationReconciler.cleanupInternal, savepoint-on-deletion off). A
// first attempt that fails (Flink refuses a savepoint while tasks are still
// being deployed) is retried by the operator at its next reconciliation.
func TestAccDeployment_destroyTakesFinalSavepoint(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	op := startOperator(t, ns)
	prefix := randName("final-")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			if _, err := getDeployment(t, ns, "orders"); !apierrors.IsNotFound(err) {
				return fmt.Errorf("FlinkDeployment orders still there (%v)", err)
			}
			return checkFinalSavepoint(t, ns, "orders")
		},
		Steps: []resource.TestStep{{
			Config: restoreConfig(ns, prefix, "flink:2.2.1-java17", "", `  wait_for = "running"`),
			Check: func(*terraform.State) error {
				if sps := finalSavepoints(t, ns, "orders"); len(sps) != 0 {
					return fmt.Errorf("a final savepoint before any destroy: %+v", sps)
				}
				// The destroy that follows: its first stop fails; the
				// operator tries again a reconcile interval later.
				op.SetReconcileInterval(2 * time.Second)
				op.SetFaults(func(f *testbed.Faults) {
					f.SavepointFailures, f.SavepointError = 1, "Not all required tasks are currently running"
				})
				return nil
			},
		}},
	})
}

// A final savepoint that fails refuses the destroy: the deployment and its
// job stay.
func TestAccDeployment_destroyRefusedWhenFinalSavepointFails(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	op := startOperator(t, ns)
	prefix := randName("final-")
	cfg := restoreConfig(ns, prefix, "flink:2.2.1-java17", "", `  wait_for = "running"`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig: func() {
					// Every stop the operator tries fails, until the next step;
					// it tries again each reconcile interval, which the
					// provider waits out FinalSavepointRetries times.
					op.SetReconcileInterval(2 * time.Second)
					op.SetFaults(func(f *testbed.Faults) {
						f.SavepointFailures, f.SavepointError = 1000, "disk full"
					})
				},
				Config:      cfg,
				Destroy:     true,
				ExpectError: errorRE("final savepoint did not complete", "SavepointError", "Savepoint Error -> disk full", "Nothing was deleted"),
			},
			{
				// Still there, running the same job (the spec was put back);
				// the next destroy (the test's own) succeeds with a savepoint.
				PreConfig: func() { op.SetFaults(func(f *testbed.Faults) { f.SavepointFailures = 0 }) },
				Config:    cfg,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(depAddr, tfjsonPath("job_state"), knownString("RUNNING")),
				},
				Check: func(*terraform.State) error {
					_, err := getDeployment(t, ns, "orders")
					return err
				},
			},
		},
	})
}

// Renaming a stateful deployment replaces it: the old one's final savepoint
// is taken before it is deleted, and the new one starts from it; the plan
// after that is empty.
func TestAccDeployment_replaceCarriesState(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	prefix := randName("carry-")
	wait := `  wait_for = "running"`
	orders := restoreConfig(ns, prefix, "flink:2.2.1-java17", "", wait)
	renamed := strings.Replace(orders, `name            = "orders"`, `name            = "orders-v2"`, 1)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps:                    replaceCarriesStateSteps(t, ns, orders, renamed, ns, "orders-v2", false),
	})
}

// replaceCarriesStateSteps: orders (the deployment orders in ns) is
// applied; replaced replaces it by newName in newNS (destroy before
// create), which starts from the old one's final savepoint (with oldGone,
// the old FlinkDeployment must be gone too); the next plan is empty.
func replaceCarriesStateSteps(t *testing.T, ns, orders, replaced, newNS, newName string, oldGone bool) []resource.TestStep {
	return []resource.TestStep{
		{Config: orders},
		{
			Config: replaced,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(depAddr, plancheck.ResourceActionDestroyBeforeCreate),
				plancheck.ExpectUnknownValue(depAddr, tfjsonPath("upgrade_savepoint_path")),
			}},
			Check: func(s *terraform.State) error {
				carried := attrOf(s, depAddr, "upgrade_savepoint_path")
				if err := checkFinalSavepoint(t, ns, "orders"); err != nil {
					return err
				}
				if sps := finalSavepoints(t, ns, "orders"); carried != sps[0].Path {
					return fmt.Errorf("upgrade_savepoint_path %q, want the final savepoint %q", carried, sps[0].Path)
				}
				if oldGone {
					if _, err := getDeployment(t, ns, "orders"); err == nil {
						return fmt.Errorf("the old FlinkDeployment %s/orders is still there", ns)
					}
				}
				obj, err := getDeployment(t, newNS, newName)
				if err != nil {
					return err
				}
				if got, _, _ := unstructured.NestedString(obj.Object, "spec", "job", "initialSavepointPath"); got != carried {
					return fmt.Errorf("%s/%s starts from %q, want %q", newNS, newName, got, carried)
				}
				if got, _, _ := unstructured.NestedString(obj.Object, "status", "jobStatus", "upgradeSavepointPath"); got != carried {
					return fmt.Errorf("the operator restored %s/%s from %q, want %q", newNS, newName, got, carried)
				}
				return nil
			},
		},
		{Config: replaced, PlanOnly: true},
	}
}

// Moving a running stateful deployment to another namespace forces its
// replacement as renaming does: the final savepoint of the old job, in the
// first namespace, is what the replacement in the second starts from (the
// same steps on the real operator: TestAccRealOperator_replaceIntoOtherNamespace).
func TestAccDeployment_replaceIntoOtherNamespaceCarriesState(t *testing.T) {
	skipUnlessAcc(t)
	ns, ns2 := testNamespace(t), testNamespace(t)
	startOperator(t, ns)
	startOperator(t, ns2)
	prefix := randName("carry-")
	wait := `  wait_for = "running"`
	orders := restoreConfig(ns, prefix, "flink:2.2.1-java17", "", wait)
	moved := strings.Replace(orders, fmt.Sprintf(`namespace       = %q`, ns), fmt.Sprintf(`namespace       = %q`, ns2), 1)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps:                    replaceCarriesStateSteps(t, ns, orders, moved, ns2, "orders", true),
	})
}

// A change that restores waits until the job runs from the restore path:
// the operator marks the deployment DEPLOYED as soon as the JobManager is
// submitted (ReconciliationUtils.updateStatusForDeployedSpec), before Flink
// restored anything, which the default wait used to accept.
func TestAccDeployment_restoreWaitsForTheJob(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	op := startOperator(t, ns)
	prefix := randName("restorewait-")
	snapshot := fmt.Sprintf(`
resource "flinkstate_snapshot" "sp" {
  namespace       = %q
  deployment_name = "orders"
  depends_on      = [flinkstate_deployment.orders]
}
`, ns)
	short := "\n  timeouts {\n    update = \"5s\"\n  }"
	first := restoreConfig(ns, prefix, "flink:2.2.1-java17", "", `  wait_for = "running"`) + snapshot
	redeploy := restoreConfig(ns, prefix, "flink:2.2.1-java17", "initial_savepoint_path = flinkstate_snapshot.sp.path", short) +
		strings.Replace(snapshot, "  depends_on      = [flinkstate_deployment.orders]\n", "", 1)
	var savepoint string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: first,
				Check: func(s *terraform.State) error {
					savepoint = attrOf(s, "flinkstate_snapshot.sp", "path")
					return nil
				},
			},
			{
				PreConfig:   func() { op.SetFaults(func(f *testbed.Faults) { f.JobNeverRuns = true }) },
				Config:      redeploy,
				ExpectError: errorRE("waiting for its job running from"),
			},
			{
				PreConfig: func() { op.SetFaults(func(f *testbed.Faults) { f.JobNeverRuns = false }) },
				Config:    redeploy,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(depAddr, tfjsonPath("job_state"), knownString("RUNNING")),
				},
				Check: checkRestoredFrom(t, ns, &savepoint),
			},
		},
	})
}

// The savepoint taken before an upgrade is recorded on the FlinkDeployment in
// the same request as the new spec, so a run killed right after the upgrade
// (its state never saved) loses nothing: a Read, here an import, finds it.
func TestAccDeployment_upgradeSavepointRecoveredFromTheObject(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	prefix := randName("recover-")
	extra := `  wait_for = "running"
  savepoint_before_upgrade {}`
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: restoreConfig(ns, prefix, "flink:2.2.1-java17", "", extra)},
			{Config: restoreConfig(ns, prefix, "flink:2.2.1-java21", "", extra)},
			{
				ResourceName:            depAddr,
				ImportState:             true,
				ImportStateId:           ns + "/orders",
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"wait_for", "timeouts", "savepoint_before_upgrade"},
			},
		},
	})
}

// An apply whose savepoint before the upgrade did not end in time leaves
// that savepoint under way; the next apply of the same change waits for it
// instead of taking a second one, so no savepoint is left untracked.
func TestAccDeployment_upgradeSavepointNotTakenTwice(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	op := startOperator(t, ns)
	prefix := randName("once-")
	extra := "  wait_for = \"running\"\n  savepoint_before_upgrade {\n    timeout = \"3s\"\n  }"
	upgrades := func() []kube.SnapshotStatus {
		list, err := testKube(t).Dynamic.Resource(kube.FlinkStateSnapshotGVR).Namespace(ns).List(context.Background(),
			metav1.ListOptions{LabelSelector: kube.UpgradeOfLabel + "=orders"})
		if err != nil {
			t.Fatal(err)
		}
		var out []kube.SnapshotStatus
		for i := range list.Items {
			out = append(out, kube.ReadSnapshotStatus(&list.Items[i]))
		}
		return out
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: restoreConfig(ns, prefix, "flink:2.2.1-java17", "", extra)},
			{
				PreConfig:   func() { op.SetFaults(func(f *testbed.Faults) { f.Down = true }) },
				Config:      restoreConfig(ns, prefix, "flink:2.2.1-java21", "", extra),
				ExpectError: errorRE("Savepoint before upgrade failed", "was not changed"),
			},
			{
				PreConfig: func() { op.SetFaults(func(f *testbed.Faults) { f.Down = false }) },
				Config:    restoreConfig(ns, prefix, "flink:2.2.1-java21", "", extra),
				Check: func(s *terraform.State) error {
					sps := upgrades()
					if len(sps) != 1 || sps[0].State != kube.SnapshotCompleted {
						return fmt.Errorf("upgrade savepoints %+v, want exactly one, COMPLETED", sps)
					}
					if got := attrOf(s, depAddr, "upgrade_savepoint_path"); got != sps[0].Path {
						return fmt.Errorf("upgrade_savepoint_path %q, want the one savepoint's %q", got, sps[0].Path)
					}
					return nil
				},
			},
		},
	})
}

// A FlinkDeployment written as other tools write it (numbers, booleans and
// nested maps in flinkConfiguration, as the operator's own examples do) is
// imported with every key, as the operator flattens them, never dropped.
func TestAccDeployment_importKeepsNonStringConfiguration(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	runningJob(t, ns, "orders", map[string]any{
		"fs.s3a.aws.credentials.provider":       flinkconf.IRSACredentialsProvider,
		"execution.checkpointing.dir":           "s3://acme-flink-state/flink/orders/checkpoints",
		"execution.checkpointing.savepoint-dir": "s3://acme-flink-state/flink/orders/savepoints",
		"taskmanager.numberOfTaskSlots":         int64(2),
		"metrics.latency.interval":              int64(1000),
		"pipeline.object-reuse":                 true,
		"kubernetes.operator":                   map[string]any{"savepoint.history.max.count": int64(5)},
	})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config:        deploymentConfig(ns, "flink:2.2.1-java17", ""),
			ResourceName:  depAddr,
			ImportState:   true,
			ImportStateId: ns + "/orders",
			ImportStateCheck: func(is []*terraform.InstanceState) error {
				if len(is) != 1 {
					return fmt.Errorf("imported %d instances", len(is))
				}
				a := is[0].Attributes
				for k, want := range map[string]string{
					"flink_configuration.metrics.latency.interval":                        "1000",
					"flink_configuration.pipeline.object-reuse":                           "true",
					"flink_configuration.kubernetes.operator.savepoint.history.max.count": "5",
					"task_manager.task_slots":                                             "2",
				} {
					if a[k] != want {
						return fmt.Errorf("%s = %q, want %q (imported: %v)", k, a[k], want, a)
					}
				}
				return nil
			},
		}},
	})
}

// A replacement whose configuration still sets the job.initial_savepoint_path
// the deployment was last pointed at would restore that older savepoint,
// not the final savepoint of the running job (issue 45): the plan refuses
// it, naming the attribute and the ways out; without the path the same
// replacement plans, carrying the state across.
func TestAccDeployment_replaceRefusesPinnedPathRollback(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	prefix := randName("pinned-")
	wait := `  wait_for = "running"`
	snapshot := fmt.Sprintf(`
resource "flinkstate_snapshot" "sp" {
  namespace       = %q
  deployment_name = "orders"
  %%s
}
`, ns)
	pinned := restoreConfig(ns, prefix, "flink:2.2.1-java17", "initial_savepoint_path = flinkstate_snapshot.sp.path", wait) + fmt.Sprintf(snapshot, "")
	rename := func(c string) string {
		return strings.Replace(c, `name            = "orders"`, `name            = "orders-v2"`, 1)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: restoreConfig(ns, prefix, "flink:2.2.1-java17", "", wait) + fmt.Sprintf(snapshot, "depends_on = [flinkstate_deployment.orders]")},
			{Config: pinned},
			{
				Config:      rename(pinned),
				PlanOnly:    true,
				ExpectError: errorRE("Replacement would roll the job's state back", "job.initial_savepoint_path still names", "Nothing was changed", "remove job.initial_savepoint_path"),
			},
			{
				Config:             rename(restoreConfig(ns, prefix, "flink:2.2.1-java17", "", wait) + fmt.Sprintf(snapshot, "")),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
		},
	})
}
