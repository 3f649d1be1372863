package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// crossRegionPrimary is region A as the two-region example has it: the
// real Flink stack of realFlinkOperatorConfig on a versioned bucket, the
// replica bucket in the second region (provider flinkstatedr, see
// replProviderFactories) and the replication of the job's state prefix.
func crossRegionPrimary(bucket, replica, oidc, role, replRole, nsA string) string {
	c := realFlinkOperatorConfig(bucket, oidc, role, nsA, "", "")
	// S3 replication needs versioning on both buckets (S3 User Guide,
	// "Requirements and considerations for replication").
	c = strings.Replace(c, "  force_destroy = true\n}\n\nresource \"flinkstate_state_store\"",
		"  versioning    = true\n  force_destroy = true\n}\n\nresource \"flinkstate_state_store\"", 1)
	return fmt.Sprintf(`
provider "flinkstatedr" {
  aws {
    region = %[1]q
  }
}

resource "flinkstate_bucket" "replica" {
  provider      = flinkstatedr
  bucket        = %[2]q
  versioning    = true
  force_destroy = true
}

resource "flinkstate_bucket_replication" "state" {
  bucket             = flinkstate_bucket.state.bucket
  destination_bucket = flinkstate_bucket.replica.bucket
  prefixes           = ["flink/counts"]
  role_name          = %[3]q
}
`, testbed.SecondRegion, replica, replRole) + c
}

// crossRegionStandby is region B (provider flinkstatedr, namespace nsB):
// its own store beside the replicated prefix in the replica bucket, a role
// that may read the replicated prefix, its ServiceAccount and the
// deployment restoring from restore (an HCL expression); data adds the
// data source read in the replica.
func crossRegionStandby(replica, oidc, role, nsB, restore string, data bool) string {
	ds := ""
	if data {
		ds = fmt.Sprintf(`
data "flinkstate_restorable_snapshot" "dr" {
  provider       = flinkstatedr
  savepoint_dir  = "s3://%[1]s/flink/counts/savepoints"
  checkpoint_dir = "s3://%[1]s/flink/counts/checkpoints"
  require        = true
}
`, replica)
	}
	return ds + fmt.Sprintf(`
resource "flinkstate_state_store" "dr" {
  provider      = flinkstatedr
  bucket        = flinkstate_bucket.replica.bucket
  prefix        = "flink/counts-dr"
  force_destroy = true
}

resource "flinkstate_iam_role" "dr" {
  provider = flinkstatedr
  name     = %[3]q
  irsa {
    oidc_provider_arn = %[2]q
    namespace         = %[4]q
    service_account   = "flink-counts"
  }
  state_store_ids = [flinkstate_state_store.dr.id, "%[1]s/flink/counts"]
}

resource "flinkstate_service_account" "dr" {
  provider      = flinkstatedr
  namespace     = %[4]q
  name          = "flink-counts"
  irsa_role_arn = flinkstate_iam_role.dr.arn
}

resource "flinkstate_deployment" "dr" {
  provider          = flinkstatedr
  namespace         = %[4]q
  name              = "counts"
  image             = "flink:2.2.1-java17"
  flink_version     = "2.2.1"
  service_account   = flinkstate_service_account.dr.name
  identity          = "irsa"
  high_availability = false
  wait_for          = "running"
  job_manager {
    memory = "1024m"
    cpu    = 1
  }
  task_manager {
    memory     = "1280m"
    cpu        = 1
    task_slots = 1
  }
  job {
    jar_uri                = "local:///opt/flink/usrlib/flinkstate-testjob.jar"
    entry_class            = %[5]q
    parallelism            = 1
    upgrade_mode           = "savepoint"
    initial_savepoint_path = %[6]s
  }
  state {
    store_id            = flinkstate_state_store.dr.id
    backend             = "rocksdb"
    incremental         = true
    checkpoint_interval = "2s"
  }
}
`, replica, oidc, role, nsB, testbed.TestJobClass, restore)
}

// startRealFlinkOperatorIn is startRealFlinkOperator for a cluster in
// region (its jobs reach S3 and STS at that region's endpoints).
func startRealFlinkOperatorIn(t *testing.T, rf *realFlinkBed, ns, region string) *testbed.Operator {
	t.Helper()
	dyn := testKube(t).Dynamic
	op := &testbed.Operator{Namespace: ns, S3: testAWSIn(t, region).S3, Logf: t.Logf,
		Flink: &testbed.RealFlink{Dist: rf.dist, Env: rf.env, Dyn: dyn, PodEnv: testbed.IRSAPodEnv(dyn, rf.env, t.TempDir()), Logf: t.Logf, Region: region}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); op.Run(ctx, dyn, 150*time.Millisecond) }()
	t.Cleanup(func() { cancel(); <-done; op.Flink.(*testbed.RealFlink).Close() })
	return op
}

// TestAccRealFlink_crossRegionRestore is issue 35's end-to-end on real
// Flink 2.2.1 and the test bed's S3 replication (s3replication.go). Region
// A (the test bed's region, namespace A): a versioned bucket, the job's
// state store, and flinkstate_bucket_replication of the state prefix to a
// versioned bucket in us-west-2, all applied by terraform. Replication runs
// with a lag the test sets. Real Flink takes a canonical savepoint (which
// arrives whole), then a native one while a hold keeps its data files from
// arriving (its _metadata arrives, the newest savepoint _metadata in the
// replica), and keeps taking incremental checkpoints, which replicate too.
// Then region A is lost: nothing more arrives and its objects are deleted
// (deletes do not replicate). In region B (provider flinkstatedr, namespace
// B, Flink signing for us-west-2): a deployment restoring from the
// replica's newest incremental checkpoint is refused before its FlinkDeployment
// is created, naming its absolute paths in bucket A;
// flinkstate_restorable_snapshot returns the canonical savepoint, not the
// newest _metadata, and lists the native savepoint as partly arrived and
// the checkpoints as not relocatable; the standby restores from it and its
// counters continue. The recovery point measured is logged.
func TestAccRealFlink_crossRegionRestore(t *testing.T) {
	rf := newRealFlink(t)
	nsA, nsB := testNamespace(t), testNamespace(t)
	bucket, replica := randName("rf-"), randName("rf-replica-")
	roleA, roleB, replRole := randName("rf-"), randName("rf-dr-"), randName("rf-repl-")
	oidc := testOIDCProvider(t)
	opA := startRealFlinkOperator(t, rf, nsA)
	opB := startRealFlinkOperatorIn(t, rf, nsB, testbed.SecondRegion)
	ctx := context.Background()
	s3A, s3B := testAWS(t).S3, testAWSIn(t, testbed.SecondRegion).S3
	_, env := loadTestbed(t)
	rc := env.ReplicationControl()
	// The lag the test sets: each object arrives 2s to 3s after it was
	// written (SetLag).
	const lag = 2 * time.Second
	st, err := rc.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = rc.Release(ctx)
		if d, err := time.ParseDuration(st.Lag); err == nil {
			_ = rc.SetLag(ctx, d)
		}
	})
	clusterIn := func(op *testbed.Operator, ns string) (*testbed.FlinkCluster, error) {
		obj, err := testKube(t).Dynamic.Resource(kube.FlinkDeploymentGVR).Namespace(ns).Get(ctx, "counts", metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		if c := op.Flink.(*testbed.RealFlink).ClusterOf(obj); c != nil {
			return c, nil
		}
		return nil, fmt.Errorf("the operator model runs no Flink cluster for %s/counts", ns)
	}
	keyOf := func(uri string) string { _, k, _ := strings.Cut(strings.TrimPrefix(uri, "s3://"), "/"); return k }
	inReplica := func(uri string) string { return "s3://" + replica + "/" + keyOf(uri) }
	// before/taken: the counts printed before the first savepoint was asked
	// for and once it completed (it holds, per key, a count in between).
	var before, taken, atFailover map[int]int64
	var sp1, sp2, chkCopy string
	// The recovery point: when the restored savepoint completed, and when
	// region A was lost.
	var sp1Done, lost time.Time

	primary := crossRegionPrimary(bucket, replica, oidc, roleA, replRole, nsA)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: replProviderFactories,
		Steps: []resource.TestStep{
			{
				// Region A: the job runs and replicates; Flink takes the
				// savepoints and checkpoints.
				PreConfig: func() {
					if err := rc.SetLag(ctx, lag); err != nil {
						t.Fatal(err)
					}
				},
				Config: primary,
				ConfigStateChecks: []statecheck.StateCheck{
					expectAPI(func() error {
						c, err := clusterIn(opA, nsA)
						if err != nil {
							return err
						}
						jobID, err := c.RunningJob(ctx, 2*time.Minute)
						if err != nil {
							return err
						}
						if _, before, err = c.WaitCounts(ctx, 2, 2*time.Minute); err != nil {
							return err
						}
						if sp1, err = c.TriggerSavepoint(ctx, jobID, "", "CANONICAL", 2*time.Minute); err != nil {
							return err
						}
						_, taken = c.Counts()
						sp1Done = time.Now()
						keys, err := listKeys(ctx, s3A, bucket, keyOf(sp1)+"/")
						if err != nil {
							return err
						}
						if err := waitArrived(ctx, s3B, replica, keys, 30*time.Second); err != nil {
							return err
						}
						t.Logf("canonical savepoint %s: its %d objects arrived in the replica %s after it completed", sp1, len(keys), time.Since(sp1Done).Round(100*time.Millisecond))
						// From now on a savepoint's files other than its
						// _metadata do not arrive: the next savepoint is
						// partly copied (S3 replicates each object on its
						// own, in no guaranteed order: S3 User Guide,
						// "Replicating objects within and across Regions").
						if err := rc.Hold(ctx, `^flink/counts/savepoints/savepoint-[^/]+/[^_/][^/]*$`); err != nil {
							return err
						}
						if sp2, err = c.TriggerSavepoint(ctx, jobID, "", "NATIVE", 2*time.Minute); err != nil {
							return err
						}
						if err := waitArrived(ctx, s3B, replica, []string{keyOf(sp2) + "/_metadata"}, 30*time.Second); err != nil {
							return err
						}
						// A checkpoint completed after the native savepoint,
						// arrived in the replica.
						n, _, err := c.CompletedCheckpoints(ctx, jobID)
						if err != nil {
							return err
						}
						if _, err = c.WaitCheckpoints(ctx, jobID, n+1, 2*time.Minute); err != nil {
							return err
						}
						cp, err := checkpoint.Latest(ctx, s3A, bucket, "flink/counts/checkpoints", jobID)
						if err != nil || cp == nil {
							return fmt.Errorf("the newest checkpoint in region A: %v, %v", cp, err)
						}
						if err := waitArrived(ctx, s3B, replica, []string{keyOf(cp.MetadataPath)}, 30*time.Second); err != nil {
							return err
						}
						chkCopy = inReplica(cp.Path)
						return nil
					}),
				},
			},
			{
				// Region A is lost: nothing more arrives, its objects are
				// deleted. A standby restoring from the replica's
				// incremental checkpoint is refused before its
				// FlinkDeployment is created (the check reads S3, so it
				// runs at the deployment's create, not at plan): its
				// shared files are named in bucket A.
				PreConfig: func() {
					if err := rc.Hold(ctx, `^flink/counts/`); err != nil {
						t.Fatal(err)
					}
					lost = time.Now()
					if c, err := clusterIn(opA, nsA); err == nil {
						_, atFailover = c.Counts()
					}
					keys, err := listKeys(ctx, s3A, bucket, "flink/counts/")
					if err != nil {
						t.Fatal(err)
					}
					for _, k := range keys {
						if _, err := s3A.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(k)}); err != nil {
							t.Fatal(err)
						}
					}
					t.Logf("region A lost: %d objects of s3://%s/flink/counts/ deleted", len(keys), bucket)
				},
				Config:          primary + crossRegionStandby(replica, oidc, roleB, nsB, "var.restore", false) + `variable "restore" { type = string }`,
				ConfigVariables: config.Variables{"restore": recordedString{&chkCopy}},
				ExpectError: errorRE("Restore target cannot restore from where it is", "initial_savepoint_path",
					"s3://"+replica+"/flink/counts/checkpoints/", "by absolute path in another bucket", "s3://"+bucket+"/flink/counts/checkpoints/"),
			},
			{
				// In region B the data source passes over the newest
				// _metadata and returns the whole savepoint; the standby
				// restores from it and its counters continue.
				PreConfig: func() {
					if _, err := testKube(t).Dynamic.Resource(kube.FlinkDeploymentGVR).Namespace(nsB).Get(ctx, "counts", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
						t.Fatalf("FlinkDeployment %s/counts after a refused restore: %v (want it not to exist)", nsB, err)
					}
				},
				Config: primary + crossRegionStandby(replica, oidc, roleB, nsB, "data.flinkstate_restorable_snapshot.dr.path", true),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.flinkstate_restorable_snapshot.dr", tfjsonpath.New("path"), knownvalue.StringFunc(func(v string) error {
						if want := inReplica(sp1); v != want {
							return fmt.Errorf("path %s, want the whole canonical savepoint %s", v, want)
						}
						return nil
					})),
					statecheck.ExpectKnownValue("data.flinkstate_restorable_snapshot.dr", tfjsonpath.New("skipped"), checkFunc(func(v any) error {
						list, ok := v.([]any)
						if !ok {
							return fmt.Errorf("skipped is %T, want a list", v)
						}
						// Newest first: the native savepoint partly arrived,
						// and the incremental checkpoints that arrived after
						// the canonical one, not relocatable (their shared
						// files are named in bucket A).
						partly, notReloc := 0, 0
						for _, e := range list {
							line, _ := e.(string)
							switch {
							case strings.HasPrefix(line, inReplica(sp2)+": partly arrived: "):
								partly++
							case strings.HasPrefix(line, "s3://"+replica+"/flink/counts/checkpoints/") && strings.Contains(line, ": not relocatable: ") &&
								strings.Contains(line, "s3://"+bucket+"/flink/counts/checkpoints/"):
								notReloc++
							case strings.HasPrefix(line, "s3://"+replica+"/flink/counts/checkpoints/") && strings.Contains(line, ": no _metadata "):
								// A chk-N Flink discarded in A before its
								// _metadata was copied.
							default:
								return fmt.Errorf("skipped %q: neither the native savepoint %s nor a checkpoint", line, sp2)
							}
						}
						if partly != 1 || notReloc == 0 || (chkCopy != "" && !strings.Contains(fmt.Sprint(list), chkCopy+": not relocatable: ")) {
							return fmt.Errorf("skipped %q: want the native savepoint %s as partly arrived and the checkpoints (%s among them) as not relocatable", list, inReplica(sp2), chkCopy)
						}
						t.Logf("the data source passed over %d newer snapshots: the native savepoint (partly arrived) and %d incremental checkpoints (not relocatable)", len(list), notReloc)
						return nil
					})),
					expectAPI(func() error {
						c, err := clusterIn(opB, nsB)
						if err != nil {
							return err
						}
						if got := c.Configuration["execution.state-recovery.path"]; got != inReplica(sp1) {
							return fmt.Errorf("the standby's Flink restores from %q, want %s", got, inReplica(sp1))
						}
						first, _, err := c.WaitCounts(ctx, 1, 2*time.Minute)
						if err != nil {
							return err
						}
						for k, n := range first {
							if n < before[k]+1 || n > taken[k]+1 {
								return fmt.Errorf("key %d: the standby counted from %d; the savepoint held a count in [%d, %d]", k, n, before[k], taken[k])
							}
						}
						t.Logf("standby in %s restored from the replica's %s: first counts %v (savepoint held [%v, %v])", testbed.SecondRegion, inReplica(sp1), first, before, taken)
						t.Logf("recovery point measured: replication lag set %s (each object arrives after 1 to 1.5 times it); the savepoint restored had completed %s before region A was lost; "+
							"A had counted to %v, the standby resumed at %v", lag, lost.Sub(sp1Done).Round(100*time.Millisecond), atFailover, first)
						return nil
					}),
				},
			},
		},
	})
}

// checkFunc is a knownvalue.Check of its own.
type checkFunc func(v any) error

func (f checkFunc) CheckValue(v any) error { return f(v) }
func (f checkFunc) String() string         { return "checkFunc" }
