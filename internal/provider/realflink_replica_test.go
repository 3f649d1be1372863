package provider

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// realReplicaConfig is the standby in "region B" (namespace nsB, the
// replica bucket): its own store beside the replicated prefix, a role that
// may read the replicated prefix, its ServiceAccount, the data source read
// in the replica, and the deployment restoring from what it returns.
func realReplicaConfig(replica, oidc, role, nsB string) string {
	return fmt.Sprintf(`
data "flinkstate_restorable_snapshot" "dr" {
  savepoint_dir  = "s3://%[1]s/flink/counts/savepoints"
  checkpoint_dir = "s3://%[1]s/flink/counts/checkpoints"
  require        = true
}

resource "flinkstate_state_store" "dr" {
  bucket        = %[1]q
  prefix        = "flink/counts-dr"
  force_destroy = true
}

resource "flinkstate_iam_role" "dr" {
  name = %[3]q
  irsa {
    oidc_provider_arn = %[2]q
    namespace         = %[4]q
    service_account   = "flink-counts"
  }
  state_store_ids = [flinkstate_state_store.dr.id, "%[1]s/flink/counts"]
}

resource "flinkstate_service_account" "dr" {
  namespace     = %[4]q
  name          = "flink-counts"
  irsa_role_arn = flinkstate_iam_role.dr.arn
}

resource "flinkstate_deployment" "dr" {
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
    initial_savepoint_path = data.flinkstate_restorable_snapshot.dr.path
  }
  state {
    store_id            = flinkstate_state_store.dr.id
    backend             = "rocksdb"
    incremental         = true
    checkpoint_interval = "2s"
  }
}
`, replica, oidc, role, nsB, testbed.TestJobClass)
}

// TestAccRealFlink_restoreFromReplica: the cross-region restore of issue 35
// on real Flink, with the replica written by the test (S3 CopyObject of
// each object, in the order replication might bring them) instead of S3
// replication. The job runs in "region A" (namespace A, bucket A) and
// real Flink takes a canonical savepoint, then a native one. The replica
// (bucket B) receives the whole first savepoint, the second one's
// _metadata without one of its files (partly arrived), then the job's
// newest incremental checkpoint's _metadata (newest of all, and naming its
// shared files in bucket A); the savepoints' originals in A are deleted.
// In "region B" (namespace B), flinkstate_restorable_snapshot returns the
// first savepoint (not the newest _metadata) and says why it passed over
// the two newer ones; the deployment restores from it, and its counters
// continue from the savepoint's.
func TestAccRealFlink_restoreFromReplica(t *testing.T) {
	rf := newRealFlink(t)
	nsA, nsB := testNamespace(t), testNamespace(t)
	bucket, roleA, roleB := randName("rf-"), randName("rf-"), randName("rf-dr-")
	replica := testCheckpointBucket(t)
	oidc := testOIDCProvider(t)
	opA := startRealFlinkOperator(t, rf, nsA)
	opB := startRealFlinkOperator(t, rf, nsB)
	ctx, s3c := context.Background(), testAWS(t).S3
	clusterIn := func(op *testbed.Operator, ns string) (*testbed.FlinkCluster, error) {
		obj, err := testKube(t).Dynamic.Resource(kube.FlinkDeploymentGVR).Namespace(ns).Get(ctx, "counts", metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		if c := op.Flink.ClusterOf(obj); c != nil {
			return c, nil
		}
		return nil, fmt.Errorf("the operator model runs no Flink cluster for %s/counts", ns)
	}
	// before/taken: the counts printed before the first savepoint was asked
	// for and once it completed (it holds, per key, a count in between).
	var before, taken, atFailover map[int]int64
	var sp1, sp2, chkMeta, missing string
	// The recovery point measured: when the restored savepoint completed,
	// and when region A was lost (the replica's state then is what B has).
	var sp1Done, lost time.Time

	// replicate copies the objects under prefix (keys of bucket A) to the
	// replica, except skip; S3 dates objects to the second, so each group
	// is a second apart.
	replicate := func(prefix, skip string) error {
		var keys []string
		p := s3.NewListObjectsV2Paginator(s3c, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				return err
			}
			for _, o := range page.Contents {
				keys = append(keys, aws.ToString(o.Key))
			}
		}
		sort.Strings(keys)
		// _metadata last, so that it dates the copy (replication brings
		// objects in no guaranteed order; skip stands for one not there yet).
		sort.SliceStable(keys, func(i, j int) bool {
			return !strings.HasSuffix(keys[i], "/_metadata") && strings.HasSuffix(keys[j], "/_metadata")
		})
		for _, k := range keys {
			if k == skip || strings.HasSuffix(k, "/") {
				continue
			}
			if _, err := s3c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(replica), Key: aws.String(k),
				CopySource: aws.String(bucket + "/" + k)}); err != nil {
				return fmt.Errorf("copying %s: %w", k, err)
			}
		}
		time.Sleep(1100 * time.Millisecond)
		return nil
	}
	keyOf := func(uri string) string { _, k, _ := strings.Cut(strings.TrimPrefix(uri, "s3://"), "/"); return k }

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				// Region A: the job runs; Flink takes two savepoints.
				Config: realFlinkOperatorConfig(bucket, oidc, roleA, nsA, "", ""),
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
						if sp2, err = c.TriggerSavepoint(ctx, jobID, "", "NATIVE", 2*time.Minute); err != nil {
							return err
						}
						n, _, err := c.CompletedCheckpoints(ctx, jobID)
						if err != nil {
							return err
						}
						_, err = c.WaitCheckpoints(ctx, jobID, n+1, 2*time.Minute)
						return err
					}),
				},
			},
			{
				// Replication, mid-way; region A's savepoints are lost. In
				// region B the data source passes over the newest
				// _metadata and returns the whole savepoint; the standby
				// restores from it and its counters continue.
				PreConfig: func() {
					if err := replicate(keyOf(sp1)+"/", ""); err != nil {
						t.Fatal(err)
					}
					// The second savepoint arrives without one of its files.
					m, err := checkpoint.ReadMetadataAt(ctx, s3c, sp2)
					if err != nil {
						t.Fatal(err)
					}
					uris := m.FileURIs()
					if len(uris) == 0 {
						t.Fatalf("%s references no file", sp2)
					}
					missing = uris[0]
					if err := replicate(keyOf(sp2)+"/", keyOf(missing)); err != nil {
						t.Fatal(err)
					}
					// The job's newest checkpoint's _metadata (its shared
					// files are named in bucket A; the job keeps
					// checkpointing, so the newest is read until one is
					// still there when copied).
					for try := 0; ; try++ {
						cp, err := checkpoint.Latest(ctx, s3c, bucket, "flink/counts/checkpoints", "")
						if err == nil && cp != nil {
							if _, err = s3c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(replica), Key: aws.String(keyOf(cp.MetadataPath)),
								CopySource: aws.String(bucket + "/" + keyOf(cp.MetadataPath))}); err == nil {
								chkMeta = cp.Path
								break
							}
						}
						if try == 10 {
							t.Fatalf("copying the newest checkpoint's _metadata: %v", err)
						}
					}
					// Region A is lost: its savepoints are gone.
					lost = time.Now()
					if c, err := clusterIn(opA, nsA); err == nil {
						_, atFailover = c.Counts()
					}
					for _, sp := range []string{sp1, sp2} {
						obj, err := s3c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(keyOf(sp) + "/")})
						if err != nil {
							t.Fatal(err)
						}
						for _, o := range obj.Contents {
							if _, err := s3c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: o.Key}); err != nil {
								t.Fatal(err)
							}
						}
					}
				},
				Config: realFlinkOperatorConfig(bucket, oidc, roleA, nsA, "", "") + realReplicaConfig(replica, oidc, roleB, nsB),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.flinkstate_restorable_snapshot.dr", tfjsonpath.New("path"), knownvalue.StringFunc(func(v string) error {
						if want := "s3://" + replica + "/" + keyOf(sp1); v != want {
							return fmt.Errorf("path %s, want the whole savepoint %s", v, want)
						}
						return nil
					})),
					statecheck.ExpectKnownValue("data.flinkstate_restorable_snapshot.dr", tfjsonpath.New("skipped"), knownvalue.ListPartial(map[int]knownvalue.Check{
						0: knownvalue.StringFunc(func(v string) error {
							if want := "s3://" + replica + "/" + keyOf(chkMeta) + ": not relocatable: "; !strings.HasPrefix(v, want) || !strings.Contains(v, "s3://"+bucket+"/") {
								return fmt.Errorf("skipped[0] = %q, want %q… naming s3://%s/", v, want, bucket)
							}
							return nil
						}),
						1: knownvalue.StringFunc(func(v string) error {
							want := "s3://" + replica + "/" + keyOf(sp2) + ": partly arrived: 1 of the "
							if !strings.HasPrefix(v, want) || !strings.Contains(v, "s3://"+replica+"/"+keyOf(missing)) {
								return fmt.Errorf("skipped[1] = %q, want %q… naming %s", v, want, keyOf(missing))
							}
							return nil
						}),
					})),
					statecheck.ExpectKnownValue("data.flinkstate_restorable_snapshot.dr", tfjsonpath.New("skipped"), knownvalue.ListSizeExact(2)),
					expectAPI(func() error {
						c, err := clusterIn(opB, nsB)
						if err != nil {
							return err
						}
						if got := c.Configuration["execution.state-recovery.path"]; got != "s3://"+replica+"/"+keyOf(sp1) {
							return fmt.Errorf("the standby's Flink restores from %q", got)
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
						t.Logf("standby restored from the replica's %s: first counts %v (savepoint held [%v, %v])", keyOf(sp1), first, before, taken)
						// Recovery point: the restored savepoint's age when A was
						// lost, and the counts A had reached then, which B counts again.
						t.Logf("recovery point: the savepoint restored had completed %s before region A was lost; A had counted to %v, "+
							"the standby resumed at %v (no replication lag here: the replica was written at once)", lost.Sub(sp1Done).Round(time.Second), atFailover, first)
						return nil
					}),
				},
			},
		},
	})
}
