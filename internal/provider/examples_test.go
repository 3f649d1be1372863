package provider

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// Every configuration under examples/ is applied (data sources: read) by a
// test here, so the docs generated from them cannot rot. Where an example
// names things that only exist elsewhere (another provider's resources, a
// real cluster, fixed names), the test substitutes test-bed values; each
// substitution must match, or the test fails, so an example that changes
// is noticed here. The tests share nothing (own namespaces, buckets, role
// names; the fixture bucket is reference-counted), so they run in parallel,
// except the Pod Identity one, which points the EKS endpoint at its stand-in
// through the environment.

// example reads examples/<path> and applies the replacements (old, new
// pairs), failing if an old string is not in the file.
func example(t *testing.T, path string, replacements ...string) string {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(here), "..", "..", "examples", path))
	if err != nil {
		t.Fatalf("reading example: %v", err)
	}
	cfg := string(b)
	for i := 0; i+1 < len(replacements); i += 2 {
		if !strings.Contains(cfg, replacements[i]) {
			t.Fatalf("example %s no longer contains %q: update this test with it", path, replacements[i])
		}
		cfg = strings.ReplaceAll(cfg, replacements[i], replacements[i+1])
	}
	return cfg
}

func TestAccExample_resourceBucket(t *testing.T) {
	skipUnlessAcc(t)
	bucket := randName("ex-bucket-")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBucketGone(t, bucket),
		Steps: []resource.TestStep{{
			Config: example(t, "resources/flinkstate_bucket/resource.tf", `"acme-flink-state"`, fmt.Sprintf("%q", bucket)),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("flinkstate_bucket.state", tfjsonPath("versioning"), knownvalue.Bool(true)),
				expectBucketHardened(t, bucket, true, map[string]string{"team": "data-platform"}),
			},
		}},
	})
}

// The replication example, its region-B provider alias served under a
// second name (replProviderFactories says why); an object written under
// the store's prefix reaches the replica (not a checkpoint: the state
// store would refuse to be destroyed).
func TestAccExample_resourceBucketReplication(t *testing.T) {
	skipUnlessAcc(t)
	f := replFixture{src: randName("ex-repl-src-"), dst: randName("ex-repl-dst-"), role: randName("ex-flink-state-replication-")}
	cfg := example(t, "resources/flinkstate_bucket_replication/resource.tf",
		"provider \"flinkstate\" {\n  alias = \"dr\"\n", "provider \"flinkstatedr\" {\n",
		"flinkstate.dr", "flinkstatedr",
		`"acme-flink-state-dr"`, fmt.Sprintf("%q", f.dst),
		`"acme-flink-state"`, fmt.Sprintf("%q", f.src),
		`"flink-state-replication"`, fmt.Sprintf("%q", f.role),
		// The test writes objects: both buckets may be destroyed non-empty.
		"versioning = true # S3 replication needs versioning on the source", "versioning = true\n  force_destroy = true",
		"versioning = true # and on the destination", "versioning = true\n  force_destroy = true")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: replProviderFactories,
		CheckDestroy:             func(*terraform.State) error { return f.roleGone(t) },
		Steps: []resource.TestStep{{
			Config: cfg,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("flinkstate_bucket_replication.state", tfjsonPath("destination_region"), knownvalue.StringExact(testbed.SecondRegion)),
				expectAPI(func() error {
					if err := f.putSource(t, "flink/orders/replication-probe", "m"); err != nil {
						return err
					}
					if err := waitReplicationIdle(t); err != nil {
						return err
					}
					if _, found, err := f.replica(t, "flink/orders/replication-probe"); err != nil || !found {
						return fmt.Errorf("the object under the store's prefix did not reach the replica (found %v, %v)", found, err)
					}
					return nil
				}),
			},
		}},
	})
}

func TestAccExample_resourceStateStore(t *testing.T) {
	skipUnlessAcc(t)
	bucket := randName("ex-store-")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: example(t, "resources/flinkstate_state_store/resource.tf", `"acme-flink-state"`, fmt.Sprintf("%q", bucket)),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("checkpoint_dir", knownvalue.StringExact("s3://"+bucket+"/flink/orders/checkpoints")),
			},
		}},
	})
}

func TestAccExample_resourceServiceAccount(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: example(t, "resources/flinkstate_service_account/resource.tf", `"data-processing"`, fmt.Sprintf("%q", ns)),
			ConfigStateChecks: []statecheck.StateCheck{
				expectServiceAccount(t, ns, "arn:aws:iam::123456789012:role/flink-orders", "Role", "flink"),
			},
		}},
	})
}

// The two roles of the example (IRSA and Pod Identity), with the OIDC
// provider, state stores and KMS key it names from elsewhere replaced by
// test-bed values, and role names made unique.
func iamRoleExample(t *testing.T, suffix string) string {
	return example(t, "resources/flinkstate_iam_role/resource.tf",
		"aws_iam_openid_connect_provider.eks.arn", fmt.Sprintf("%q", testOIDCProvider(t)),
		"flinkstate_state_store.orders.id", `"acme-flink-state/flink/orders"`,
		"flinkstate_state_store.payments.id", `"acme-flink-state/flink/payments"`,
		"aws_kms_key.flink_state.arn", `"arn:aws:kms:us-east-1:000000000000:key/1234abcd-12ab-34cd-56ef-1234567890ab"`,
		`name = "flink-orders"`, `name = "flink-orders-`+suffix+`"`,
		`name = "flink-payments"`, `name = "flink-payments-`+suffix+`"`,
	)
}

func TestAccExample_resourceIAMRole(t *testing.T) {
	skipUnlessAcc(t)
	suffix := randName("")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: iamRoleExample(t, suffix),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("flinkstate_iam_role.orders", tfjsonPath("name"), knownvalue.StringExact("flink-orders-"+suffix)),
				statecheck.ExpectKnownValue("flinkstate_iam_role.payments", tfjsonPath("name"), knownvalue.StringExact("flink-payments-"+suffix)),
			},
		}},
	})
}

// The association example, with the payments role of the IAM role example
// and EKS served by the stand-in (the emulator does not serve Pod Identity),
// which the provider reaches through aws.endpoints.eks.
func TestAccExample_resourcePodIdentityAssociation(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	_, srv := newEKSStandIn(t, "prod")
	suffix := randName("")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: eksStandInProvider(srv.URL) + iamRoleExample(t, suffix) + example(t, "resources/flinkstate_pod_identity_association/resource.tf"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("flinkstate_pod_identity_association.payments", tfjsonPath("service_account"), knownvalue.StringExact("flink-payments")),
				statecheck.CompareValuePairs("flinkstate_pod_identity_association.payments", tfjsonPath("role_arn"),
					"flinkstate_iam_role.payments", tfjsonPath("arn"), compare.ValuesSame()),
			},
		}},
	})
}

func TestAccExample_resourceDeployment(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: example(t, "resources/flinkstate_deployment/resource.tf",
				`"data-processing"`, fmt.Sprintf("%q", ns),
				"flinkstate_service_account.orders.name", `"flink-orders"`,
				"flinkstate_state_store.orders.id", `"acme-flink-state/flink/orders"`),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("flinkstate_deployment.orders", tfjsonPath("job_state"), knownvalue.StringExact("RUNNING")),
			},
		}},
	})
}

func TestAccExample_resourceSnapshot(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	runningJob(t, ns, "orders", map[string]any{"execution.checkpointing.savepoint-dir": "s3://acme-flink-state/flink/orders/savepoints"})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: example(t, "resources/flinkstate_snapshot/resource.tf", `"data-processing"`, fmt.Sprintf("%q", ns)),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("flinkstate_snapshot.adhoc", tfjsonPath("state"), knownvalue.StringExact("COMPLETED")),
				statecheck.ExpectKnownOutputValue("savepoint_path", knownvalue.StringRegexp(regexpMust(`^s3://acme-flink-state/flink/orders/savepoints/savepoint-`))),
			},
		}},
	})
}

func TestExample_dataSourceFlinkConfiguration(t *testing.T) {
	t.Parallel()
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: example(t, "data-sources/flinkstate_flink_configuration/data-source.tf",
				"flinkstate_state_store.orders.id", `"acme-flink-state/flink/orders"`),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.flinkstate_flink_configuration.orders",
					tfjsonPath("configuration").AtMapKey("execution.checkpointing.dir"), knownvalue.StringExact("s3://acme-flink-state/flink/orders/checkpoints")),
			},
		}},
	})
}

// The policy document example; its aws_iam_role_policy (another provider's
// resource, not on the test bed) is left out, its data source read.
func TestExample_dataSourcePolicyDocument(t *testing.T) {
	cfg := example(t, "data-sources/flinkstate_policy_document/data-source.tf",
		"flinkstate_state_store.orders.id", `"acme-flink-state/flink/orders"`)
	cut := strings.Index(cfg, `resource "aws_iam_role_policy"`)
	if cut < 0 {
		t.Fatal("the example no longer attaches the policy with aws_iam_role_policy: update this test")
	}
	t.Parallel()
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: cfg[:cut],
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.flinkstate_policy_document.orders", tfjsonPath("json"),
					knownvalue.StringRegexp(regexpMust(`arn:aws:s3:::acme-flink-state/flink/orders/\*`))),
			},
		}},
	})
}

func TestAccExample_dataSourceLatestCheckpoint(t *testing.T) {
	skipUnlessAcc(t)
	bucket := testCheckpointBucket(t, chkKeys("flink/orders/checkpoints", jobA, []int{1, 2}, true))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: example(t, "data-sources/flinkstate_latest_checkpoint/data-source.tf",
				"flinkstate_state_store.orders.checkpoint_dir", fmt.Sprintf("%q", "s3://"+bucket+"/flink/orders/checkpoints")),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("restore_from", knownvalue.StringExact("s3://"+bucket+"/flink/orders/checkpoints/"+jobA+"/chk-2")),
			},
		}},
	})
}

func TestAccExample_dataSourceOrphanedStateFiles(t *testing.T) {
	skipUnlessAcc(t)
	cp := loadRealCheckpoint(t)
	cp.put(t, cp.jobDir()+"/shared/orphan-1", make([]byte, 100))
	time.Sleep(1100 * time.Millisecond) // written a second before the checkpoint (S3 times: seconds)
	cp.plant(t, 3)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: example(t, "data-sources/flinkstate_orphaned_state_files/data-source.tf",
				"acme-flink-state/flink/orders", cp.bucket+"/"+cp.prefix, "flinkstate_deployment.orders.job_id", fmt.Sprintf("%q", cp.jobID)),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("orphaned_state", knownvalue.ObjectExact(map[string]knownvalue.Check{
					"files":     knownvalue.Int64Exact(1),
					"bytes":     knownvalue.Int64Exact(100),
					"read_from": knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact(cp.chk(3))}),
				})),
			},
		}},
	})
}

func TestAccExample_dataSourceLatestSavepoint(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	runningJob(t, ns, "orders", map[string]any{"execution.checkpointing.savepoint-dir": "s3://acme-flink-state/flink/orders/savepoints"})
	snap := `
resource "flinkstate_snapshot" "sp" {
  namespace       = %q
  deployment_name = "orders"
}
`
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: fmt.Sprintf(snap, ns)},
			{
				Config: fmt.Sprintf(snap, ns) + example(t, "data-sources/flinkstate_latest_savepoint/data-source.tf", `"data-processing"`, fmt.Sprintf("%q", ns)),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.CompareValuePairs("data.flinkstate_latest_savepoint.orders", tfjsonPath("path"),
						"flinkstate_snapshot.sp", tfjsonPath("path"), compare.ValuesSame()),
				},
			},
		},
	})
}

// The provider example: its three blocks configure (the EKS cluster it
// names is replaced by literal values); a data source read through each
// alias proves terraform and the provider accept the blocks.
func TestAccExample_provider(t *testing.T) {
	skipUnlessAcc(t)
	cfg := example(t, "provider/provider.tf", exampleTerraformBlock, "",
		"aws_eks_cluster.main.endpoint", `"https://127.0.0.1:6443"`,
		"base64decode(aws_eks_cluster.main.certificate_authority[0].data)", `""`,
		"aws_eks_cluster.main.name", `"main"`)
	read := func(alias string) string {
		return fmt.Sprintf(`
data "flinkstate_flink_configuration" "%[1]s" {
  provider      = %[2]s
  flink_version = "2.2.1"
  identity      = "irsa"
  upgrade_mode  = "stateless"
  state {
    checkpoint_dir = "s3://acme-flink-state/cp"
  }
}
`, strings.ReplaceAll(alias, ".", "_"), alias)
	}
	var checks []statecheck.StateCheck
	for _, name := range []string{"flinkstate", "flinkstate_local", "flinkstate_ci"} {
		checks = append(checks, statecheck.ExpectKnownValue("data.flinkstate_flink_configuration."+name,
			tfjsonPath("configuration").AtMapKey("execution.checkpointing.dir"), knownvalue.StringExact("s3://acme-flink-state/cp")))
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config:            cfg + read("flinkstate") + read("flinkstate.local") + read("flinkstate.ci"),
			ConfigStateChecks: checks,
		}},
	})
}

// examples/complete, the stack make demo applies, with a namespace, bucket
// and role name of its own.
func TestAccExample_complete(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	bucket, role := randName("ex-complete-"), randName("flink-orders-")
	// Its required_providers block names the published source; the test
	// serves the provider under its local name instead.
	cfg := example(t, "complete/main.tf", `name = "flink-orders"`, fmt.Sprintf("name = %q", role), exampleTerraformBlock, "")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: cfg,
			// The test's destroy removes the checkpoints the job wrote:
			// force_destroy, as make demo sets it (the example's default
			// is false).
			ConfigVariables: map[string]config.Variable{"namespace": config.StringVariable(ns), "oidc_provider_arn": config.StringVariable(testOIDCProvider(t)),
				"bucket_name": config.StringVariable(bucket), "force_destroy": config.BoolVariable(true)},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("checkpoint_dir", knownvalue.StringExact("s3://"+bucket+"/flink/orders/checkpoints")),
				// No upgrade yet: savepoint_before_upgrade has taken nothing.
				statecheck.ExpectKnownOutputValue("snapshot_path", knownvalue.StringExact("none yet (taken before the next upgrade)")),
				statecheck.ExpectKnownOutputValue("latest_checkpoint", knownvalue.StringRegexp(regexpMust(`^s3://`+bucket+`/flink/orders/checkpoints/[0-9a-f]{32}/chk-\d+$`))),
			},
		}},
	})
}

// exampleImportID is the import ID that examples/resources/<typ>/import.sh
// shows, with the replacements (old, new pairs) applied: the _import tests
// import by it, so the documented ID format is the one that works. The
// address it imports must be a resource of the same example's resource.tf.
func exampleImportID(t *testing.T, typ string, replacements ...string) string {
	t.Helper()
	script := example(t, "resources/"+typ+"/import.sh")
	for _, line := range strings.Split(script, "\n") {
		f := strings.Fields(line)
		if len(f) != 4 || f[0] != "terraform" || f[1] != "import" {
			continue
		}
		res, name, ok := strings.Cut(f[2], ".")
		if !ok || res != typ {
			t.Fatalf("examples/resources/%s/import.sh imports %s, not a %s", typ, f[2], typ)
		}
		if decl := fmt.Sprintf("resource %q %q", res, name); !strings.Contains(example(t, "resources/"+typ+"/resource.tf"), decl) {
			t.Fatalf("examples/resources/%s/import.sh imports %s, which its resource.tf does not declare (%s)", typ, f[2], decl)
		}
		id := f[3]
		for i := 0; i+1 < len(replacements); i += 2 {
			if !strings.Contains(id, replacements[i]) {
				t.Fatalf("the import ID %q of examples/resources/%s/import.sh no longer contains %q: update this test", id, typ, replacements[i])
			}
			id = strings.ReplaceAll(id, replacements[i], replacements[i+1])
		}
		return id
	}
	t.Fatalf("examples/resources/%s/import.sh has no terraform import line", typ)
	return ""
}
