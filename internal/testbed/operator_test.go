package testbed

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ktypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed/flinkrun"
)

// Integration tests against the test bed's API server and S3 (TF_ACC=1;
// they start the test bed, or use one started with make testbed-up).

type bed struct {
	dyn dynamic.Interface
	s3  *s3.Client
	ns  string
	op  *Operator
	// real: the operator runs jobs as real Flink (op.Flink), and the
	// deployments carry the configuration the provider derives.
	real bool
	wait time.Duration // how long until waits for a state
	// model: the differential suite's model operator for this bed (nil on
	// the real operator and in the model's own tests, which use op).
	model *Operator
}

const testBucket = "operator-model-test"

func newBed(t *testing.T) *bed { return newBedWith(t, false) }

// newBedWith is newBed whose operator runs real Flink when withRealFlink.
func newBedWith(t *testing.T, withRealFlink bool) *bed {
	t.Helper()
	env, _ := testbedEnv(t)
	ctx := context.Background()
	kc, err := kube.New(kube.Config{ConfigPath: env.Kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	ac, err := newEnvAWS(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ac.S3.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(testBucket)}); err != nil {
		var owned *s3types.BucketAlreadyOwnedByYou
		if !asErr(err, &owned) {
			t.Fatalf("bucket: %v", err)
		}
	}
	ns := "model-" + randomHex(4)
	if _, err := kc.Dynamic.Resource(corev1.SchemeGroupVersion.WithResource("namespaces")).Create(ctx,
		&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	b := &bed{dyn: kc.Dynamic, s3: ac.S3, ns: ns, wait: time.Minute}
	b.op = &Operator{Namespace: ns, S3: ac.S3, Logf: t.Logf, RetryBase: 50 * time.Millisecond}
	if withRealFlink {
		root, _ := FindRoot()
		dist, err := BuildFlink(ctx, root, t.Logf)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		b.real, b.wait = true, 4*time.Minute
		// The snapshot controller's own retry delay (10s × 2^(failures-1)):
		// real Flink refuses a savepoint while the job's tasks are still
		// starting ("Not all required tasks are currently running"), and
		// the operator's retry is what gets past that, not the model's
		// shortened one.
		b.op.RetryBase = 0
		rf := &RealFlink{Dist: dist, Env: env, Dyn: kc.Dynamic, Logf: t.Logf,
			PodEnv: func(context.Context, *unstructured.Unstructured) ([]string, error) {
				return IRSAEnv(dir, env, "arn:aws:iam::000000000000:role/operator-real-flink")
			}}
		b.op.Flink = rf
		t.Cleanup(rf.Close)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); b.op.Run(runCtx, kc.Dynamic, 50*time.Millisecond) }()
	t.Cleanup(func() { cancel(); <-done })
	return b
}

func (b *bed) dirs(name string) (cp, sp string) {
	return fmt.Sprintf("s3://%s/%s/%s/checkpoints", testBucket, b.ns, name), fmt.Sprintf("s3://%s/%s/%s/savepoints", testBucket, b.ns, name)
}

func (b *bed) createDeployment(t *testing.T, name, upgradeMode string, job map[string]any) {
	t.Helper()
	b.createDeploymentEdited(t, name, upgradeMode, job, nil)
}

// createDeploymentEdited is createDeployment with edit applied to the spec
// before the object is created.
func (b *bed) createDeploymentEdited(t *testing.T, name, upgradeMode string, job map[string]any, edit func(spec map[string]any)) {
	t.Helper()
	spec := b.deploymentSpec(name, upgradeMode, job)
	if edit != nil {
		edit(spec)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkDeployment",
		"metadata": map[string]any{"name": name, "namespace": b.ns},
		"spec":     spec,
	}}
	if _, err := b.dyn.Resource(kube.FlinkDeploymentGVR).Namespace(b.ns).Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// deploymentSpec is the FlinkDeployment spec createDeployment writes, its
// state under name's directories.
func (b *bed) deploymentSpec(name, upgradeMode string, job map[string]any) map[string]any {
	cp, sp := b.dirs(name)
	j := map[string]any{"jarURI": "local:///opt/flink/examples/streaming/StateMachineExample.jar", "upgradeMode": upgradeMode, "parallelism": int64(1)}
	for k, v := range job {
		j[k] = v
	}
	conf := map[string]any{checkpointDirKey: cp, savepointDirKey: sp}
	spec := map[string]any{
		"image": "flink:2.2.1-java17", "flinkVersion": "v2_2", "serviceAccount": "flink",
		"flinkConfiguration": conf,
		"job":                j,
		"jobManager":         map[string]any{"resource": map[string]any{"memory": "2048m", "cpu": int64(1)}},
		"taskManager":        map[string]any{"resource": map[string]any{"memory": "2048m", "cpu": int64(1)}},
	}
	if b.real {
		// What flinkstate_deployment writes for this upgrade mode: the
		// derived configuration and the S3 plugin in the pod template.
		derived, _ := flinkconf.Derive(flinkconf.Input{FlinkVersion: "2.2.1", Identity: "irsa", UpgradeMode: upgradeMode,
			Image: "flink:2.2.1-java17", State: flinkconf.State{CheckpointDir: cp, SavepointDir: sp, HADir: strings.TrimSuffix(cp, "/checkpoints") + "/ha",
				Backend: "rocksdb"},
			Values: map[string]string{"task_manager.task_slots": "1", "state.incremental": "true", "state.checkpoint_interval": "2s"}})
		for k, v := range derived {
			conf[k] = v
		}
		j["parallelism"] = int64(1)
		spec["podTemplate"] = map[string]any{"spec": map[string]any{"containers": []any{map[string]any{
			"name": flinkconf.MainContainer, "env": []any{map[string]any{"name": flinkconf.PluginsEnv, "value": "flink-s3-fs-hadoop-2.2.1.jar"}}}}}}
	}
	return spec
}

func (b *bed) patch(t *testing.T, gvrDeployment bool, name, patch string) {
	t.Helper()
	r := b.dyn.Resource(kube.FlinkStateSnapshotGVR)
	if gvrDeployment {
		r = b.dyn.Resource(kube.FlinkDeploymentGVR)
	}
	if _, err := r.Namespace(b.ns).Patch(context.Background(), name, ktypes.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// get reads a FlinkDeployment or FlinkStateSnapshot of the bed's namespace.
func (b *bed) get(t *testing.T, deployment bool, name string) *unstructured.Unstructured {
	t.Helper()
	r := b.dyn.Resource(kube.FlinkStateSnapshotGVR)
	if deployment {
		r = b.dyn.Resource(kube.FlinkDeploymentGVR)
	}
	obj, err := r.Namespace(b.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// eventUntil polls the events of a snapshot until one of reason satisfies cond.
func (b *bed) eventUntil(t *testing.T, name, reason string, cond func(kube.OperatorEvent) bool) kube.OperatorEvent {
	t.Helper()
	return b.eventOn(t, false, name, reason, cond)
}

// eventOn polls the events of a FlinkDeployment or FlinkStateSnapshot
// until one of reason satisfies cond.
func (b *bed) eventOn(t *testing.T, deployment bool, name, reason string, cond func(kube.OperatorEvent) bool) kube.OperatorEvent {
	t.Helper()
	var seen []kube.OperatorEvent
	for deadline := time.Now().Add(b.wait); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		obj := b.get(t, deployment, name)
		evs, err := kube.ObjectEvents(context.Background(), b.dyn, obj)
		if err != nil {
			t.Fatal(err)
		}
		seen = evs
		for _, e := range evs {
			if e.Reason == reason && cond(e) {
				return e
			}
		}
	}
	t.Fatalf("no %s event as wanted on %s; events: %+v", reason, name, seen)
	return kube.OperatorEvent{}
}

// until polls the object until cond holds (a minute at most: the model
// answers within a few passes).
func (b *bed) until(t *testing.T, deployment bool, name, what string, cond func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
	t.Helper()
	r := b.dyn.Resource(kube.FlinkStateSnapshotGVR)
	if deployment {
		r = b.dyn.Resource(kube.FlinkDeploymentGVR)
	}
	var last *unstructured.Unstructured
	for deadline := time.Now().Add(b.wait); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		obj, err := r.Namespace(b.ns).Get(context.Background(), name, metav1.GetOptions{})
		if err == nil {
			last = obj
			if cond(obj) {
				return obj
			}
		}
	}
	t.Fatalf("%s never %s; last: %v", name, what, last)
	return nil
}

// runningAt waits until the operator observed the current generation and the job runs.
func (b *bed) runningAt(t *testing.T, name string) deploymentStatus {
	obj := b.until(t, true, name, "running at its generation", func(o *unstructured.Unstructured) bool {
		st := readDeploymentStatus(o)
		return st.ObservedGeneration == o.GetGeneration() && st.ReconState == reconDeployed && st.JobState == flinkRunning
	})
	return readDeploymentStatus(obj)
}

// checkpointed waits until the job has a completed checkpoint in S3.
func (b *bed) checkpointed(t *testing.T, name, jobID string) {
	t.Helper()
	cp, _ := b.dirs(name)
	bucket, key, _ := splitS3(cp + "/" + jobID)
	for deadline := time.Now().Add(b.wait); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		out, err := b.s3.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(key + "/chk-")})
		if err == nil {
			for _, o := range out.Contents {
				if strings.HasSuffix(aws.ToString(o.Key), "/_metadata") {
					return
				}
			}
		}
	}
	t.Fatalf("job %s of %s completed no checkpoint under %s", jobID, name, cp)
}

func (b *bed) exists(t *testing.T, uri string) bool {
	t.Helper()
	bucket, key, _ := splitS3(uri)
	_, err := b.s3.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	return err == nil
}

func (b *bed) put(t *testing.T, uri string) {
	t.Helper()
	if err := b.op.Put(context.Background(), uri, "x"); err != nil {
		t.Fatal(err)
	}
}

func TestOperator_checkpointLayout(t *testing.T) {
	b := newBed(t)
	b.createDeployment(t, "orders", modeSavepoint, nil)
	st := b.runningAt(t, "orders")
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(st.JobID) {
		t.Fatalf("job id %q", st.JobID)
	}
	cp, _ := b.dirs("orders")
	if !b.exists(t, cp+"/"+st.JobID+"/chk-1/_metadata") {
		t.Fatalf("no completed checkpoint %s/%s/chk-1/_metadata", cp, st.JobID)
	}
	bucket, key, _ := splitS3(cp + "/" + st.JobID)
	key += "/"
	out, err := b.s3.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(key)})
	if err != nil {
		t.Fatal(err)
	}
	var shared, taskowned bool
	for _, o := range out.Contents {
		shared = shared || strings.HasPrefix(*o.Key, key+"shared/")
		taskowned = taskowned || strings.HasPrefix(*o.Key, key+"taskowned/")
	}
	if !shared || !taskowned {
		t.Fatalf("job dir %s lacks shared/ or taskowned/", cp)
	}
	obj := b.until(t, true, "orders", "stable", func(o *unstructured.Unstructured) bool {
		return readDeploymentStatus(o).Lifecycle(false) == "STABLE"
	})
	if !hasFinalizer(obj, DeploymentFinalizer) {
		t.Fatalf("finalizers %v", obj.GetFinalizers())
	}
	if LastReconciledSpec(obj)["job"].(map[string]any)["upgradeMode"] != modeStateless {
		t.Fatalf("a first deployment without initialSavepointPath is recorded stateless: %v", LastReconciledSpec(obj))
	}
}

// Changing initialSavepointPath alone is ignored; a new nonce redeploys from it.
func TestOperator_initialSavepointPathNeedsNonce(t *testing.T) {
	b := newBed(t)
	_, sp := b.dirs("orders")
	restore := sp + "/savepoint-abcdef-0123456789ab"
	b.put(t, restore+"/_metadata")
	b.createDeployment(t, "orders", modeSavepoint, nil)
	first := b.runningAt(t, "orders")

	b.patch(t, true, "orders", fmt.Sprintf(`{"spec":{"job":{"initialSavepointPath":%q}}}`, restore))
	obj := b.until(t, true, "orders", "observed the path change", func(o *unstructured.Unstructured) bool {
		return readDeploymentStatus(o).ObservedGeneration == o.GetGeneration()
	})
	st := readDeploymentStatus(obj)
	if st.JobID != first.JobID || st.UpgradeSavepointPath != "" || st.JobState != flinkRunning {
		t.Fatalf("initialSavepointPath without a new nonce redeployed: job %s -> %s, upgradeSavepointPath %q", first.JobID, st.JobID, st.UpgradeSavepointPath)
	}
	if _, ok := LastReconciledSpec(obj)["job"].(map[string]any)["initialSavepointPath"]; ok {
		t.Fatalf("an ignored change was recorded as reconciled: %v", LastReconciledSpec(obj))
	}

	b.patch(t, true, "orders", `{"spec":{"job":{"savepointRedeployNonce":1}}}`)
	st = b.runningAt(t, "orders")
	if st.JobID == first.JobID || st.UpgradeSavepointPath != restore {
		t.Fatalf("a new nonce: job %s -> %s, upgradeSavepointPath %q, want a new job from %s", first.JobID, st.JobID, st.UpgradeSavepointPath, restore)
	}
	// The same nonce again: nothing happens.
	b.patch(t, true, "orders", `{"metadata":{"labels":{"x":"y"}},"spec":{"job":{"savepointRedeployNonce":1}}}`)
	if again := b.runningAt(t, "orders"); again.JobID != st.JobID {
		t.Fatalf("unchanged nonce redeployed: %s -> %s", st.JobID, again.JobID)
	}
}

func TestOperator_newNonceWithoutPathIsRejected(t *testing.T) {
	b := newBed(t)
	b.createDeployment(t, "orders", modeSavepoint, nil)
	first := b.runningAt(t, "orders")
	b.patch(t, true, "orders", `{"spec":{"job":{"savepointRedeployNonce":7}}}`)
	obj := b.until(t, true, "orders", "reported the validation error", func(o *unstructured.Unstructured) bool {
		return strings.Contains(readDeploymentStatus(o).Error, "InitialSavepointPath must not be empty")
	})
	if st := readDeploymentStatus(obj); st.JobID != first.JobID || st.ObservedGeneration == obj.GetGeneration() {
		t.Fatalf("an invalid spec was acted on: %+v", st)
	}
}

func TestOperator_restoreFromMissingPathFindsNoJob(t *testing.T) {
	restoreFromMissingPath(t, newBed(t), true)
}

func TestOperator_restoreFromMissingPathWithoutHACrashLoops(t *testing.T) {
	restoreFromMissingPath(t, newBed(t), false)
}

// restoreFromMissingPath: a first deployment whose initialSavepointPath
// holds nothing. The operator records the path
// (updateStatusBeforeFirstDeployment) and hands it to Flink, which cannot
// resolve it and whose JobManager exits (restoreUnresolvable). With
// Kubernetes HA the restarted JobManager runs no job (the failed one is in
// the job-result-store), so the operator reports "Job Not Found" with a
// Warning event Missing, the job RECONCILING and the JobManager READY;
// without HA the JobManager exits at every start, a crash loop the
// operator reports as a DeploymentFailedException (CrashLoopBackOff), the
// JobManager in ERROR. Either way the lifecycle stays DEPLOYED, never
// FAILED, and Flink's "Cannot find checkpoint or savepoint" reaches
// neither the status nor an event. TestDifferential_restoreFromMissingPath
// holds the model to the real operator here.
func restoreFromMissingPath(t *testing.T, b *bed, ha bool) {
	cp, sp := b.dirs("orders")
	path := sp + "/no-such-savepoint"
	b.createDeploymentEdited(t, "orders", modeSavepoint, map[string]any{"initialSavepointPath": path}, func(spec map[string]any) {
		conf := spec["flinkConfiguration"].(map[string]any)
		switch {
		case ha && !haEnabled(spec):
			conf["high-availability.type"] = "kubernetes"
			conf["high-availability.storageDir"] = strings.TrimSuffix(cp, "/checkpoints") + "/ha"
		case !ha:
			for k := range conf {
				if strings.HasPrefix(k, "high-availability") {
					delete(conf, k)
				}
			}
		}
	})
	reason, jm, done := "Missing", jmReady, func(st deploymentStatus) bool { return st.Error == jobNotFound }
	if !ha {
		reason, jm = "CrashLoopBackOff", jmError
		done = func(st deploymentStatus) bool { return strings.Contains(st.Error, "DeploymentFailedException") }
	}
	ev := b.eventOn(t, true, "orders", reason, func(kube.OperatorEvent) bool { return true })
	obj := b.until(t, true, "orders", "reported the restore's end", func(o *unstructured.Unstructured) bool {
		return done(readDeploymentStatus(o))
	})
	st := readDeploymentStatus(obj)
	switch {
	case ev.Type != eventWarning:
		t.Errorf("event %+v, want a Warning", ev)
	case ha && ev.Message != jobNotFound:
		t.Errorf("event %+v, want %q", ev, jobNotFound)
	case !ha && !strings.HasPrefix(ev.Message, "[flink-main-container] back-off "):
		t.Errorf("event %+v, want the kubelet's back-off of flink-main-container", ev)
	case !ha && !strings.HasPrefix(kube.OperatorMessage(st.Error), "[flink-main-container] back-off "):
		t.Errorf("status.error %q, want the kubelet's back-off of flink-main-container", st.Error)
	}
	if strings.Contains(st.Error, "Cannot find checkpoint or savepoint") || strings.Contains(ev.Message, "Cannot find checkpoint or savepoint") {
		t.Errorf("Flink's message reached the status or an event (the real operator never shows it): %q, %q", st.Error, ev.Message)
	}
	lc, _, _ := unstructured.NestedString(obj.Object, "status", "lifecycleState")
	if st.JobState != flinkReconciling || st.JMStatus != jm || lc != "DEPLOYED" || st.UpgradeSavepointPath != path || st.ObservedGeneration != 1 {
		t.Fatalf("status %v: want the job RECONCILING, the JobManager %s, lifecycle DEPLOYED, upgradeSavepointPath %s, observedGeneration 1",
			obj.Object["status"], jm, path)
	}
}

func TestOperator_savepointUpgrade(t *testing.T) { savepointUpgrade(t, newBed(t)) }

func savepointUpgrade(t *testing.T, b *bed) {
	b.createDeployment(t, "orders", modeSavepoint, nil)
	first := b.runningAt(t, "orders")
	b.patch(t, true, "orders", `{"spec":{"image":"flink:2.2.1-java21"}}`)
	st := b.runningAt(t, "orders")
	_, sp := b.dirs("orders")
	if !regexp.MustCompile(`^` + regexp.QuoteMeta(sp) + `/savepoint-` + first.JobID[:6] + `-[0-9a-f]{12}$`).MatchString(st.UpgradeSavepointPath) {
		t.Fatalf("upgradeSavepointPath %q, want a savepoint of job %s under %s", st.UpgradeSavepointPath, first.JobID, sp)
	}
	if !b.exists(t, st.UpgradeSavepointPath+"/_metadata") {
		t.Fatalf("no savepoint files at %s", st.UpgradeSavepointPath)
	}
	if st.JobID == first.JobID {
		t.Fatalf("a savepoint restore keeps job id %s", st.JobID)
	}
	list, err := b.dyn.Resource(kube.FlinkStateSnapshotGVR).Namespace(b.ns).List(context.Background(), metav1.ListOptions{LabelSelector: "snapshot.trigger-type=UPGRADE"})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("upgrade snapshots: %v %v", list, err)
	}
	snap := b.until(t, false, list.Items[0].GetName(), "completed", func(o *unstructured.Unstructured) bool {
		return readSnapshotStatus(o).State == kube.SnapshotCompleted
	})
	if p := readSnapshotStatus(snap).Path; p != st.UpgradeSavepointPath {
		t.Fatalf("upgrade snapshot path %q, want %q", p, st.UpgradeSavepointPath)
	}
}

func TestOperator_failedUpgradeSavepointKeepsJob(t *testing.T) {
	b := newBed(t)
	b.createDeployment(t, "orders", modeSavepoint, nil)
	first := b.runningAt(t, "orders")
	b.op.SetFaults(func(f *Faults) { f.SavepointFailures = 1000 })
	b.patch(t, true, "orders", `{"spec":{"image":"flink:2.2.1-java21"}}`)
	obj := b.until(t, true, "orders", "reported the failed savepoint", func(o *unstructured.Unstructured) bool {
		return strings.Contains(readDeploymentStatus(o).Error, "Savepoint Error")
	})
	st := readDeploymentStatus(obj)
	if st.JobID != first.JobID || st.JobState != flinkRunning || st.ObservedGeneration == obj.GetGeneration() {
		t.Fatalf("the old job should keep running unobserved-new-spec: %+v", st)
	}
	if img := LastReconciledSpec(obj)["image"]; img != "flink:2.2.1-java17" {
		t.Fatalf("last reconciled image %v", img)
	}
}

func TestOperator_lastStateUpgrade(t *testing.T) { lastStateUpgrade(t, newBed(t)) }

func lastStateUpgrade(t *testing.T, b *bed) {
	b.createDeployment(t, "orders", modeLastState, nil)
	first := b.runningAt(t, "orders")
	b.checkpointed(t, "orders", first.JobID) // a last-state resume needs one
	b.patch(t, true, "orders", `{"spec":{"image":"flink:2.2.1-java21"}}`)
	b.until(t, true, "orders", "upgrading", func(o *unstructured.Unstructured) bool {
		st := readDeploymentStatus(o)
		return st.ObservedGeneration == o.GetGeneration()
	})
	st := b.runningAt(t, "orders")
	if st.JobID != first.JobID || st.UpgradeSavepointPath != LastStateDummyPath {
		t.Fatalf("last-state: job %s -> %s, upgradeSavepointPath %q", first.JobID, st.JobID, st.UpgradeSavepointPath)
	}
}

func TestOperator_statelessUpgrade(t *testing.T) { statelessUpgrade(t, newBed(t)) }

func statelessUpgrade(t *testing.T, b *bed) {
	b.createDeployment(t, "orders", modeStateless, nil)
	first := b.runningAt(t, "orders")
	b.patch(t, true, "orders", `{"spec":{"image":"flink:2.2.1-java21"}}`)
	st := b.runningAt(t, "orders")
	if st.JobID == first.JobID || st.UpgradeSavepointPath != "" {
		t.Fatalf("stateless: job %s -> %s, upgradeSavepointPath %q", first.JobID, st.JobID, st.UpgradeSavepointPath)
	}
}

func (b *bed) createSnapshot(t *testing.T, name, deployment string, backoff int64, savepoint map[string]any) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkStateSnapshot",
		"metadata": map[string]any{"name": name, "namespace": b.ns},
		"spec": map[string]any{
			"jobReference": map[string]any{"kind": "FlinkDeployment", "name": deployment},
			"backoffLimit": backoff,
			"savepoint":    savepoint,
		},
	}}
	if _, err := b.dyn.Resource(kube.FlinkStateSnapshotGVR).Namespace(b.ns).Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (b *bed) snapshotEnds(t *testing.T, name string) snapshotStatus {
	obj := b.until(t, false, name, "ended", func(o *unstructured.Unstructured) bool {
		switch readSnapshotStatus(o).State {
		case kube.SnapshotCompleted, kube.SnapshotAbandoned:
			return true
		case kube.SnapshotFailed:
			// FAILED is final only once failures exceed backoffLimit.
			return true
		}
		return false
	})
	return readSnapshotStatus(obj)
}

func TestOperator_snapshotLifecycle(t *testing.T) { snapshotLifecycle(t, newBed(t)) }

func snapshotLifecycle(t *testing.T, b *bed) {
	b.createDeployment(t, "orders", modeSavepoint, nil)
	job := b.runningAt(t, "orders")
	b.createSnapshot(t, "sp", "orders", 1, map[string]any{"disposeOnDelete": true})
	st := b.snapshotEnds(t, "sp")
	_, dir := b.dirs("orders")
	if st.State != kube.SnapshotCompleted || !strings.HasPrefix(st.Path, dir+"/savepoint-"+job.JobID[:6]+"-") || st.TriggerID == "" || !b.exists(t, st.Path+"/_metadata") {
		t.Fatalf("savepoint status %+v", st)
	}
	obj, _ := b.dyn.Resource(kube.FlinkStateSnapshotGVR).Namespace(b.ns).Get(context.Background(), "sp", metav1.GetOptions{})
	if l := obj.GetLabels(); l["snapshot.state"] != "COMPLETED" || l["snapshot.type"] != "SAVEPOINT" || l["job-reference.name"] != "orders" || !hasFinalizer(obj, SnapshotFinalizer) {
		t.Fatalf("labels %v finalizers %v", l, obj.GetFinalizers())
	}
	// A target path in the spec wins over the deployment's savepoint dir.
	b.createSnapshot(t, "sp-target", "orders", 1, map[string]any{"path": "s3://" + testBucket + "/elsewhere"})
	if st := b.snapshotEnds(t, "sp-target"); !strings.HasPrefix(st.Path, "s3://"+testBucket+"/elsewhere/savepoint-") {
		t.Fatalf("target path ignored: %+v", st)
	}
	// Deleting a COMPLETED disposeOnDelete savepoint disposes of its files.
	// The real operator only triggers the disposal (AbstractFlinkService
	// .disposeSavepoint sends SavepointDisposalTriggerHeaders and does not
	// ask for its result) and releases the snapshot; Flink deletes the
	// files after that. So the files go soon after the snapshot, not
	// before it.
	if err := kube.DeleteAndWait(context.Background(), b.dyn, kube.FlinkStateSnapshotGVR, b.ns, "sp", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); b.exists(t, st.Path+"/_metadata"); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("disposeOnDelete savepoint %s not disposed 30 s after its snapshot was deleted", st.Path)
		}
	}
}

func TestOperator_snapshotBackoff(t *testing.T) {
	b := newBed(t)
	b.createDeployment(t, "orders", modeSavepoint, nil)
	b.runningAt(t, "orders")
	b.op.SetFaults(func(f *Faults) { f.SavepointFailures, f.SavepointError = 1000, "Checkpoint expired before completing." })
	for name, c := range map[string]struct{ backoff, failures int64 }{"b0": {0, 1}, "b2": {2, 3}, "unset": {-1, 1}} {
		b.createSnapshot(t, name, "orders", c.backoff, map[string]any{})
		obj := b.until(t, false, name, "FAILED for good", func(o *unstructured.Unstructured) bool {
			st := readSnapshotStatus(o)
			return st.State == kube.SnapshotFailed && st.Failures > c.backoff
		})
		st := readSnapshotStatus(obj)
		if st.Failures != c.failures || !strings.Contains(st.Error, "Checkpoint expired before completing.") || st.Path != "" {
			t.Errorf("%s: %+v, want %d failures", name, st, c.failures)
		}
	}
}

func TestOperator_snapshotOneRetrySucceeds(t *testing.T) {
	b := newBed(t)
	b.createDeployment(t, "orders", modeSavepoint, nil)
	b.runningAt(t, "orders")
	b.op.SetFaults(func(f *Faults) { f.SavepointFailures = 1 })
	b.createSnapshot(t, "sp", "orders", 1, map[string]any{})
	obj := b.until(t, false, "sp", "completed", func(o *unstructured.Unstructured) bool {
		return readSnapshotStatus(o).State == kube.SnapshotCompleted
	})
	if st := readSnapshotStatus(obj); st.Failures != 1 {
		t.Fatalf("failures %d, want 1 (one retry)", st.Failures)
	}
}

// A snapshot whose FlinkDeployment does not exist is refused by the
// operator's validator: no status is ever written, only a ValidationError
// event "Target for snapshot <ns>/<name> was not found", said again every
// reconcile interval (FlinkStateSnapshotController.reconcile →
// validateSnapshot; DefaultValidator.validateStateSnapshot). Deleting it
// never completes: the operator's cleanup throws on the missing status and
// keeps the finalizer. The real operator does the same
// (TestDifferential_snapshotTargetMissing).
func TestOperator_snapshotTargetMissing(t *testing.T) {
	b := newBed(t)
	b.op.SetReconcileInterval(300 * time.Millisecond)
	b.createSnapshot(t, "sp", "missing", 3, map[string]any{})
	want := "Target for snapshot " + b.ns + "/missing was not found"
	ev := b.eventUntil(t, "sp", "ValidationError", func(e kube.OperatorEvent) bool { return e.Count >= 2 })
	if ev.Message != want || ev.Type != "Warning" {
		t.Fatalf("event %+v, want a Warning %q", ev, want)
	}
	obj := b.get(t, false, "sp")
	if _, ok := obj.Object["status"]; ok {
		t.Fatalf("the refused snapshot got a status: %v", obj.Object["status"])
	}
	if err := b.dyn.Resource(kube.FlinkStateSnapshotGVR).Namespace(b.ns).Delete(context.Background(), "sp", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // several passes of the model
	if obj := b.get(t, false, "sp"); !hasFinalizer(obj, SnapshotFinalizer) || obj.GetDeletionTimestamp() == nil {
		t.Fatalf("the finalizer was removed from a snapshot without status")
	}
}

// A job that is not running abandons the snapshot
// (FlinkStateSnapshotUtils.abandonSnapshotIfJobNotRunning).
func TestOperator_snapshotAbandoned(t *testing.T) {
	b := newBed(t)
	b.op.SetFaults(func(f *Faults) { f.JobNeverRuns = true })
	b.createDeployment(t, "idle", modeSavepoint, nil)
	b.until(t, true, "idle", "deployed", func(o *unstructured.Unstructured) bool { return readDeploymentStatus(o).JMStatus == jmReady })
	b.createSnapshot(t, "sp2", "idle", 3, map[string]any{})
	if st := b.snapshotEnds(t, "sp2"); st.State != kube.SnapshotAbandoned || !strings.Contains(st.Error, "is not running") {
		t.Fatalf("status %+v", st)
	}
}

func TestOperator_alreadyExists(t *testing.T) {
	b := newBed(t)
	b.createSnapshot(t, "sp", "missing", 1, map[string]any{"alreadyExists": true, "path": "s3://" + testBucket + "/sp/savepoint-1"})
	if st := b.snapshotEnds(t, "sp"); st.State != kube.SnapshotCompleted || st.Path != "s3://"+testBucket+"/sp/savepoint-1" {
		t.Fatalf("status %+v", st)
	}
}

func asErr[T error](err error, target *T) bool { return errors.As(err, target) }

// TestOperator_realFlink is the differential test of the model against real
// Flink: the same scenarios, with the same assertions on what is observable
// (status, job ids, savepoint paths and their files in S3, snapshot
// objects), with the model's Flink (TestOperator_savepointUpgrade, ...) and
// with real Flink 2.2.1 running each job.
func TestOperator_realFlink(t *testing.T) {
	for name, scenario := range map[string]func(*testing.T, *bed){
		"savepointUpgrade": savepointUpgrade, "lastStateUpgrade": lastStateUpgrade,
		"statelessUpgrade": statelessUpgrade, "snapshotLifecycle": snapshotLifecycle,
	} {
		t.Run(name, func(t *testing.T) { scenario(t, newBedWith(t, true)) })
	}
}

// A JobManager that cannot reach the API server when it starts exits while
// it creates its Kubernetes HA services (ClusterEntrypoint →
// HighAvailabilityServicesUtils.createHighAvailabilityServices →
// KubernetesHaServicesFactory, whose ConfigMap informer lists first; Flink
// 2.2.1), as one did on a loaded CI machine. The kubelet restarts it
// (RealFlink.startRestarting); the job runs, and the deployment never
// shows it FAILED.
func TestOperator_realFlinkJobManagerRestarts(t *testing.T) {
	b := newBedWith(t, true)
	env, _ := testbedEnv(t)
	p, err := NewFaultProxy(env.KubeHost)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := env.KubeconfigVia(p.URL("https"), kubeconfig); err != nil {
		t.Fatal(err)
	}
	p.Stop()
	exits := make(chan error, 10)
	b.op.Flink.(*RealFlink).SetJobManagerFault(kubeconfig, func(err error) {
		exits <- err
		p.Start()
	})
	b.createDeployment(t, "orders", modeSavepoint, nil)
	obj := b.until(t, true, "orders", "running, or its job FAILED", func(o *unstructured.Unstructured) bool {
		st := readDeploymentStatus(o)
		return st.JobState == "FAILED" || (st.ObservedGeneration == o.GetGeneration() && st.JobState == flinkRunning)
	})
	if st := readDeploymentStatus(obj); st.JobState != flinkRunning || st.Error != "" {
		t.Fatalf("after a JobManager's exit: job %s, error %q; want the restarted JobManager's job RUNNING", st.JobState, st.Error)
	}
	if len(exits) != 1 {
		t.Fatalf("%d JobManager exits; want the first start's only", len(exits))
	}
	err = <-exits
	exit, _, _ := strings.Cut(err.Error(), "\n")
	t.Logf("the first JobManager: %s", exit)
	if !errors.Is(err, flinkrun.ErrJobManagerExited) || !strings.Contains(exit, "KubernetesHaServicesFactory") {
		t.Fatalf("the first JobManager's exit: %v; want it to exit creating its Kubernetes HA services", err)
	}
	if p.Refused() == 0 {
		t.Fatal("no JobManager tried the stopped API server")
	}
}

// A savepoint-mode job upgraded (a savepoint recorded) to an image that
// cannot be pulled: its new JobManager never starts. The change that fixes
// the image restores a new job from the recorded savepoint (the operator
// deletes the JobManager that never started and counts the job FAILED:
// ApplicationReconciler.getJobUpgrade, deleteJmThatNeverStarted), as
// TestRealOperator_fixNotRunningSavepoint shows on the real operator.
func TestOperator_fixNeverStartedFromRecordedSavepoint(t *testing.T) {
	b := newBed(t)
	b.createDeployment(t, "orders", modeSavepoint, nil)
	first := b.runningAt(t, "orders")
	b.op.SetFaults(func(f *Faults) {
		f.ContainerWaiting = &ContainerState{Reason: "ImagePullBackOff", Message: `Back-off pulling image "flink:no-such-tag"`}
	})
	b.patch(t, true, "orders", `{"spec":{"image":"flink:no-such-tag"}}`)
	obj := b.until(t, true, "orders", "JobManager in ERROR", func(o *unstructured.Unstructured) bool {
		st := readDeploymentStatus(o)
		return st.ObservedGeneration == 2 && st.JMStatus == jmError
	})
	recorded := readDeploymentStatus(obj).UpgradeSavepointPath
	_, sp := b.dirs("orders")
	if !strings.HasPrefix(recorded, sp+"/savepoint-") {
		t.Fatalf("upgradeSavepointPath %q after the savepoint upgrade", recorded)
	}
	b.op.SetFaults(func(f *Faults) { f.ContainerWaiting = nil })
	b.patch(t, true, "orders", `{"spec":{"image":"flink:2.2.1-java17"}}`)
	st := b.runningAt(t, "orders")
	if st.ObservedGeneration != 3 || st.JobID == first.JobID || st.UpgradeSavepointPath != recorded || st.Error != "" {
		t.Fatalf("after the fix: %+v; want a new job from %s", st, recorded)
	}
}
