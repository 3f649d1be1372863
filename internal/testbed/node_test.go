package testbed

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// realStack is the real operator 1.15.0 with the node stand-in (its pods
// run as real Flink 2.2.1) and kube-controller-manager's garbage
// collector, watching a namespace of its own.
type realStack struct {
	*bed
	node *Node
	op   *RealOperator
}

// newRealStack starts it, or skips saying why when the operator's jars are
// not given.
func newRealStack(t *testing.T, conf map[string]string) *realStack {
	t.Helper()
	if _, err := OperatorDir(); err != nil {
		if errors.Is(err, ErrNoOperatorJars) {
			t.Skipf("real operator skipped: %v", err)
		}
		t.Fatal(err)
	}
	env, root := testbedEnv(t)
	ctx := context.Background()
	dist, err := BuildFlink(ctx, root, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if err := EnsureControllerManager(ctx, root, env, t.Logf); err != nil {
		t.Fatal(err)
	}
	b := newBed(t)
	b.op.SetFaults(func(f *Faults) { f.Down = true })
	b.ns = newNamespace(t, b)
	b.real, b.wait = true, 4*time.Minute
	// The ServiceAccount the provider creates: IRSA's role annotation.
	if _, err := b.dyn.Resource(corev1.SchemeGroupVersion.WithResource("serviceaccounts")).Namespace(b.ns).Create(ctx,
		&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{
			"name": "flink", "namespace": b.ns,
			"annotations": map[string]any{"eks.amazonaws.com/role-arn": "arn:aws:iam::000000000000:role/real-operator-flink"}}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hosts := filepath.Join(t.TempDir(), "hosts")
	node, err := StartNode(ctx, dist, env, b.dyn, NodeOptions{Namespaces: []string{b.ns}, HostsFile: hosts, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("Flink logs (tails):\n%s", node.LogTail(30))
		}
		node.Stop()
	})
	all := map[string]string{"kubernetes.operator.reconcile.interval": "5 s"}
	for k, v := range conf {
		all[k] = v
	}
	op, err := StartRealOperator(ctx, root, env, RealOperatorOptions{Namespaces: []string{b.ns}, Conf: all, Logf: t.Logf, HostsFile: hosts})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(op.Log)
			t.Logf("real operator log (tail):\n%s", tail(string(b), 80))
		}
		op.Stop()
	})
	return &realStack{bed: b, node: node, op: op}
}

// stable waits until the operator reports the deployment's job RUNNING and
// its lifecycle STABLE at the current generation.
func (s *realStack) stable(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	return s.until(t, true, name, "STABLE and RUNNING", func(o *unstructured.Unstructured) bool {
		lc, _, _ := unstructured.NestedString(o.Object, "status", "lifecycleState")
		st := readDeploymentStatus(o)
		return lc == "STABLE" && st.JobState == flinkRunning && st.ObservedGeneration == o.GetGeneration()
	})
}

// current is the Flink cluster that runs the deployment now.
func (s *realStack) current(t *testing.T, name string) *FlinkCluster {
	t.Helper()
	cs := s.node.Clusters(s.ns, name)
	if len(cs) == 0 {
		t.Fatalf("the node ran no cluster for %s", name)
	}
	return cs[len(cs)-1]
}

// The real operator deploys a FlinkDeployment as the provider writes it;
// the node runs its JobManager Deployment as real Flink with the
// configuration the operator rendered; the operator reports the job
// RUNNING, STABLE, and the cluster's Flink version and revision.
func TestRealOperator_deploysOnRealFlink(t *testing.T) {
	s := newRealStack(t, nil)
	s.createDeployment(t, "orders", modeSavepoint, nil)
	obj := s.stable(t, "orders")
	st := readDeploymentStatus(obj)
	info, _, _ := unstructured.NestedStringMap(obj.Object, "status", "clusterInfo")
	if info["flink-version"] != "2.2.1" || info["flink-revision"] == "" {
		t.Errorf("clusterInfo %v: want Flink's version 2.2.1 and its revision", info)
	}
	// What the operator wrote reached Flink: the job id it chose, the
	// checkpoint directory of the spec, Kubernetes HA.
	c := s.current(t, "orders")
	if got := c.Configuration[fixedJobIDKey]; got != st.JobID {
		t.Errorf("Flink ran with job id %q, the operator reports %q", got, st.JobID)
	}
	cp, _ := s.dirs("orders")
	if c.Configuration[checkpointDirKey] != cp || !strings.Contains(c.Configuration["high-availability.type"], "Kubernetes") {
		t.Errorf("Flink's configuration: %s=%q, high-availability.type=%q", checkpointDirKey, c.Configuration[checkpointDirKey], c.Configuration["high-availability.type"])
	}
	s.checkpointed(t, "orders", st.JobID)
	// The objects the operator created, and the pod the node runs for them.
	for _, r := range []struct{ gvr, name string }{{"deployments", "orders"}, {"configmaps", "flink-config-orders"}, {"services", "orders-rest"}} {
		gvr := corev1.SchemeGroupVersion.WithResource(r.gvr)
		if r.gvr == "deployments" {
			gvr = deploymentsGVR
		}
		if _, err := s.dyn.Resource(gvr).Namespace(s.ns).Get(context.Background(), r.name, metav1.GetOptions{}); err != nil {
			t.Errorf("%s %s: %v", r.gvr, r.name, err)
		}
	}
	pods, err := s.dyn.Resource(podsGVR).Namespace(s.ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=orders," + jobManagerSelector})
	if err != nil || len(pods.Items) != 1 || !podReady(&pods.Items[0]) {
		t.Fatalf("JobManager pods: %v %v", pods, err)
	}
	// Flink's resource manager asked for the TaskManager: a pod it
	// created, owned by the JobManager Deployment, bound to the node and
	// running the job, whose output the cluster's counts read.
	tms, err := s.dyn.Resource(podsGVR).Namespace(s.ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=orders," + taskManagerSelector})
	if err != nil || len(tms.Items) != 1 {
		t.Fatalf("TaskManager pods: %v %v", tms, err)
	}
	tm := &tms.Items[0]
	node, _, _ := unstructured.NestedString(tm.Object, "spec", "nodeName")
	restart, _, _ := unstructured.NestedString(tm.Object, "spec", "restartPolicy")
	owners := tm.GetOwnerReferences()
	if !strings.HasPrefix(tm.GetName(), "orders-taskmanager-1-") || node != NodeName || restart != "Never" || !podReady(tm) ||
		len(owners) != 1 || owners[0].Kind != "Deployment" || owners[0].Name != "orders" {
		t.Errorf("TaskManager pod %s: node %q, restartPolicy %q, ready %v, owners %v", tm.GetName(), node, restart, podReady(tm), owners)
	}
	if _, _, err := c.WaitCounts(context.Background(), 2, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	if n := s.node.TaskManagersRunning(); n != 1 {
		t.Errorf("%d TaskManager processes run, want 1", n)
	}
}

// A FlinkStateSnapshot of a running job: the operator triggers a savepoint
// in real Flink, observes it at a reconcile and reports it COMPLETED with
// its path, where Flink wrote _metadata.
func TestRealOperator_savepointSnapshot(t *testing.T) {
	s := newRealStack(t, nil)
	s.createDeployment(t, "orders", modeSavepoint, nil)
	job := readDeploymentStatus(s.stable(t, "orders"))
	s.createSnapshot(t, "sp", "orders", 1, map[string]any{})
	st := s.snapshotEnds(t, "sp")
	_, dir := s.dirs("orders")
	if st.State != kube.SnapshotCompleted || !strings.HasPrefix(st.Path, dir+"/savepoint-"+job.JobID[:6]+"-") {
		t.Fatalf("snapshot status %+v, want COMPLETED under %s", st, dir)
	}
	if !s.exists(t, st.Path+"/_metadata") {
		t.Fatalf("no _metadata at %s", st.Path)
	}
}

// An image change in savepoint mode: the operator stops the job with a
// savepoint, deletes the JobManager Deployment (the garbage collector
// finishes the foreground deletion), deploys the new spec restoring from
// the savepoint, and the job's counters continue from it.
func TestRealOperator_savepointUpgradeContinuesCounters(t *testing.T) {
	s := newRealStack(t, nil)
	s.createDeployment(t, "orders", modeSavepoint, nil)
	s.savepointUpgradeContinues(t)
}

// The operator's standalone mode (spec.mode standalone): it creates a
// JobManager Deployment and a TaskManager Deployment orders-taskmanager
// (flink-kubernetes-standalone: type flink-standalone-kubernetes,
// CmdStandaloneJobManagerDecorator "standalone-job",
// CmdStandaloneTaskManagerDecorator "taskmanager"); the node runs their
// pods as Flink's standalone entry points, and an image change in
// savepoint mode restores the new cluster from the savepoint
// (--fromSavepoint), counters continuing.
func TestRealOperator_standaloneSavepointUpgrade(t *testing.T) {
	s := newRealStack(t, nil)
	s.createDeploymentEdited(t, "orders", modeSavepoint, nil, func(spec map[string]any) { spec["mode"] = "standalone" })
	st := readDeploymentStatus(s.stable(t, "orders"))
	s.checkpointed(t, "orders", st.JobID)
	tms, err := s.dyn.Resource(podsGVR).Namespace(s.ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=orders,component=taskmanager,type=" + standaloneType})
	if err != nil || len(tms.Items) != 1 || !podReady(&tms.Items[0]) || !strings.HasPrefix(tms.Items[0].GetName(), "orders-taskmanager-") {
		t.Fatalf("standalone TaskManager pods: %v %v", tms, err)
	}
	if owners := tms.Items[0].GetOwnerReferences(); len(owners) != 1 || owners[0].Name != "orders-taskmanager" {
		t.Errorf("TaskManager pod owners %v, want the Deployment orders-taskmanager", owners)
	}
	s.savepointUpgradeContinues(t)
}

// savepointUpgradeContinues changes the image of the running savepoint-mode
// deployment orders and checks that the operator upgraded it through a
// savepoint that the new cluster restored, its counters continuing.
func (s *realStack) savepointUpgradeContinues(t *testing.T) {
	t.Helper()
	first := readDeploymentStatus(s.stable(t, "orders"))
	old := s.current(t, "orders")
	if _, _, err := old.WaitCounts(context.Background(), 2, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	s.patch(t, true, "orders", `{"spec":{"image":"flink:2.2.1-java21"}}`)
	obj := s.until(t, true, "orders", "upgraded", func(o *unstructured.Unstructured) bool {
		st := readDeploymentStatus(o)
		lc, _, _ := unstructured.NestedString(o.Object, "status", "lifecycleState")
		return o.GetGeneration() == 2 && st.ObservedGeneration == 2 && st.JobState == flinkRunning && lc == "STABLE" && st.JobID != first.JobID
	})
	t.Logf("upgrade took %s", time.Since(start).Round(time.Second))
	st := readDeploymentStatus(obj)
	_, sp := s.dirs("orders")
	if !strings.HasPrefix(st.UpgradeSavepointPath, sp+"/savepoint-"+first.JobID[:6]+"-") || !s.exists(t, st.UpgradeSavepointPath+"/_metadata") {
		t.Fatalf("upgradeSavepointPath %q: want a savepoint of job %s under %s with _metadata", st.UpgradeSavepointPath, first.JobID, sp)
	}
	c := s.current(t, "orders")
	if c == old {
		t.Fatal("the node runs the old cluster still")
	}
	// The operator sets the restore path with the Flink 1.20 client it is
	// built on: SavepointConfigOptions.SAVEPOINT_PATH, execution.savepoint.path
	// (ApplicationReconciler.deploy), which Flink 2.2 reads as the
	// deprecated key of StateRecoveryOptions.SAVEPOINT_PATH
	// (execution.state-recovery.path).
	if got := c.Configuration["execution.savepoint.path"]; got != st.UpgradeSavepointPath {
		t.Errorf("the new cluster restored from %q, want %q", got, st.UpgradeSavepointPath)
	}
	if old.Alive() {
		t.Error("the old cluster's processes still run")
	}
	_, before := old.Counts()
	firstNew, _, err := c.WaitCounts(context.Background(), 1, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for k, n := range firstNew {
		// The savepoint was taken when the job stopped: the restored
		// counts go on from (at most) the last the old job printed, not
		// from 1.
		if n <= 1 || n > before[k]+1 {
			t.Errorf("key %d: the new job printed %d first, the old one %d last: want it to continue", k, n, before[k])
		}
	}
}

// Deleting a FlinkDeployment in savepoint mode. The real operator cancels
// the job without a savepoint unless kubernetes.operator.job.savepoint-on-
// deletion is set (default false; ApplicationReconciler.cleanupInternal,
// KubernetesOperatorConfigOptions.SAVEPOINT_ON_DELETION, release-1.15.0),
// which is why the provider takes the final savepoint itself before it
// deletes (resource_deployment_restore.go). After a cancel it deletes the
// cluster (scaled to zero, then deleted with Foreground propagation, which
// the garbage collector finishes); after a savepoint it leaves the cluster
// up and the garbage collector removes it with the FlinkDeployment. Either
// way the JobManager's processes stop and the Deployment, its ConfigMaps
// and Service are gone well before the operator's 5-minute timeout.
func TestRealOperator_delete(t *testing.T) {
	for _, c := range []struct {
		name     string
		conf     map[string]any
		finalSvp bool
	}{
		{"default", nil, false},
		{"savepoint-on-deletion", map[string]any{"kubernetes.operator.job.savepoint-on-deletion": "true"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newRealStack(t, nil)
			s.createDeploymentEdited(t, "orders", modeSavepoint, nil, func(spec map[string]any) {
				for k, v := range c.conf {
					spec["flinkConfiguration"].(map[string]any)[k] = v
				}
			})
			s.stable(t, "orders")
			fc := s.current(t, "orders")
			if _, _, err := fc.WaitCounts(context.Background(), 1, 2*time.Minute); err != nil {
				t.Fatal(err)
			}
			_, sp := s.dirs("orders")
			before := s.savepoints(t, sp)
			start := time.Now()
			if err := kube.DeleteAndWait(context.Background(), s.dyn, kube.FlinkDeploymentGVR, s.ns, "orders", 3*time.Minute); err != nil {
				t.Fatal(err)
			}
			t.Logf("delete took %s", time.Since(start).Round(time.Second))
			after := s.savepoints(t, sp)
			if got := len(after) - len(before); c.finalSvp && got != 1 || !c.finalSvp && got != 0 {
				t.Errorf("savepoints under %s: %v before the delete, %v after (final savepoint wanted: %t)", sp, before, after, c.finalSvp)
			}
			// The JobManager goes: deleted by the operator after a cancel
			// (deleteClusterDeployment), or, after a savepoint suspend,
			// which leaves the cluster up, by the garbage collector when the
			// FlinkDeployment it is owned by is gone
			// (kubernetes.jobmanager.owner.reference).
			var left []string
			for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
				left = nil
				if fc.Alive() || s.node.Running() != 0 {
					left = append(left, "Flink processes")
				}
				for _, r := range []struct{ gvr, name string }{{"configmaps", "flink-config-orders"}, {"configmaps", "pod-template-orders"}, {"services", "orders-rest"}} {
					if _, err := s.dyn.Resource(corev1.SchemeGroupVersion.WithResource(r.gvr)).Namespace(s.ns).Get(context.Background(), r.name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
						left = append(left, r.gvr+" "+r.name)
					}
				}
				if _, err := s.dyn.Resource(deploymentsGVR).Namespace(s.ns).Get(context.Background(), "orders", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					left = append(left, "the JobManager Deployment")
				}
				if len(left) == 0 {
					break
				}
			}
			if len(left) > 0 {
				t.Errorf("90 s after the delete, still there: %s", strings.Join(left, ", "))
			}
			t.Logf("the JobManager was gone %s after the delete began", time.Since(start).Round(time.Second))
		})
	}
}

// savepoints lists the savepoint folders (those with _metadata) under dir.
func (s *realStack) savepoints(t *testing.T, dir string) []string {
	t.Helper()
	bucket, prefix, _ := splitS3(dir)
	out, err := s.s3.ListObjectsV2(context.Background(), listInput(bucket, prefix+"/"))
	if err != nil {
		t.Fatal(err)
	}
	var sps []string
	for _, o := range out.Contents {
		if k := *o.Key; strings.HasSuffix(k, "/_metadata") {
			sps = append(sps, strings.TrimSuffix(k, "/_metadata"))
		}
	}
	return sps
}

func listInput(bucket, prefix string) *s3.ListObjectsV2Input {
	return &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)}
}

// The running-job scenarios the model runs with real Flink
// (TestOperator_realFlink: the same functions, the same assertions), here
// on the real operator with its pods on the node: the model's rules for a
// running job are held to the real operator.
func TestDifferential_runningJobs(t *testing.T) {
	for name, scenario := range map[string]func(*testing.T, *bed){
		"savepointUpgrade": savepointUpgrade, "lastStateUpgrade": lastStateUpgrade,
		"statelessUpgrade": statelessUpgrade, "snapshotLifecycle": snapshotLifecycle,
	} {
		t.Run(name+"/real", func(t *testing.T) { scenario(t, newRealStack(t, nil).bed) })
	}
}

// A first deployment restoring from a path that holds nothing, on the
// model and on the real operator with real Flink (restoreFromMissingPath).
func TestDifferential_restoreFromMissingPath(t *testing.T) {
	for _, ha := range []bool{true, false} {
		name := "HA"
		if !ha {
			name = "noHA"
		}
		t.Run(name+"/model", func(t *testing.T) { restoreFromMissingPath(t, newBed(t), ha) })
		t.Run(name+"/real", func(t *testing.T) { restoreFromMissingPath(t, newRealStack(t, nil).bed, ha) })
	}
}

// tools/kcm pins the kube-controller-manager of the same Kubernetes release
// as the test bed's kube-apiserver (tools/kube): the same k8s.io/kubernetes
// version and the same replacements of its staging modules.
func TestKubeControllerManagerPinMatchesAPIServer(t *testing.T) {
	root, err := FindRoot()
	if err != nil {
		t.Fatal(err)
	}
	pins := func(dir string) []string {
		b, err := os.ReadFile(filepath.Join(root, "tools", dir, "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, l := range strings.Split(string(b), "\n") {
			l = strings.TrimPrefix(strings.TrimSpace(l), "require ")
			if strings.HasPrefix(l, "k8s.io/kubernetes v") || (strings.HasPrefix(l, "k8s.io/") && strings.Contains(l, " => ")) {
				out = append(out, l)
			}
		}
		return out
	}
	kube, kcm := pins("kube"), pins("kcm")
	if len(kube) == 0 || !reflect.DeepEqual(kube, kcm) {
		t.Fatalf("tools/kube pins\n%s\ntools/kcm pins\n%s", strings.Join(kube, "\n"), strings.Join(kcm, "\n"))
	}
}

// Row 7 of issue 36, the savepoint-mode branch, on the real operator: a
// savepoint-mode job is upgraded (a savepoint the operator records in
// upgradeSavepointPath) to an image the node cannot pull, so its new
// JobManager never starts (the Deployment's Available condition False
// since its creation). The change that fixes the image proceeds: the
// operator deletes the JobManager that never started, counts the job
// FAILED and restores the new spec from the savepoint it recorded
// (ApplicationReconciler.getJobUpgrade → deleteJmThatNeverStarted,
// FlinkUtils.jmPodNeverStarted; AbstractJobReconciler.getJobUpgrade: "Job
// is in terminal state, ready for upgrade from observed latest state"),
// which kube.NotRunningRestore reads before the fix; the counters
// continue from the savepoint. (The model has no JobManager Deployment
// objects to read that condition from, so this runs on the real operator
// only.)
func TestRealOperator_fixNotRunningSavepoint(t *testing.T) {
	s := newRealStack(t, nil)
	ctx := context.Background()
	s.createDeployment(t, "orders", modeSavepoint, nil)
	first := readDeploymentStatus(s.stable(t, "orders"))
	old := s.current(t, "orders")
	if _, _, err := old.WaitCounts(ctx, 2, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	s.patch(t, true, "orders", `{"spec":{"image":"flink:no-such-tag"}}`)
	obj := s.until(t, true, "orders", "not running: the image cannot be pulled", func(o *unstructured.Unstructured) bool {
		st := readDeploymentStatus(o)
		return st.ObservedGeneration == 2 && st.JMStatus == jmError && strings.Contains(st.Error, "DeploymentFailedException")
	})
	st := readDeploymentStatus(obj)
	_, sp := s.dirs("orders")
	if !strings.HasPrefix(st.UpgradeSavepointPath, sp+"/savepoint-"+first.JobID[:6]+"-") || !s.exists(t, st.UpgradeSavepointPath+"/_metadata") {
		t.Fatalf("upgradeSavepointPath %q: want the upgrade's savepoint of job %s", st.UpgradeSavepointPath, first.JobID)
	}
	recorded := st.UpgradeSavepointPath
	if !kube.JobManagerNeverStarted(ctx, s.dyn, s.ns, "orders") {
		t.Error("kube.JobManagerNeverStarted is false for the JobManager of an image that cannot be pulled")
	}
	haType, _, _ := unstructured.NestedString(obj.Object, "spec", "flinkConfiguration", "high-availability.type")
	ha := haType != "" && !strings.EqualFold(haType, "none")
	src, err := kube.NotRunningRestore(ctx, s.dyn, obj, "savepoint", ha)
	if err != nil || !src.Proceeds || src.Path != recorded {
		t.Fatalf("kube.NotRunningRestore: %+v %v, want it to proceed from %s", src, err, recorded)
	}
	_, before := old.Counts()

	s.patch(t, true, "orders", `{"spec":{"image":"flink:2.2.1-java17"}}`)
	obj = s.until(t, true, "orders", "fixed and running", func(o *unstructured.Unstructured) bool {
		st := readDeploymentStatus(o)
		return st.ObservedGeneration == 3 && st.JobState == flinkRunning
	})
	st = readDeploymentStatus(obj)
	if st.UpgradeSavepointPath != recorded || st.JobID == first.JobID {
		t.Errorf("after the fix: job %s (first %s), upgradeSavepointPath %q; want a new job from %s", st.JobID, first.JobID, st.UpgradeSavepointPath, recorded)
	}
	c := s.current(t, "orders")
	if got := c.Configuration["execution.savepoint.path"]; c == old || got != recorded {
		t.Fatalf("the fixed cluster restored from %q, want %q", got, recorded)
	}
	firstNew, _, err := c.WaitCounts(ctx, 1, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for k, n := range firstNew {
		if n <= 1 || n > before[k]+1 {
			t.Errorf("key %d: the fixed job printed %d first, the first one %d last: want it to continue", k, n, before[k])
		}
	}
}
