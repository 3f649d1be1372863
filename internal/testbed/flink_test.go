package testbed

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/awsclient"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/iampolicy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

// realFlink is testbedEnv and the built Flink distribution.
func realFlink(t *testing.T) (Env, FlinkDist) {
	t.Helper()
	env, root := testbedEnv(t)
	dist, err := BuildFlink(context.Background(), root, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	return env, dist
}

// realFlinkConf is the configuration the provider derives for a store in
// bucket with the given identity (flinkconf.Derive, as flinkstate_deployment does).
func realFlinkConf(t *testing.T, bucket, identity string, edit ...func(*flinkconf.Input)) (map[string]string, string) {
	t.Helper()
	prefix := "s3://" + bucket + "/flink/counts"
	in := flinkconf.Input{
		FlinkVersion: "2.2.1", Identity: identity, UpgradeMode: "savepoint",
		Image: "flink:2.2.1-java17", JarURI: "local:///opt/flink/usrlib/flinkstate-testjob.jar",
		State: flinkconf.State{CheckpointDir: prefix + "/checkpoints", SavepointDir: prefix + "/savepoints", HADir: prefix + "/ha",
			Backend: "rocksdb"},
		Values: map[string]string{"task_manager.task_slots": "1", "state.incremental": "true", "state.checkpoint_interval": "2s"},
	}
	// Without HA unless a test asks for it (flinkconf turns it on for
	// savepoint upgrades when there is an HA directory).
	off := false
	in.HighAvailability = &off
	for _, e := range edit {
		e(&in)
	}
	conf, findings := flinkconf.Derive(in)
	for _, f := range findings {
		if f.Severity == flinkconf.Error {
			t.Fatalf("derive: %s: %s", f.Summary, f.Detail)
		}
	}
	return conf, prefix + "/checkpoints"
}

// realBed is the test bed, the built Flink and an AWS client, with a bucket
// of the test's own.
type realBed struct {
	env    Env
	dist   FlinkDist
	root   string
	ac     *awsclient.Clients
	bucket string
}

func newRealBed(t *testing.T, bucketPrefix string) *realBed {
	t.Helper()
	env, dist := realFlink(t)
	root, err := FindRoot()
	if err != nil {
		t.Fatal(err)
	}
	ac, err := newEnvAWS(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	b := &realBed{env: env, dist: dist, root: root, ac: ac, bucket: bucketPrefix + randomHex(4)}
	if _, err := ac.S3.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(b.bucket)}); err != nil {
		t.Fatal(err)
	}
	return b
}

// irsaJob is the test job with conf, and the IRSA environment for role.
func (b *realBed) irsaJob(t *testing.T, conf map[string]string, role string) FlinkJob {
	t.Helper()
	if b.env.STSAddress == "" {
		t.Fatal("the test bed has no STS listener on port 443 (needs root or CAP_NET_BIND_SERVICE): IRSA cannot reach STS")
	}
	env, err := IRSAEnv(t.TempDir(), b.env, role)
	if err != nil {
		t.Fatal(err)
	}
	return FlinkJob{Configuration: conf, PluginJar: "flink-s3-fs-hadoop-2.2.1.jar", Parallelism: 1, Env: env}
}

// run starts a cluster for job and waits until its job runs; the cluster
// is removed when the test ends.
func (b *realBed) run(t *testing.T, job FlinkJob) (*FlinkCluster, string) {
	t.Helper()
	ctx := context.Background()
	c, err := StartFlink(ctx, b.dist, b.env, job)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Remove)
	jobID, err := c.RunningJob(ctx, 3*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return c, jobID
}

// TestRealFlink_credentialsAsEKSDeliversThem: with the credentials class the
// provider derives for each identity mode and the environment EKS injects
// (IRSA: web identity token, STS at the emulator; Pod Identity: the agent
// stand-in's container credentials), real Flink completes checkpoints, and
// every S3 request it makes is signed with the role's temporary credentials,
// never with static keys.
func TestRealFlink_credentialsAsEKSDeliversThem(t *testing.T) {
	for _, identity := range []string{"irsa", "pod_identity"} {
		t.Run(identity, func(t *testing.T) {
			ctx := context.Background()
			b := newRealBed(t, "realflink-")
			env, bucket := b.env, b.bucket
			conf, dir := realFlinkConf(t, bucket, identity)
			role := "arn:aws:iam::000000000000:role/realflink-" + randomHex(3)
			var job FlinkJob
			if identity == "irsa" {
				job = b.irsaJob(t, conf, role)
			} else {
				agent, err := StartPodIdentityAgent(ctx, env, role)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(agent.Close)
				job = FlinkJob{Configuration: conf, PluginJar: "flink-s3-fs-hadoop-2.2.1.jar", Parallelism: 1}
				if job.Env, err = agent.PodEnv(t.TempDir(), env.FlinkBed()); err != nil {
					t.Fatal(err)
				}
			}
			c, jobID := b.run(t, job)
			chk, err := c.WaitCheckpoints(ctx, jobID, 1, 2*time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if want := dir + "/" + jobID + "/chk-"; !strings.HasPrefix(chk, want) {
				t.Fatalf("checkpoint path %s, want under %s", chk, want)
			}
			c.Stop()
			reqs, err := ReadS3Requests(env.S3RequestLog)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, r := range reqs {
				if r.Bucket != bucket || r.AccessKey == env.AccessKey {
					continue // the test's own calls
				}
				if r.RoleARN != role {
					t.Errorf("S3 request %s %s/%s signed by %s, not by credentials issued for %s", r.Method, r.Bucket, r.Key, r.AccessKey, role)
				}
				n++
			}
			if n == 0 {
				t.Fatal("the request log has no S3 request of Flink's")
			}
		})
	}
}

// TestRealFlink_recordMetadataFixtures records real checkpoint metadata
// for the checkpoint package's tests: an incremental RocksDB checkpoint
// (with the keys of the files its job wrote under shared/), a canonical and
// a native savepoint. It runs only when asked to regenerate them:
//
//	FLINKSTATE_REGENERATE_FIXTURES=1 TF_ACC=1 go test -count=1 -run TestRealFlink_recordMetadataFixtures ./internal/testbed/
func TestRealFlink_recordMetadataFixtures(t *testing.T) {
	if os.Getenv("FLINKSTATE_REGENERATE_FIXTURES") == "" {
		t.Skip("regenerates internal/checkpoint/testdata: set FLINKSTATE_REGENERATE_FIXTURES=1")
	}
	b := newRealBed(t, "fixtures-")
	ctx, ac, bucket, root := context.Background(), b.ac, b.bucket, b.root
	conf, _ := realFlinkConf(t, bucket, "irsa")
	c, jobID := b.run(t, b.irsaJob(t, conf, "arn:aws:iam::000000000000:role/fixtures"))
	chk, err := c.WaitCheckpoints(ctx, jobID, 3, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "internal", "checkpoint", "testdata")
	record := func(name, dir string) {
		t.Helper()
		key := strings.TrimPrefix(dir, "s3://"+bucket+"/") + "/_metadata"
		obj, err := ac.S3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		b, err := io.ReadAll(obj.Body)
		obj.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(out, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, name, "_metadata"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		// The objects under the snapshot's job (checkpoint) or own
		// directory (savepoint) when it was recorded, with their sizes.
		base := strings.TrimPrefix(dir, "s3://"+bucket+"/")
		if name == "incremental-rocksdb-checkpoint" {
			base = base[:strings.LastIndex(base, "/")]
		}
		var lines []string
		p := s3.NewListObjectsV2Paginator(ac.S3, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(base + "/")})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range page.Contents {
				lines = append(lines, fmt.Sprintf("%s %d", strings.TrimPrefix(aws.ToString(o.Key), base+"/"), aws.ToInt64(o.Size)))
			}
		}
		sort.Strings(lines)
		meta := fmt.Sprintf("# recorded from real Flink 2.2.1 by TestRealFlink_recordMetadataFixtures\n# snapshot: %s\n# objects under s3://BUCKET/%s/ then:\n%s\n",
			strings.Replace(dir, bucket, "BUCKET", 1), base, strings.Join(lines, "\n"))
		if err := os.WriteFile(filepath.Join(out, name, "objects.txt"), []byte(meta), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d bytes of _metadata, %d objects", name, len(b), len(lines))
	}
	record("incremental-rocksdb-checkpoint", chk)
	canonical, err := c.TriggerSavepoint(ctx, jobID, "", "CANONICAL", 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	record("canonical-savepoint", canonical)
	// Stopping with a savepoint FINISHES the job, and Flink then discards
	// its retained checkpoints (CheckpointProperties: discard on FINISHED
	// even with RETAIN_ON_CANCELLATION): the checkpoint was recorded first.
	native, err := c.StopWithSavepoint(ctx, jobID, "", "NATIVE", false, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	record("native-savepoint", native)
}

// TestRealFlink_derivedKeysAreFlinks: for the newest patch of every Flink
// minor the provider accepts, every key the provider derives, over identity
// modes, backends, upgrade, claim and HA modes with every state setting
// given, is a ConfigOption key (or a fallback or deprecated key) of that
// version's jars, or an fs.s3a.* key the S3 plugin's Hadoop declares
// (Flink's S3 file system passes fs.s3a.* to it: S3FileSystemFactory's
// FLINK_CONFIG_PREFIXES); both credentials classes load from that version's
// S3 plugin; and the HA factory the provider names is in its
// flink-kubernetes. Where a jar of the version itself is not served, the
// pinned stand-in and why it may stand in are logged (FlinkKeyJars).
func TestRealFlink_derivedKeysAreFlinks(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("needs Java and Maven like the real-Flink tests: set TF_ACC=1")
	}
	root, err := FindRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dist, err := BuildFlink(ctx, root, t.Logf) // ConfigKeys is in the test job's jar
	if err != nil {
		t.Fatal(err)
	}
	classes := []string{flinkconf.IRSACredentialsProvider, flinkconf.PodIdentityCredentialsProvider}
	minors := make([]string, 0, len(flinkconf.ReleasedVersions))
	for m := range flinkconf.ReleasedVersions {
		minors = append(minors, m)
	}
	sort.Strings(minors)
	for _, minor := range minors {
		patch, _ := flinkconf.NewestPatch(minor)
		version := fmt.Sprintf("%s.%d", minor, patch)
		t.Run(version, func(t *testing.T) {
			knows, err := KnowsVersion(ctx, root, dist, version, classes, t.Logf)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range knows.Jars.Notes {
				t.Log(n)
			}
			for _, c := range classes {
				if !knows.Loads[c] {
					t.Errorf("%s does not load from flink-s3-fs-hadoop-%s", c, knows.Jars.S3)
				}
			}
			// The plan-time refusal of Pod Identity for an S3 plugin whose
			// bundled SDK is older than EKS Pod Identity needs (1.12.746),
			// against the plugin jar itself: Derive for the plugin's own
			// version refuses pod_identity exactly when its SDK is older.
			sdk, err := BundledAWSSDK(knows.PluginJar)
			if err != nil || sdk == "" {
				t.Fatalf("the AWS SDK bundled in flink-s3-fs-hadoop-%s: %q, %v", knows.Jars.S3, sdk, err)
			}
			tooOld := versionLess(sdk, "1.12.746")
			_, fs := flinkconf.Derive(flinkconf.Input{FlinkVersion: knows.Jars.S3, Identity: flinkconf.IdentityPodIdentity, UpgradeMode: flinkconf.UpgradeSavepoint,
				State: flinkconf.State{CheckpointDir: "s3://b/p/checkpoints", Backend: flinkconf.BackendRocksDB}})
			refused := slices.ContainsFunc(fs, func(f flinkconf.Finding) bool {
				return f.Severity == flinkconf.Error && slices.Equal(f.Path, []string{"identity"})
			})
			if refused != tooOld {
				t.Errorf("flink-s3-fs-hadoop-%s bundles AWS SDK %s (older than Pod Identity's 1.12.746: %t), but the provider refuses pod_identity with Flink %s: %t",
					knows.Jars.S3, sdk, tooOld, knows.Jars.S3, refused)
			}
			t.Logf("flink-s3-fs-hadoop-%s bundles AWS SDK %s", knows.Jars.S3, sdk)
			if ok, err := JarHasClass(knows.KubernetesJar, flinkconf.KubernetesHAFactory); err != nil || !ok {
				t.Errorf("%s is not in flink-kubernetes-%s (%v)", flinkconf.KubernetesHAFactory, knows.Jars.Kubernetes, err)
			}
			seen := derivedKeys(t, version)
			checked := 0
			for k := range seen {
				if k == "state.backend.forst.local-dir" && !knows.HasForSt {
					t.Logf("%q not checked: no flink-statebackend-forst jar of Flink %s is served (see the notes above)", k, minor)
					continue
				}
				checked++
				if knows.Options[k] || (strings.HasPrefix(k, "fs.s3a.") && knows.Hadoop[k]) {
					continue
				}
				t.Errorf("the provider writes %q, which Flink %s does not declare (no ConfigOption, fallback or deprecated key, nor an S3A key)", k, version)
			}
			t.Logf("Flink %s: %d derived keys checked against %d Flink keys (%d jars) and %d S3A keys of flink-s3-fs-hadoop-%s",
				version, checked, len(knows.Options), len(knows.OptionsScanned), len(knows.Hadoop), knows.Jars.S3)
		})
	}
}

// derivedKeys is every key flinkconf.Derive writes for version, over
// identities, backends, upgrade modes, claim modes and HA settings, with
// every state setting given. ForSt before Flink 2.0 must be refused.
func derivedKeys(t *testing.T, version string) map[string]bool {
	t.Helper()
	v, err := flinkconf.ParseVersion(version)
	if err != nil {
		t.Fatal(err)
	}
	par := int64(2)
	on, off := true, false
	seen := map[string]bool{}
	for _, identity := range []string{"irsa", "pod_identity"} {
		for _, backend := range []string{"rocksdb", "hashmap", "forst"} {
			for _, upgrade := range []string{"last-state", "savepoint", "stateless"} {
				for _, claim := range []string{"", "CLAIM", "NO_CLAIM"} {
					for _, ha := range []*bool{nil, &on, &off} {
						// A ForSt job's operator savepoints must be NATIVE
						// (flinkconf's forstSavepointRule): the user's key,
						// an operator setting, not a derived Flink key.
						var extra map[string]string
						if backend == "forst" {
							extra = map[string]string{flinkconf.SavepointFormatKey: "NATIVE"}
						}
						conf, findings := flinkconf.Derive(flinkconf.Input{Extra: extra,
							FlinkVersion: version, Identity: identity, UpgradeMode: upgrade,
							HighAvailability: ha, HasJob: true, Parallelism: &par,
							Image: "flink:" + version + "-java17", JarURI: "local:///opt/flink/usrlib/job.jar",
							State: flinkconf.State{CheckpointDir: "s3://bucket/p/checkpoints", SavepointDir: "s3://bucket/p/savepoints", HADir: "s3://bucket/p/ha",
								Backend: backend, ExternalizedRetention: "RETAIN_ON_CANCELLATION", LocalDir: "/flink-state"},
							Values: map[string]string{"task_manager.task_slots": "2", "job.claim_mode": claim, "state.incremental": "true",
								"state.checkpoint_interval": "60s", "state.min_pause": "10s", "state.timeout": "10 min", "state.mode": "EXACTLY_ONCE",
								"state.num_retained": "3"},
						})
						refused := false
						for _, f := range findings {
							if f.Severity == flinkconf.Error {
								refused = true
								if backend != "forst" || v.Major >= 2 {
									t.Errorf("Derive refused %s/%s/%s/%q: %s: %s", identity, backend, upgrade, claim, f.Summary, f.Detail)
								}
							}
						}
						if backend == "forst" && v.Major < 2 {
							if !refused {
								t.Errorf("Derive accepted the ForSt backend on Flink %s, which has none the provider supports", version)
							}
							continue
						}
						for k := range conf {
							if _, user := extra[k]; !user {
								seen[k] = true
							}
						}
					}
				}
			}
		}
	}
	return seen
}

// TestRealFlink_checkpointsOutsideTheStoreAreDenied: a job whose checkpoint
// directory lies outside the store its role was made for writes nothing
// the role's policy allows there. The emulator enforces no policy, so Flink
// runs; the independent engine judges each of its writes, and all of them
// would be refused on AWS.
func TestRealFlink_checkpointsOutsideTheStoreAreDenied(t *testing.T) {
	b := newRealBed(t, "outside-")
	ctx, env, bucket, root := context.Background(), b.env, b.bucket, b.root
	// The role's policy covers flink/orders; the job checkpoints under flink/counts.
	policy, err := iampolicy.Permissions("aws", []store.Store{{Bucket: bucket, Prefix: "flink/orders"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	conf, _ := realFlinkConf(t, bucket, "irsa")
	role := "arn:aws:iam::000000000000:role/outside-" + randomHex(3)
	c, jobID := b.run(t, b.irsaJob(t, conf, role))
	if _, err := c.WaitCheckpoints(ctx, jobID, 1, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	c.Stop()
	reqs, err := ReadS3Requests(env.S3RequestLog)
	if err != nil {
		t.Fatal(err)
	}
	var writes []PolicyRequest
	for _, r := range reqs {
		if r.Bucket != bucket || r.RoleARN != role {
			continue
		}
		prs, ok := r.PolicyRequests()
		if !ok {
			t.Fatalf("Flink made an S3 request the action table does not know: %+v", r)
		}
		for _, pr := range prs {
			if pr.Action == "s3:PutObject" {
				writes = append(writes, pr)
			}
		}
	}
	if len(writes) == 0 {
		t.Fatal("the request log has no write of Flink's")
	}
	allowed, err := EvaluatePolicy(ctx, root, policy.JSON(), writes)
	if err != nil {
		t.Fatal(err)
	}
	for i, ok := range allowed {
		if ok {
			t.Errorf("the policy for flink/orders allows Flink's write of %s", writes[i].Object)
		}
	}
	// The control: the policy of the store the job does write to allows them.
	own, err := iampolicy.Permissions("aws", []store.Store{{Bucket: bucket, Prefix: "flink/counts"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if allowed, err = EvaluatePolicy(ctx, root, own.JSON(), writes); err != nil {
		t.Fatal(err)
	}
	for i, ok := range allowed {
		if !ok {
			t.Errorf("the policy for flink/counts denies Flink's write of %s", writes[i].Object)
		}
	}
	t.Logf("%d writes of the job's checkpoints under flink/counts, each denied by the policy of flink/orders", len(writes))
}

// TestRealFlink_lastStateRecoversFromHAMetadata: with upgrade_mode =
// "last-state" the provider turns Kubernetes HA on; real Flink keeps its
// HA metadata in ConfigMaps of the real API server (<cluster-id>-cluster-config-map
// and one per job, labelled app=<cluster-id> and type=flink-native-kubernetes,
// as Flink 2.2.1 wrote them in this test; there is no configmap-type label) and under
// high-availability.storageDir; when both JVMs are killed, as when the
// pods are deleted, a new cluster of the same deployment given no restore
// path resumes the job from that metadata: its counters continue.
func TestRealFlink_lastStateRecoversFromHAMetadata(t *testing.T) {
	b := newRealBed(t, "lastha-")
	ctx, env := context.Background(), b.env
	kc, err := kube.New(kube.Config{ConfigPath: env.Kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	ns := "ha-" + randomHex(4)
	nsRes := kc.Dynamic.Resource(corev1.SchemeGroupVersion.WithResource("namespaces"))
	if _, err := nsRes.Create(ctx, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": ns}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	conf, _ := realFlinkConf(t, b.bucket, "irsa", func(in *flinkconf.Input) { in.UpgradeMode, in.HighAvailability = "last-state", nil })
	if conf["high-availability.type"] != flinkconf.KubernetesHAFactory {
		t.Fatalf("last-state derived high-availability.type = %q", conf["high-availability.type"])
	}
	job := b.irsaJob(t, conf, "arn:aws:iam::000000000000:role/lastha")
	job.Namespace, job.Name = ns, "counts"
	c1, jobID := b.run(t, job)
	if _, err := c1.WaitCheckpoints(ctx, jobID, 2, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c1.WaitCounts(ctx, 1, time.Minute); err != nil {
		t.Fatal(err)
	}
	c1.Stop()
	_, before := c1.Counts() // what was printed until the kill bounds what HA resumes
	cms, err := kc.Dynamic.Resource(corev1.SchemeGroupVersion.WithResource("configmaps")).Namespace(ns).List(ctx,
		metav1.ListOptions{LabelSelector: "app=counts,type=flink-native-kubernetes"})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, cm := range cms.Items {
		names[cm.GetName()] = true
	}
	if !names["counts-cluster-config-map"] || len(names) < 2 {
		t.Fatalf("HA ConfigMaps after the job checkpointed: %v; want counts-cluster-config-map and the job's", names)
	}

	c2, recovered := b.run(t, job) // no restore path: HA decides
	if recovered != jobID {
		t.Errorf("the new cluster runs job %s, not the recovered %s", recovered, jobID)
	}
	first, _, err := c2.WaitCounts(ctx, 1, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for k, n := range first {
		if n <= 1 || n > before[k]+1 {
			t.Errorf("key %d: the recovered job counted from %d; want the checkpointed count's successor (2..%d)", k, n, before[k]+1)
		}
	}
	c2.Stop()
}

// versionLess compares dotted numeric versions (1.12.319 < 1.12.746).
func versionLess(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		x, _ := strconv.Atoi(as[i])
		y, _ := strconv.Atoi(bs[i])
		if x != y {
			return x < y
		}
	}
	return len(as) < len(bs)
}
