package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// Real Flink 2.2.1 runs what the provider wrote: the tests start the test
// bed's local Flink cluster (testbed.StartFlink) with the flinkConfiguration
// and S3 plugin of the FlinkDeployment as it is stored in the API server, and
// the credentials EKS would inject. No operator runs here; the tests start
// Flink where the operator would.

type realFlinkBed struct {
	env  testbed.Env
	dist testbed.FlinkDist
	root string
}

func newRealFlink(t *testing.T) *realFlinkBed {
	t.Helper()
	if testTarget != "testbed" {
		t.Skip("real Flink runs on the local test bed only")
	}
	root, env := loadTestbed(t)
	if env.STSAddress == "" {
		t.Fatal("the test bed has no STS listener on port 443 (it needs root or CAP_NET_BIND_SERVICE): Flink's IRSA credentials provider cannot reach STS")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	dist, err := testbed.BuildFlink(ctx, root, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	return &realFlinkBed{env: env, dist: dist, root: root}
}

// realFlinkConfig is a whole IRSA stack whose job is the test bed's own
// (tools/flink); extra goes into the deployment, data adds data sources.
func realFlinkConfig(bucket, oidc, role, ns, jobExtra, data string) string {
	trust := fmt.Sprintf(`  irsa {
    oidc_provider_arn = %q
    namespace         = %q
    service_account   = "flink-counts"
  }`, oidc, ns)
	return realFlinkStack(bucket, role, ns, "irsa", trust, jobExtra, data)
}

// realFlinkStack is the stack with the given identity mode and trust block.
func realFlinkStack(bucket, role, ns, identity, trust, jobExtra, data string) string {
	return fmt.Sprintf(`
resource "flinkstate_bucket" "state" {
  bucket        = %[1]q
  force_destroy = true
}

resource "flinkstate_state_store" "counts" {
  bucket        = flinkstate_bucket.state.bucket
  prefix        = "flink/counts"
  force_destroy = true
}

resource "flinkstate_iam_role" "counts" {
  name = %[3]q
%[2]s
  state_store_ids = [flinkstate_state_store.counts.id]
}

resource "flinkstate_deployment" "counts" {
  namespace         = %[4]q
  name              = "counts"
  image             = "flink:2.2.1-java17"
  flink_version     = "2.2.1"
  service_account   = "flink-counts"
  identity          = %[8]q
  high_availability = false
  wait_for          = "none"
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
    jar_uri      = "local:///opt/flink/usrlib/flinkstate-testjob.jar"
    entry_class  = %[5]q
    parallelism  = 1
    upgrade_mode = "savepoint"
%[6]s
  }
  state {
    store_id            = flinkstate_state_store.counts.id
    backend             = "rocksdb"
    incremental         = true
    checkpoint_interval = "2s"
  }
}
%[7]s
`, bucket, trust, role, ns, testbed.TestJobClass, jobExtra, data, identity)
}

const latestCheckpointData = `
data "flinkstate_latest_checkpoint" "counts" {
  checkpoint_dir = flinkstate_state_store.counts.checkpoint_dir
}
`

// recordedString is a configuration variable whose value an earlier step
// recorded: it is read when the step writes its variables, not when the
// test case is built.
type recordedString struct{ p *string }

func (v recordedString) MarshalJSON() ([]byte, error) { return json.Marshal(*v.p) }

// flinkJobOf is what the operator would hand Flink for the live
// FlinkDeployment: its flinkConfiguration as stored, the S3 plugin its pod
// template enables, its parallelism and initialSavepointPath.
func flinkJobOf(t *testing.T, ns, name string) (testbed.FlinkJob, error) {
	obj, err := testKube(t).Dynamic.Resource(kube.FlinkDeploymentGVR).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return testbed.FlinkJob{}, err
	}
	restore, _, _ := unstructured.NestedString(obj.Object, "spec", "job", "initialSavepointPath")
	job := testbed.JobOf(obj, restore)
	if job.PluginJar == "" {
		return job, fmt.Errorf("the pod template enables no S3 plugin (%s)", flinkconf.PluginsEnv)
	}
	return job, nil
}

// completedCheckpoint is the JobManager's own log line for a completed
// checkpoint (CheckpointCoordinator: "Completed checkpoint %d for job %s").
var completedCheckpoint = regexp.MustCompile(`Completed checkpoint (\d+) for job ([0-9a-f]{32})`)

// lastCompletedCheckpoint is the newest checkpoint the JobManager logged as completed.
func lastCompletedCheckpoint(c *testbed.FlinkCluster) (id int64, jobID string) {
	for _, l := range c.LogLines("jobmanager.log") {
		if m := completedCheckpoint.FindStringSubmatch(l); m != nil {
			id, _ = strconv.ParseInt(m[1], 10, 64)
			jobID = m[2]
		}
	}
	return id, jobID
}

// TestAccRealFlink_irsaCheckpointsRestore: real Flink runs the deployment's
// configuration with IRSA credentials (STS AssumeRoleWithWebIdentity at the
// emulator), writes incremental RocksDB checkpoints under the store;
// flinkstate_latest_checkpoint names the newest one Flink completed; the
// deployment pointed at it restores the job's state (its counters continue);
// and every S3 request Flink made is allowed by the role's policy.
func TestAccRealFlink_irsaCheckpointsRestore(t *testing.T) {
	rf := newRealFlink(t)
	ns := testNamespace(t)
	bucket, role := randName("rf-"), randName("rf-")
	oidc := testOIDCProvider(t)
	ctx := context.Background()
	var roleARN, policy string
	var lastID int64
	var lastJob string
	var before map[int]int64
	var savepoint string
	dir := "s3://" + bucket + "/flink/counts/checkpoints"

	start := func(restore bool) (*testbed.FlinkCluster, error) {
		job, err := flinkJobOf(t, ns, "counts")
		if err != nil {
			return nil, err
		}
		if restore != (job.RestorePath != "") {
			return nil, fmt.Errorf("spec.job.initialSavepointPath = %q", job.RestorePath)
		}
		job.Env, err = testbed.IRSAEnv(t.TempDir(), rf.env, roleARN)
		if err != nil {
			return nil, err
		}
		c, err := testbed.StartFlink(ctx, rf.dist, rf.env, job)
		if err != nil {
			return nil, err
		}
		t.Cleanup(c.Remove)
		return c, nil
	}

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: realFlinkConfig(bucket, oidc, role, ns, "", ""),
				ConfigStateChecks: []statecheck.StateCheck{
					recordAttr("flinkstate_iam_role.counts", "arn", &roleARN),
					recordAttr("flinkstate_iam_role.counts", "policy_json", &policy),
					expectAPI(func() error {
						c, err := start(false)
						if err != nil {
							return err
						}
						jobID, err := c.RunningJob(ctx, 3*time.Minute)
						if err != nil {
							return err
						}
						if _, err := c.WaitCheckpoints(ctx, jobID, 2, 2*time.Minute); err != nil {
							return err
						}
						if _, _, err = c.WaitCounts(ctx, 1, time.Minute); err != nil {
							return err
						}
						c.Stop() // as deleting the pods would: no savepoint, no cancel
						// Every count in a checkpoint was printed before it
						// (the output and the state change in one
						// processElement, before the barrier), so the counts
						// printed until the kill bound what a restore resumes.
						_, before = c.Counts()
						if lastID, lastJob = lastCompletedCheckpoint(c); lastJob != jobID {
							return fmt.Errorf("the JobManager logged no completed checkpoint of job %s", jobID)
						}
						return nil
					}),
				},
			},
			{
				// The data source names the newest checkpoint Flink completed:
				// the last one its JobManager logged, or the next one when
				// the kill came after Flink finished writing its _metadata
				// (PendingCheckpoint.finalizeCheckpoint writes the metadata
				// last, before the log line) and that _metadata is whole.
				Config: realFlinkConfig(bucket, oidc, role, ns, "", latestCheckpointData),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.flinkstate_latest_checkpoint.counts", tfjsonpath.New("checkpoint_id"),
						knownvalue.Int64Func(func(v int64) error {
							switch v {
							case lastID:
								return nil
							case lastID + 1:
								return wholeMetadata(t, fmt.Sprintf("%s/%s/chk-%d", dir, lastJob, v))
							}
							return fmt.Errorf("checkpoint_id %d, but Flink's JobManager last completed %d", v, lastID)
						})),
					statecheck.ExpectKnownValue("data.flinkstate_latest_checkpoint.counts", tfjsonpath.New("path"),
						knownvalue.StringFunc(func(v string) error {
							prefix := fmt.Sprintf("%s/%s/chk-", dir, lastJob)
							if v != fmt.Sprintf("%s%d", prefix, lastID) && v != fmt.Sprintf("%s%d", prefix, lastID+1) {
								return fmt.Errorf("path %s, want %s%d (or the next, when its metadata was written)", v, prefix, lastID)
							}
							return nil
						})),
				},
			},
			{
				// Restoring from it: the job's counters continue.
				Config: realFlinkConfig(bucket, oidc, role, ns,
					`    initial_savepoint_path = data.flinkstate_latest_checkpoint.counts.path`, latestCheckpointData),
				ConfigStateChecks: []statecheck.StateCheck{
					expectAPI(func() error {
						c, err := start(true)
						if err != nil {
							return err
						}
						jobID, err := c.RunningJob(ctx, 3*time.Minute)
						if err != nil {
							return err
						}
						first, _, err := c.WaitCounts(ctx, 1, 2*time.Minute)
						if err != nil {
							return err
						}
						for k, n := range first {
							if n <= 1 || n > before[k]+1 {
								return fmt.Errorf("key %d: the restored job counted from %d; want the checkpointed count's successor (2..%d)", k, n, before[k]+1)
							}
						}
						// A savepoint into the configured savepoint dir (no
						// target given), as the operator's savepoint upgrade
						// takes it: stop-with-savepoint, no drain.
						if savepoint, err = c.StopWithSavepoint(ctx, jobID, "", "CANONICAL", false, 2*time.Minute); err != nil {
							return err
						}
						_, before = c.Counts()
						return nil
					}),
				},
			},
			{
				// Restoring from the savepoint: each counter continues
				// exactly where the savepoint stopped the job.
				Config: realFlinkConfig(bucket, oidc, role, ns,
					`    initial_savepoint_path = var.savepoint`, latestCheckpointData+`variable "savepoint" { type = string }`),
				ConfigVariables: config.Variables{"savepoint": recordedString{&savepoint}},
				ConfigStateChecks: []statecheck.StateCheck{
					expectAPI(func() error {
						if want := "s3://" + bucket + "/flink/counts/savepoints/savepoint-"; !strings.HasPrefix(savepoint, want) {
							return fmt.Errorf("savepoint %s, want it under %s", savepoint, want)
						}
						c, err := start(true)
						if err != nil {
							return err
						}
						if _, err := c.RunningJob(ctx, 3*time.Minute); err != nil {
							return err
						}
						first, _, err := c.WaitCounts(ctx, 1, 2*time.Minute)
						if err != nil {
							return err
						}
						for k, n := range first {
							if n != before[k]+1 {
								return fmt.Errorf("key %d: the job restored from %s counted from %d; the savepoint stopped it at %d", k, savepoint, n, before[k])
							}
						}
						c.Stop()
						return nil
					}),
					expectAPI(func() error { return flinkRequestsAllowed(t, rf, bucket, "flink/counts", roleARN, policy) }),
				},
			},
		},
	})
}

// ancestorMarkerDelete tells whether a denied check is the one kind of
// request real Flink makes that the store's least-privilege policy denies
// and Flink does not need: after writing a file, S3A (hadoop-aws 3.3.4,
// bundled in flink-s3-fs-hadoop) deletes the "fake directory" markers of
// every parent path in one DeleteObjects (S3AFileSystem
// .deleteUnnecessaryFakeDirectories, with the default
// fs.s3a.directory.marker.retention=delete), up to the bucket's root, and
// ignores a failure of it (it catches the exception, counts it as an
// ignored error and logs at DEBUG). S3 authorizes each key of a
// DeleteObjects apart, so only the markers above the store are refused;
// the store's own objects are deleted.
func ancestorMarkerDelete(r testbed.S3Request, pr testbed.PolicyRequest, storePrefix string) bool {
	return r.Key == "" && len(r.Keys) > 0 && pr.Action == "s3:DeleteObject" &&
		strings.HasSuffix(pr.Object, "/") && strings.HasPrefix(storePrefix+"/", pr.Object) && pr.Object != storePrefix+"/"
}

// wholeMetadata reads a checkpoint's _metadata and checks Flink's header.
func wholeMetadata(t *testing.T, dir string) error {
	bucket, key, err := checkpoint.ParseS3URI(dir + "/_metadata")
	if err != nil {
		return err
	}
	obj, err := testAWS(t).S3.GetObject(context.Background(), &s3.GetObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		return fmt.Errorf("%s/_metadata: %w", dir, err)
	}
	defer obj.Body.Close()
	if _, err := checkpoint.ReadMetadataHeader(obj.Body); err != nil {
		return fmt.Errorf("%s/_metadata: %w", dir, err)
	}
	return nil
}

// flinkRequestsAllowed checks every S3 request in the test bed's log that
// credentials issued for roleARN signed on bucket against the role's policy
// (the independent policy engine), and that there were some.
func flinkRequestsAllowed(t *testing.T, rf *realFlinkBed, bucket, storePrefix, roleARN, policy string) error {
	reqs, err := testbed.ReadS3Requests(rf.env.S3RequestLog)
	if err != nil {
		return err
	}
	var asked []testbed.PolicyRequest
	var seen []testbed.S3Request
	for _, r := range reqs {
		if r.Bucket != bucket || r.RoleARN != roleARN {
			continue
		}
		prs, ok := r.PolicyRequests()
		if !ok {
			return fmt.Errorf("Flink made an S3 request the action table does not know: %+v", r)
		}
		for _, pr := range prs {
			asked = append(asked, pr)
			seen = append(seen, r)
		}
	}
	if len(asked) == 0 {
		return fmt.Errorf("no S3 request on %s was signed with credentials STS issued for %s", bucket, roleARN)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	allowed, err := testbed.EvaluatePolicy(ctx, rf.root, policy, asked)
	if err != nil {
		return err
	}
	kinds := map[string]int{}
	var denied []string
	tolerated := map[string]int{}
	for i, ok := range allowed {
		kinds[asked[i].Action]++
		if ok {
			continue
		}
		if ancestorMarkerDelete(seen[i], asked[i], storePrefix) {
			tolerated[asked[i].Object]++
			continue
		}
		b, _ := json.Marshal(seen[i])
		denied = append(denied, asked[i].Action+" "+asked[i].Object+" "+string(b))
	}
	t.Logf("Flink's S3 requests under %s: %v; denied and ignored by S3A (directory markers above the store): %v", roleARN, kinds, tolerated)
	if len(denied) > 0 {
		return fmt.Errorf("the role's policy denies %d of Flink's %d S3 requests:\n%s", len(denied), len(asked), strings.Join(denied, "\n"))
	}
	return nil
}

// TestAccRealFlink_podIdentityCheckpoints: with identity = "pod_identity"
// the deployment's configuration names the SDK's default chain, and real
// Flink, given only what EKS Pod Identity injects (the agent's URI and
// token file; the agent is a stand-in that asks the emulator's STS for the
// role), completes checkpoints under the store with the role's
// credentials, every S3 request allowed by the role's policy.
func TestAccRealFlink_podIdentityCheckpoints(t *testing.T) {
	rf := newRealFlink(t)
	ns := testNamespace(t)
	bucket, role := randName("rf-"), randName("rf-")
	ctx := context.Background()
	var roleARN, policy string
	trust := fmt.Sprintf(`  pod_identity {
    namespace       = %q
    service_account = "flink-counts"
    cluster_name    = "prod"
  }`, ns)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: realFlinkStack(bucket, role, ns, "pod_identity", trust, "", ""),
			ConfigStateChecks: []statecheck.StateCheck{
				recordAttr("flinkstate_iam_role.counts", "arn", &roleARN),
				recordAttr("flinkstate_iam_role.counts", "policy_json", &policy),
				expectAPI(func() error {
					job, err := flinkJobOf(t, ns, "counts")
					if err != nil {
						return err
					}
					if got := job.Configuration["fs.s3a.aws.credentials.provider"]; got != flinkconf.PodIdentityCredentialsProvider {
						return fmt.Errorf("fs.s3a.aws.credentials.provider = %q", got)
					}
					agent, err := testbed.StartPodIdentityAgent(ctx, rf.env, roleARN)
					if err != nil {
						return err
					}
					defer agent.Close()
					if job.Env, err = agent.PodEnv(t.TempDir(), rf.env.FlinkBed()); err != nil {
						return err
					}
					c, err := testbed.StartFlink(ctx, rf.dist, rf.env, job)
					if err != nil {
						return err
					}
					defer c.Remove()
					jobID, err := c.RunningJob(ctx, 3*time.Minute)
					if err != nil {
						return err
					}
					if _, err := c.WaitCheckpoints(ctx, jobID, 2, 2*time.Minute); err != nil {
						return err
					}
					c.Stop()
					return nil
				}),
				expectAPI(func() error { return flinkRequestsAllowed(t, rf, bucket, "flink/counts", roleARN, policy) }),
			},
		}},
	})
}
