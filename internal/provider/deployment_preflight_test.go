package provider

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

// checkUntouched: after a refused change (what) FlinkDeployment orders is
// at the generation *gen, recorded before it, and its job still RUNNING.
func checkUntouched(t *testing.T, ns string, gen *int64, what string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if g := generationOf(t, ns, "orders"); g != *gen {
			return fmt.Errorf("generation %d after the refused %s, want %d", g, what, *gen)
		}
		if s := liveJobStatus(t, ns, "state"); s != "RUNNING" {
			return fmt.Errorf("job state %q after the refused %s, want RUNNING", s, what)
		}
		return nil
	}
}

// Issue 44's first row: a running last-state job whose checkpoints were
// written with pipeline.max-parallelism = 8, updated to parallelism 12 with
// the key dropped. Flink would adopt the checkpoint's max parallelism and
// refuse the restore after the old JobManager is gone
// (StateAssignmentOperation.checkParallelismPreconditions); the pre-flight
// reads the checkpoint's _metadata and refuses the update before the spec
// is written: the generation stays, the job keeps running.
func TestAccDeployment_preflightRefusesParallelismAboveCheckpointMax(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	prefix := randName("preflight-")
	first := restoreConfig(ns, prefix, "flink:2.2.1-java17", "", `  wait_for = "running"
  flink_configuration = {
    "pipeline.max-parallelism" = "8"
  }`)
	scaled := strings.Replace(restoreConfig(ns, prefix, "flink:2.2.1-java17", "", `  wait_for = "running"`), "parallelism  = 2", "parallelism  = 12", 1)
	var gen int64
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: first},
			{
				PreConfig: func() { gen = generationOf(t, ns, "orders") },
				Config:    scaled,
				ExpectError: errorRE("Flink would refuse to restore the job's state", "was not changed", "s3://acme-flink-state/"+prefix+"/checkpoints/",
					"/chk-", "job.parallelism (12)", "StateAssignmentOperation.checkParallelismPreconditions",
					"The maximum parallelism (8) of the restored state is lower than the configured parallelism (12)", "at most 8"),
			},
			{
				// The refused update wrote nothing: the first configuration
				// is still what runs, at the same generation.
				Config: first,
				Check:  checkUntouched(t, ns, &gen, "update"),
			},
		},
	})
}

// Issue 44's third row: state.backend rocksdb -> hashmap on a running
// last-state job, whose checkpoints are RocksDB incremental ones
// (IncrementalRemoteKeyedStateHandle): the heap backend cannot read them
// (HeapRestoreOperation), so the update is refused before anything is
// written. A parallelism change within the checkpoint's max parallelism
// goes through.
func TestAccDeployment_preflightRefusesBackendChangeFromCheckpoint(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	prefix := randName("preflight-")
	first := restoreConfig(ns, prefix, "flink:2.2.1-java17", "", `  wait_for = "running"`)
	hashmap := strings.Replace(strings.Replace(first, `backend             = "rocksdb"`, `backend             = "hashmap"`, 1),
		"    incremental         = true\n", "", 1)
	scaled := strings.Replace(first, "parallelism  = 2", "parallelism  = 4", 1)
	var gen int64
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: first},
			{
				PreConfig: func() { gen = generationOf(t, ns, "orders") },
				Config:    hashmap,
				ExpectError: errorRE("Flink would refuse to restore the job's state", "was not changed", "/chk-",
					"state.backend (hashmap, was rocksdb)", "HeapRestoreOperation",
					"but found: class org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle", `keep state.backend = "rocksdb" for this upgrade`),
			},
			{
				Config: scaled,
				Check: func(*terraform.State) error {
					if g := generationOf(t, ns, "orders"); g != gen+1 {
						return fmt.Errorf("generation %d, want %d: the refused update wrote nothing, the accepted one once", g, gen+1)
					}
					return nil
				},
			},
		},
	})
}

// Issue 44's way that works in one apply: the backend change the
// pre-flight refuses on a last-state job (its checkpoints are RocksDB's own
// files) goes through when the same apply sets upgrade_mode = "savepoint":
// the operator upgrades with the new spec's upgrade mode and stops the job
// with a CANONICAL savepoint (AbstractJobReconciler.getJobUpgrade,
// KubernetesOperatorConfigOptions.OPERATOR_SAVEPOINT_FORMAT_TYPE), which
// the heap backend restores. The refusal names that way; the second apply
// takes it: one upgrade, restored from the savepoint.
func TestAccDeployment_preflightBackendChangeThroughSavepointInOneApply(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	prefix := randName("preflight-")
	first := restoreConfig(ns, prefix, "flink:2.2.1-java17", "", `  wait_for = "running"`)
	hashmap := strings.Replace(strings.Replace(first, `backend             = "rocksdb"`, `backend             = "hashmap"`, 1),
		"    incremental         = true\n", "", 1)
	viaSavepoint := strings.Replace(hashmap, `upgrade_mode = "last-state"`, `upgrade_mode = "savepoint"`, 1)
	var gen int64
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: first},
			{
				PreConfig: func() { gen = generationOf(t, ns, "orders") },
				Config:    hashmap,
				ExpectError: errorRE("Flink would refuse to restore the job's state", "state.backend (hashmap, was rocksdb)",
					`In one apply: set job.upgrade_mode = "savepoint" together with state.backend = "hashmap"`),
			},
			{
				Config: viaSavepoint,
				Check: func(*terraform.State) error {
					if g := generationOf(t, ns, "orders"); g != gen+1 {
						return fmt.Errorf("generation %d, want %d: one upgrade", g, gen+1)
					}
					if p := liveJobStatus(t, ns, "upgradeSavepointPath"); !strings.Contains(p, "acme-flink-state/"+prefix+"/savepoints/") {
						return fmt.Errorf("the job restored from %q, want a savepoint under %s/savepoints", p, prefix)
					}
					if s := liveJobStatus(t, ns, "state"); s != "RUNNING" {
						return fmt.Errorf("job state %q, want RUNNING", s)
					}
					return nil
				},
			},
		},
	})
}

// A savepoint-mode job whose operator savepoints are NATIVE
// (kubernetes.operator.savepoint.format.type): the upgrade's savepoint
// keeps RocksDB's own files, which the heap backend cannot read, so the
// backend change is refused before anything is written, as from a
// checkpoint (the operator takes the savepoint in its observe
// configuration's format: AbstractFlinkService.cancelJob).
func TestAccDeployment_preflightRefusesBackendChangeThroughNativeSavepoint(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	prefix := randName("preflight-")
	native := `  wait_for = "running"
  flink_configuration = {
    "pipeline.max-parallelism"                  = "128"
    "kubernetes.operator.savepoint.format.type" = "NATIVE"
  }`
	first := strings.Replace(restoreConfig(ns, prefix, "flink:2.2.1-java17", "", native), `upgrade_mode = "last-state"`, `upgrade_mode = "savepoint"`, 1)
	hashmap := strings.Replace(strings.Replace(first, `backend             = "rocksdb"`, `backend             = "hashmap"`, 1),
		"    incremental         = true\n", "", 1)
	var gen int64
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: first},
			{
				PreConfig: func() { gen = generationOf(t, ns, "orders") },
				Config:    hashmap,
				ExpectError: errorRE("Flink would refuse to restore the job's state", "was not changed", "state.backend (hashmap, was rocksdb)",
					"HeapRestoreOperation", "The snapshot is a NATIVE savepoint (incremental keyed state",
					`In one apply: set flink_configuration["kubernetes.operator.savepoint.format.type"] = "CANONICAL"`),
			},
			{Config: first, Check: checkUntouched(t, ns, &gen, "update")},
			{
				// The way the refusal names: the same change with the
				// operator's savepoint format CANONICAL, in one apply.
				Config: strings.Replace(hashmap, `= "NATIVE"`, `= "CANONICAL"`, 1),
				Check: func(*terraform.State) error {
					if g := generationOf(t, ns, "orders"); g != gen+1 {
						return fmt.Errorf("generation %d, want %d: one upgrade", g, gen+1)
					}
					if s := liveJobStatus(t, ns, "state"); s != "RUNNING" {
						return fmt.Errorf("job state %q, want RUNNING", s)
					}
					return nil
				},
			},
		},
	})
}

// The pre-flight on a restore from a path (issue 44): a redeploy from a
// savepoint written with pipeline.max-parallelism = 8, at parallelism 12
// with the key dropped. Flink would adopt the savepoint's max parallelism
// and refuse the restore once the old job is cancelled; the pre-flight
// reads the savepoint's _metadata and refuses the update before anything
// is written: the generation stays, the job keeps running.
func TestAccDeployment_preflightRefusesRedeployAboveSavepointMax(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	prefix := randName("preflight-")
	snapshot := fmt.Sprintf(`
resource "flinkstate_snapshot" "sp" {
  namespace       = %q
  deployment_name = "orders"
  %%s
}
`, ns)
	first := restoreConfig(ns, prefix, "flink:2.2.1-java17", "", `  wait_for = "running"
  flink_configuration = {
    "pipeline.max-parallelism" = "8"
  }`)
	redeploy := strings.Replace(restoreConfig(ns, prefix, "flink:2.2.1-java17", "initial_savepoint_path = flinkstate_snapshot.sp.path",
		`  wait_for = "running"`), "parallelism  = 2", "parallelism  = 12", 1)
	var gen int64
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: first + fmt.Sprintf(snapshot, "depends_on = [flinkstate_deployment.orders]")},
			{
				// The path is known at plan: refused there already.
				Config:   redeploy + fmt.Sprintf(snapshot, ""),
				PlanOnly: true,
				ExpectError: errorRE("Flink would refuse to restore the job's state", "job.initial_savepoint_path, which this redeploy restores",
					"job.parallelism (12)"),
			},
			{
				PreConfig: func() { gen = generationOf(t, ns, "orders") },
				Config:    redeploy + fmt.Sprintf(snapshot, ""),
				ExpectError: errorRE("Flink would refuse to restore the job's state", "was not changed, and its job keeps running",
					"s3://acme-flink-state/"+prefix+"/savepoints/", "job.initial_savepoint_path, which this redeploy restores",
					"job.parallelism (12)", "The maximum parallelism (8) of the restored state is lower than the configured parallelism (12)"),
			},
			{
				Config: first + fmt.Sprintf(snapshot, ""),
				Check:  checkUntouched(t, ns, &gen, "redeploy"),
			},
		},
	})
}

// A change of the job's code (here the image) on a last-state job whose
// checkpoint records state of an operator without a uid (the model's job:
// its operator's ID is generated) warns, naming the operator: new code may
// give it another ID, and Flink would then refuse its state. The upgrade
// goes on.
func TestAccDeployment_preflightWarnsOfGeneratedUIDs(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	prefix := randName("preflight-")
	rec := &diagRecorder{}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.factories(),
		Steps: []resource.TestStep{
			{Config: restoreConfig(ns, prefix, "flink:2.2.1-java17", "", `  wait_for = "running"`)},
			{
				PreConfig: rec.reset,
				Config:    restoreConfig(ns, prefix, "flink:2.2.1-java21", "", `  wait_for = "running"`),
				Check: rec.expectWarning("ApplyResourceChange", "Operators without a uid", "gives the job new code",
					`"test bed job" (no uid, ID `, "Cannot map checkpoint/savepoint state", "Set uid() on every stateful operator"),
			},
		},
	})
}

// A replacement that carries the job's state across (a rename) with a
// parallelism above the max parallelism its state was written with is
// refused at plan, before the old job is stopped: the final savepoint
// would record the operators the newest checkpoint records, and Flink
// would refuse it (StateAssignmentOperation.checkParallelismPreconditions).
// The old job keeps running, at the same generation.
func TestAccDeployment_preflightRefusesHandoverAboveCheckpointMax(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	prefix := randName("preflight-")
	first := restoreConfig(ns, prefix, "flink:2.2.1-java17", "", `  wait_for = "running"
  flink_configuration = {
    "pipeline.max-parallelism" = "8"
  }`)
	renamed := strings.Replace(strings.Replace(restoreConfig(ns, prefix, "flink:2.2.1-java17", "", `  wait_for = "running"`),
		"parallelism  = 2", "parallelism  = 12", 1), `name            = "orders"`, `name            = "orders-v2"`, 1)
	var gen int64
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: first},
			{
				PreConfig: func() { gen = generationOf(t, ns, "orders") },
				Config:    renamed,
				ExpectError: errorRE("Flink would refuse to restore the job's state", "is replaced", "the newest checkpoint of the running job",
					"job.parallelism (12)", "The maximum parallelism (8) of the restored state is lower than the configured parallelism (12)",
					"Nothing was changed"),
			},
			{
				Config: first,
				Check:  checkUntouched(t, ns, &gen, "replacement"),
			},
		},
	})
}

// A replacement into the ForSt backend: the final stop of the running
// rocksdb job takes a CANONICAL savepoint (the provider's default final
// format), which ForSt does not restore (ForStKeyedStateBackendBuilder:
// "Not support restoring yet", measured on real Flink 2.2.1), so the plan
// is refused before the old job is stopped, naming the way that works.
func TestAccDeployment_preflightRefusesHandoverIntoForStFromCanonical(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	prefix := randName("preflight-")
	first := restoreConfig(ns, prefix, "flink:2.2.1-java17", "", `  wait_for = "running"`)
	renamed := strings.Replace(strings.Replace(strings.Replace(restoreConfig(ns, prefix, "flink:2.2.1-java17", "", `  wait_for = "running"
  flink_configuration = {
    "pipeline.max-parallelism"                  = "128"
    "kubernetes.operator.savepoint.format.type" = "NATIVE"
  }`), `backend             = "rocksdb"`, `backend             = "forst"`, 1), "    incremental         = true\n", "", 1),
		`name            = "orders"`, `name            = "orders-v2"`, 1)
	var gen int64
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: first},
			{
				PreConfig: func() { gen = generationOf(t, ns, "orders") },
				Config:    renamed,
				ExpectError: errorRE("Flink would refuse to restore the job's state", "is replaced", "state.backend (forst, was rocksdb)",
					"Not support restoring yet for ForStStateBackend", "The snapshot is a CANONICAL savepoint", "Nothing was changed"),
			},
			{
				Config: first,
				Check:  checkUntouched(t, ns, &gen, "replacement"),
			},
		},
	})
}

// A stateful job moved from Flink 1.20 to 2.2 warns at plan: Flink 2's
// serializer changes (Kryo 5, collection serializers) can keep its state
// from restoring, and the operator upgrades a version change with a
// savepoint.
func TestAccDeployment_planWarnsOfFlink1StateInFlink2(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	prefix := randName("preflight-")
	v2 := restoreConfig(ns, prefix, "flink:2.2.1-java17", "", `  wait_for = "running"`)
	v1 := strings.Replace(strings.Replace(v2, `flink_version   = "2.2.1"`, `flink_version   = "1.20.1"`, 1), "flink:2.2.1-java17", "flink:1.20.1-java17", 1)
	rec := &diagRecorder{}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.factories(),
		Steps: []resource.TestStep{
			{Config: v1},
			{
				PreConfig: rec.reset,
				Config:    v2,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					rec.planWarning("Flink 1.x state restored by Flink 2", "from 1.20.1 to 2.2.1", "FLINK-3154", "FLIP-398", "AbstractJobReconciler.getJobUpgrade"),
				}},
			},
		},
	})
}
