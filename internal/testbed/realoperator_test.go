package testbed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// The differential suite: each scenario runs on the operator model and,
// when its jars are given (FLINKSTATE_OPERATOR_DIR), on the real operator
// 1.15.0, and asserts what a user can observe (status fields, events,
// finalizers). A rule of the model stays only while the real operator
// agrees.

// operatorUnderTest starts one kind of operator for a fresh namespace.
type operatorUnderTest struct {
	name string
	// start runs the operator for ns; it returns the model (nil for the
	// real operator), whose faults stand in for what the real one meets on
	// this test bed (e.g. no node: JobManagerNeverReady).
	start func(t *testing.T, ns string, conf map[string]string) *Operator
}

func operatorsUnderTest(t *testing.T) []operatorUnderTest {
	model := operatorUnderTest{name: "model", start: func(t *testing.T, ns string, conf map[string]string) *Operator {
		env, _ := testbedEnv(t)
		kc, err := kube.New(kube.Config{ConfigPath: env.Kubeconfig})
		if err != nil {
			t.Fatal(err)
		}
		op := &Operator{Namespace: ns, Logf: t.Logf, RetryBase: 50 * time.Millisecond, DefaultConfig: conf,
			// The chart's reconcile interval (values.yaml: 15 s) would make
			// the model's suite slow; the model repeats events at 1 s.
			ReconcileInterval: time.Second}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); op.Run(ctx, kc.Dynamic, 50*time.Millisecond) }()
		t.Cleanup(func() { cancel(); <-done })
		return op
	}}
	realOp := operatorUnderTest{name: "real", start: func(t *testing.T, ns string, conf map[string]string) *Operator {
		env, root := testbedEnv(t)
		op, err := StartRealOperator(context.Background(), root, env, RealOperatorOptions{Namespaces: []string{ns}, Conf: conf, Logf: t.Logf})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if t.Failed() {
				b, _ := os.ReadFile(op.Log)
				t.Logf("real operator log (tail):\n%s", tail(string(b), 60))
			}
			op.Stop()
		})
		return nil
	}}
	out := []operatorUnderTest{model}
	if _, err := OperatorDir(); err != nil {
		if errors.Is(err, ErrNoOperatorJars) {
			t.Logf("real operator skipped: %v", err)
		} else {
			t.Fatal(err)
		}
	} else {
		out = append(out, realOp)
	}
	return out
}

// bed is a test bed of its own namespace watched by this operator, started
// with conf (the bed's own model is stopped: it watches another namespace).
func (o operatorUnderTest) bed(t *testing.T, conf map[string]string) *bed {
	t.Helper()
	b := newBed(t)
	b.op.SetFaults(func(f *Faults) { f.Down = true })
	b.ns = newNamespace(t, b)
	b.model = o.start(t, b.ns, conf)
	b.wait = 2 * time.Minute
	return b
}

// newNamespace makes a namespace for one scenario.
func newNamespace(t *testing.T, b *bed) string {
	t.Helper()
	ns := "diff-" + randomHex(4)
	if _, err := b.dyn.Resource(corev1.SchemeGroupVersion.WithResource("namespaces")).Create(context.Background(),
		&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return ns
}

// A FlinkStateSnapshot whose FlinkDeployment does not exist: no status,
// ever; a ValidationError event "Target for snapshot <ns>/<name> was not
// found", said again every reconcile interval; deleting it leaves the
// finalizer in place for good, with no event (the issue that found it
// expected a CleanupFailed event: the real operator throws before the
// controller could write one).
func TestDifferential_snapshotTargetMissing(t *testing.T) {
	for _, o := range operatorsUnderTest(t) {
		t.Run(o.name, func(t *testing.T) {
			b := o.bed(t, map[string]string{"kubernetes.operator.reconcile.interval": "5 s"})
			settle := 12 * time.Second
			b.createSnapshot(t, "sp", "missing", 3, map[string]any{})
			ev := b.eventUntil(t, "sp", "ValidationError", func(kube.OperatorEvent) bool { return true })
			if want := "Target for snapshot " + b.ns + "/missing was not found"; ev.Message != want || ev.Type != "Warning" {
				t.Fatalf("event %+v, want a Warning %q", ev, want)
			}
			// Said again at the next reconcile, still without a status.
			b.eventUntil(t, "sp", "ValidationError", func(e kube.OperatorEvent) bool { return e.Count >= 2 })
			if obj := b.get(t, false, "sp"); !kube.NeverReconciled(obj) {
				t.Fatalf("the refused snapshot got a status: %v", obj.Object["status"])
			}
			if err := b.dyn.Resource(kube.FlinkStateSnapshotGVR).Namespace(b.ns).Delete(context.Background(), "sp", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			// Two reconcile intervals later the finalizer is still there,
			// and no event says why (the exception is thrown before the
			// controller's own handler: only the operator's log has it).
			time.Sleep(settle)
			obj := b.get(t, false, "sp")
			if !hasFinalizer(obj, SnapshotFinalizer) || obj.GetDeletionTimestamp() == nil {
				t.Fatalf("the operator released a snapshot without status")
			}
			evs, err := kube.ObjectEvents(context.Background(), b.dyn, obj)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range evs {
				if e.Reason != "ValidationError" {
					t.Errorf("unexpected event %+v", e)
				}
			}
			// What the provider does about it (kube.ReleaseNeverReconciled).
			if released, err := kube.ReleaseNeverReconciled(context.Background(), b.dyn, obj); err != nil || !released {
				t.Fatalf("ReleaseNeverReconciled: %v, %v", released, err)
			}
		})
	}
}

// A FlinkDeployment the validator refuses before anything was deployed
// (here: the operator's own default configuration enables rollbacks and
// the spec has no HA): lifecycleState FAILED, the ValidationException in
// status.error, no observedGeneration, no lastReconciledSpec, and a
// ValidationError event with the validator's message.
func TestDifferential_rejectedCreate(t *testing.T) {
	for _, o := range operatorsUnderTest(t) {
		t.Run(o.name, func(t *testing.T) {
			b := o.bed(t, map[string]string{"kubernetes.operator.deployment.rollback.enabled": "true"})
			b.createDeployment(t, "orders", modeSavepoint, nil)
			obj := b.until(t, true, "orders", "refused", func(o *unstructured.Unstructured) bool {
				return readDeploymentStatus(o).Error != ""
			})
			st := readDeploymentStatus(obj)
			if st.ObservedGeneration != 0 || st.LastReconciledSpec != "" {
				t.Errorf("observedGeneration %d, lastReconciledSpec %q: want neither", st.ObservedGeneration, st.LastReconciledSpec)
			}
			if lc, _, _ := unstructured.NestedString(obj.Object, "status", "lifecycleState"); lc != "FAILED" {
				t.Errorf("lifecycleState %q, want FAILED", lc)
			}
			// The status's defaults, as the operator serialises them.
			if st.ReconState != reconUpgrading || st.JMStatus != jmMissing {
				t.Errorf("reconciliationStatus.state %q, jobManagerDeploymentStatus %q: want UPGRADING and MISSING", st.ReconState, st.JMStatus)
			}
			if !kube.RejectedBeforeFirstDeployment(obj) || !strings.HasPrefix(kube.OperatorMessage(st.Error), "HA must be enabled for rollback support. (") {
				t.Errorf("status.error %q", st.Error)
			}
			ev := b.eventOn(t, true, "orders", "ValidationError", func(kube.OperatorEvent) bool { return true })
			if ev.Message != "HA must be enabled for rollback support." {
				t.Errorf("event %+v", ev)
			}
		})
	}
}

// A FlinkDeployment the operator deployed, then updated with a spec its
// validator refuses (a key the operator sets itself): the last reconciled
// spec stays in force, observedGeneration stays at the deployed generation,
// the ValidationException is in status.error and a ValidationError event
// says it (ReconciliationUtils.applyValidationErrorAndResetSpec).
func TestDifferential_rejectedUpdate(t *testing.T) {
	for _, o := range operatorsUnderTest(t) {
		t.Run(o.name, func(t *testing.T) {
			b := o.bed(t, nil)
			b.createDeployment(t, "orders", modeSavepoint, nil)
			b.until(t, true, "orders", "deployed", func(o *unstructured.Unstructured) bool {
				// Deployed, not merely recorded (a spec change while the
				// operator is still writing its first deployment's status
				// races with it: StatusConflictException).
				st := readDeploymentStatus(o)
				return st.ReconState == reconDeployed && st.ObservedGeneration == 1
			})
			b.patch(t, true, "orders", `{"spec":{"flinkConfiguration":{"kubernetes.cluster-id":"other"}}}`)
			obj := b.until(t, true, "orders", "refused", func(o *unstructured.Unstructured) bool {
				return strings.Contains(readDeploymentStatus(o).Error, "Forbidden Flink config key")
			})
			st := readDeploymentStatus(obj)
			if obj.GetGeneration() != 2 || st.ObservedGeneration != 1 {
				t.Errorf("generation %d observed %d, want 2 and 1", obj.GetGeneration(), st.ObservedGeneration)
			}
			if !strings.HasPrefix(kube.OperatorMessage(st.Error), "Forbidden Flink config key: kubernetes.cluster-id (") {
				t.Errorf("status.error %q", st.Error)
			}
			ev := b.eventOn(t, true, "orders", "ValidationError", func(kube.OperatorEvent) bool { return true })
			if ev.Message != "Forbidden Flink config key: kubernetes.cluster-id" {
				t.Errorf("event %+v", ev)
			}
		})
	}
}

// Specs the validator refuses for what they leave out or get wrong
// (DefaultValidator.validateJobSpec, validateJmSpec, validateTmSpec): a job
// without parallelism, a JobManager or TaskManager without memory,
// TaskManager replicas of 0. Both refuse before anything is deployed, with
// the validator's message in status.error and a ValidationError event.
func TestDifferential_rejectedIncompleteSpecs(t *testing.T) {
	cases := []struct {
		name, want string
		edit       func(spec map[string]any)
	}{
		{"no-parallelism", "Job parallelism must be larger than 0", func(spec map[string]any) {
			delete(spec["job"].(map[string]any), "parallelism")
		}},
		{"no-jm-memory", "JobManager resource memory must be defined using `spec.jobManager.resource.memory`", func(spec map[string]any) {
			delete(spec, "jobManager")
		}},
		{"no-tm-memory", "TaskManager resource memory must be defined using `spec.taskManager.resource.memory`", func(spec map[string]any) {
			delete(spec, "taskManager")
		}},
		{"tm-replicas-zero", "TaskManager replicas must be larger than 0", func(spec map[string]any) {
			spec["taskManager"].(map[string]any)["replicas"] = int64(0)
		}},
	}
	for _, o := range operatorsUnderTest(t) {
		t.Run(o.name, func(t *testing.T) {
			b := o.bed(t, nil)
			for _, c := range cases {
				b.createDeploymentEdited(t, c.name, modeSavepoint, nil, c.edit)
			}
			for _, c := range cases {
				obj := b.until(t, true, c.name, "refused", func(o *unstructured.Unstructured) bool { return readDeploymentStatus(o).Error != "" })
				if !kube.RejectedBeforeFirstDeployment(obj) || !strings.HasPrefix(kube.OperatorMessage(readDeploymentStatus(obj).Error), c.want+" (") {
					t.Errorf("%s: status %v", c.name, obj.Object["status"])
				}
				if ev := b.eventOn(t, true, c.name, "ValidationError", func(kube.OperatorEvent) bool { return true }); ev.Message != c.want {
					t.Errorf("%s: event %+v", c.name, ev)
				}
			}
		})
	}
}

// The admission webhook the chart registers (StartRealWebhook): a spec the
// operator's validator refuses is refused by the API server itself, before
// anything is stored, with the validator's message; an update it refuses
// leaves the stored object as it was. Without the webhook the same specs
// are stored and refused in status.error (TestDifferential_rejectedCreate,
// TestDifferential_rejectedUpdate). The model has no admission stage.
func TestRealOperator_webhookRefusesAtAdmission(t *testing.T) {
	if _, err := OperatorDir(); err != nil {
		if errors.Is(err, ErrNoOperatorJars) {
			t.Skipf("real operator skipped: %v", err)
		}
		t.Fatal(err)
	}
	b := newBed(t)
	b.op.SetFaults(func(f *Faults) { f.Down = true })
	b.ns = newNamespace(t, b)
	env, root := testbedEnv(t)
	wh, err := StartRealWebhook(context.Background(), root, env, RealOperatorOptions{Namespaces: []string{b.ns}, Logf: t.Logf})
	if errors.Is(err, ErrNoNetns) {
		t.Skipf("the webhook runs in a network namespace of its own: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(wh.Log)
			t.Logf("webhook log (tail):\n%s", tail(string(b), 40))
		}
		wh.Stop()
	})
	forbidden := func(spec map[string]any) {
		spec["flinkConfiguration"].(map[string]any)["kubernetes.cluster-id"] = "other"
	}
	// A create: refused, nothing stored.
	err = createDeploymentErr(b, "refused", forbidden)
	if err == nil || !strings.Contains(err.Error(), `admission webhook "`+ValidatingWebhookName+`" denied the request`) ||
		!strings.Contains(err.Error(), "Forbidden Flink config key: kubernetes.cluster-id") {
		t.Fatalf("create: %v, want the webhook's refusal naming the forbidden key", err)
	}
	if _, err := b.dyn.Resource(kube.FlinkDeploymentGVR).Namespace(b.ns).Get(context.Background(), "refused", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the refused FlinkDeployment was stored (get: %v)", err)
	}
	// An update: refused, the stored spec unchanged.
	if err := createDeploymentErr(b, "orders", nil); err != nil {
		t.Fatalf("a valid create: %v", err)
	}
	_, err = b.dyn.Resource(kube.FlinkDeploymentGVR).Namespace(b.ns).Patch(context.Background(), "orders", types.MergePatchType,
		[]byte(`{"spec":{"flinkConfiguration":{"kubernetes.cluster-id":"other"}}}`), metav1.PatchOptions{})
	if err == nil || !strings.Contains(err.Error(), "Forbidden Flink config key: kubernetes.cluster-id") {
		t.Fatalf("update: %v, want the webhook's refusal", err)
	}
	if obj := b.get(t, true, "orders"); obj.GetGeneration() != 1 {
		t.Errorf("generation %d after a refused update, want 1", obj.GetGeneration())
	}
}

// createDeploymentErr creates the bed's FlinkDeployment name, edited, and
// returns the API server's answer.
func createDeploymentErr(b *bed, name string, edit func(spec map[string]any)) error {
	cp, sp := b.dirs(name)
	spec := map[string]any{
		"image": "flink:2.2.1-java17", "flinkVersion": "v2_2", "serviceAccount": "flink",
		"flinkConfiguration": map[string]any{checkpointDirKey: cp, savepointDirKey: sp},
		"job":                map[string]any{"jarURI": "local:///opt/flink/examples/streaming/StateMachineExample.jar", "upgradeMode": modeSavepoint, "parallelism": int64(1)},
		"jobManager":         map[string]any{"resource": map[string]any{"memory": "2048m", "cpu": int64(1)}},
		"taskManager":        map[string]any{"resource": map[string]any{"memory": "2048m", "cpu": int64(1)}},
	}
	if edit != nil {
		edit(spec)
	}
	_, err := b.dyn.Resource(kube.FlinkDeploymentGVR).Namespace(b.ns).Create(context.Background(), &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkDeployment",
		"metadata": map[string]any{"name": name, "namespace": b.ns}, "spec": spec,
	}}, metav1.CreateOptions{})
	return err
}

// An upgrade of a job whose JobManager never became ready (here: no node
// runs it; the real operator's JobManager stays DEPLOYING on this test bed,
// the model's by its JobManagerNeverReady fault). A savepoint of that job
// is abandoned at once ("… is not running", a SnapshotAbandoned event). The operator says it saw
// the change (a Normal SpecChanged event, once per generation) and then
// waits: it records no error and does not observe the new generation
// (AbstractJobReconciler.reconcileSpecChange: getJobUpgrade finds no
// running job and no checkpoint information, "waiting for upgradeable
// state", a log line only). Once the JobManager's Deployment is gone the
// operator reports it MISSING ("Missing JobManager deployment", a Missing
// event) and the pending upgrade fails for good: UpgradeFailureException
// in status.error and a Warning UpgradeFailed event saying "Manual restore
// required." (ApplicationReconciler.getJobUpgrade), still without
// observing the new generation.
func TestDifferential_upgradeNeverReady(t *testing.T) {
	for _, o := range operatorsUnderTest(t) {
		t.Run(o.name, func(t *testing.T) {
			b := o.bed(t, map[string]string{"kubernetes.operator.reconcile.interval": "5 s"})
			if b.model != nil {
				b.model.SetFaults(func(f *Faults) { f.JobManagerNeverReady = true })
			}
			b.createDeployment(t, "orders", modeSavepoint, nil)
			b.until(t, true, "orders", "deployed", func(o *unstructured.Unstructured) bool {
				st := readDeploymentStatus(o)
				return st.ReconState == reconDeployed && st.ObservedGeneration == 1
			})
			// A savepoint of the job that is not running is abandoned at
			// once (FlinkStateSnapshotUtils.abandonSnapshotIfJobNotRunning):
			// what savepoint_before_upgrade would get.
			b.createSnapshot(t, "sp", "orders", 0, map[string]any{})
			if st := b.snapshotEnds(t, "sp"); st.State != kube.SnapshotAbandoned ||
				st.Error != "Secondary resource orders (FlinkDeployment) for savepoint sp is not running" {
				t.Errorf("snapshot of a job that is not running: %+v", st)
			}
			if ev := b.eventUntil(t, "sp", "SnapshotAbandoned", func(kube.OperatorEvent) bool { return true }); ev.Type != "Warning" ||
				ev.Message != "Secondary resource orders (FlinkDeployment) for savepoint sp is not running" {
				t.Errorf("SnapshotAbandoned event %+v", ev)
			}
			b.patch(t, true, "orders", `{"spec":{"image":"flink:2.2.1-java21"}}`)
			ev := b.eventOn(t, true, "orders", "SpecChanged", func(kube.OperatorEvent) bool { return true })
			if ev.Type != "Normal" || !strings.HasPrefix(ev.Message, "UPGRADE change(s) detected (Diff: FlinkDeploymentSpec[") {
				t.Errorf("SpecChanged event %+v", ev)
			}
			// Two reconcile intervals later: still waiting, nothing said.
			time.Sleep(12 * time.Second)
			obj := b.get(t, true, "orders")
			st := readDeploymentStatus(obj)
			lc, _, _ := unstructured.NestedString(obj.Object, "status", "lifecycleState")
			if obj.GetGeneration() != 2 || st.ObservedGeneration != 1 || st.Error != "" || st.JMStatus != jmDeploying ||
				st.JobState != flinkReconciling || lc != "DEPLOYED" {
				t.Fatalf("waiting for an upgradeable state: generation %d observed %d, error %q, JobManager %s, job %s, lifecycle %s",
					obj.GetGeneration(), st.ObservedGeneration, st.Error, st.JMStatus, st.JobState, lc)
			}
			evs, err := kube.ObjectEvents(context.Background(), b.dyn, obj)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range evs {
				if e.Type == "Warning" || (e.Reason == "SpecChanged" && e.Count != 1) {
					t.Errorf("while waiting: event %+v", e)
				}
			}
			// The JobManager's Deployment goes.
			if b.model != nil {
				b.model.SetFaults(func(f *Faults) { f.JobManagerDeleted = true })
			} else if err := b.dyn.Resource(deploymentsGVR).Namespace(b.ns).
				Delete(context.Background(), "orders", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			if ev := b.eventOn(t, true, "orders", "Missing", func(kube.OperatorEvent) bool { return true }); ev.Type != "Warning" ||
				ev.Message != "Missing JobManager deployment" {
				t.Errorf("Missing event %+v", ev)
			}
			ev = b.eventOn(t, true, "orders", "UpgradeFailed", func(kube.OperatorEvent) bool { return true })
			const upgradeFailureType = "org.apache.flink.kubernetes.operator.exception.UpgradeFailureException"
			const manual = "JobManager deployment is missing and HA metadata is not available to make stateful upgrades. " +
				"It is possible that the job has finished or terminally failed, or the configmaps have been deleted.Manual restore required."
			if ev.Type != "Warning" || ev.Message != manual {
				t.Errorf("UpgradeFailed event %+v", ev)
			}
			obj = b.until(t, true, "orders", "upgrade failed in status", func(o *unstructured.Unstructured) bool {
				return strings.Contains(readDeploymentStatus(o).Error, "UpgradeFailureException")
			})
			st = readDeploymentStatus(obj)
			lc, _, _ = unstructured.NestedString(obj.Object, "status", "lifecycleState")
			if st.ObservedGeneration != 1 || st.JMStatus != jmMissing || kube.OperatorMessage(st.Error) != manual+" ("+upgradeFailureType+")" || lc != "FAILED" {
				t.Errorf("after the upgrade failed: observed %d, JobManager %s, lifecycle %s, error %q", st.ObservedGeneration, st.JMStatus, lc, st.Error)
			}
		})
	}
}

// A first deployment whose JobManager container cannot pull its image
// (the kubelet's ImagePullBackOff; on this test bed a JobManager pod with
// that container status is written by hand for the real operator, the
// model has its ContainerWaiting fault): the operator reports a
// DeploymentFailedException "[flink-main-container] <message>" in
// status.error with the JobManager ERROR and the job RECONCILING, writes a
// Warning event whose reason is the container's, and keeps the first spec
// recorded (firstDeployment). That is what kube.FailedBeforeItRan reads to
// fail such a create and delete the deployment again.
func TestDifferential_createImagePullBackOff(t *testing.T) {
	const pullMsg = `Back-off pulling image "flink:no-such-tag"`
	for _, o := range operatorsUnderTest(t) {
		t.Run(o.name, func(t *testing.T) {
			b := o.bed(t, map[string]string{"kubernetes.operator.reconcile.interval": "5 s"})
			if b.model != nil {
				b.model.SetFaults(func(f *Faults) {
					f.ContainerWaiting = &ContainerState{Reason: "ImagePullBackOff", Message: pullMsg}
				})
			}
			b.createDeployment(t, "orders", modeSavepoint, nil)
			b.until(t, true, "orders", "deployed", func(o *unstructured.Unstructured) bool {
				return readDeploymentStatus(o).ObservedGeneration == 1
			})
			if b.model == nil {
				b.imagePullBackOffPod(t, "orders", pullMsg)
			}
			obj := b.until(t, true, "orders", "failed", func(o *unstructured.Unstructured) bool {
				return strings.Contains(readDeploymentStatus(o).Error, "DeploymentFailedException")
			})
			st := readDeploymentStatus(obj)
			want := "[flink-main-container] " + pullMsg
			if st.JMStatus != jmError || st.JobState != flinkReconciling || !strings.HasPrefix(kube.OperatorMessage(st.Error), want+" (") ||
				st.StartTime != "" || !parseReconciled(st.LastReconciledSpec).Meta.FirstDeployment {
				t.Errorf("status %v", obj.Object["status"])
			}
			if ev := b.eventOn(t, true, "orders", "ImagePullBackOff", func(kube.OperatorEvent) bool { return true }); ev.Type != "Warning" || ev.Message != want {
				t.Errorf("event %+v", ev)
			}
			if !kube.FailedBeforeItRan(context.Background(), b.dyn, obj) {
				t.Errorf("kube.FailedBeforeItRan is false for %v", obj.Object["status"])
			}
		})
	}
}

// imagePullBackOffPod writes the JobManager pod of a FlinkDeployment as a
// kubelet would report it when the image cannot be pulled: the labels the
// operator selects JobManager pods by (Flink's KubernetesUtils
// .getJobManagerSelectors: app, type=flink-native-kubernetes,
// component=jobmanager) and flink-main-container waiting with reason
// ImagePullBackOff.
func (b *bed) imagePullBackOffPod(t *testing.T, name, message string) {
	t.Helper()
	// The API server's ServiceAccount admission needs the pod's account,
	// which no controller-manager made here.
	sa := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ServiceAccount",
		"metadata": map[string]any{"name": "default", "namespace": b.ns}}}
	if _, err := b.dyn.Resource(corev1.SchemeGroupVersion.WithResource("serviceaccounts")).Namespace(b.ns).
		Create(context.Background(), sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	pods := b.dyn.Resource(corev1.SchemeGroupVersion.WithResource("pods")).Namespace(b.ns)
	pod := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name + "-jm", "namespace": b.ns,
			"labels": map[string]any{"app": name, "type": "flink-native-kubernetes", "component": "jobmanager"}},
		"spec": map[string]any{"containers": []any{map[string]any{"name": "flink-main-container", "image": "flink:no-such-tag"}}},
	}}
	created, err := pods.Create(context.Background(), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Object["status"] = map[string]any{"phase": "Pending", "containerStatuses": []any{map[string]any{
		"name": "flink-main-container", "image": "flink:no-such-tag", "imageID": "", "ready": false, "restartCount": int64(0),
		"state": map[string]any{"waiting": map[string]any{"reason": "ImagePullBackOff", "message": message}},
	}}}
	if _, err := pods.UpdateStatus(context.Background(), created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// Row 7 of issue 36, the branch that proceeds from HA metadata: a
// last-state job with Kubernetes HA runs and checkpoints; an upgrade to an
// image that cannot be pulled leaves it not running (JobManager ERROR,
// DeploymentFailedException "[flink-main-container] Back-off pulling image
// …", the job RECONCILING) while its HA metadata stays (a last-state
// upgrade keeps it: the operator deletes the cluster without its HA data).
// What kube.NotRunningRestore, the provider's reading of the operator,
// says then: the fix proceeds from the HA metadata. And the operator does
// so: the change that fixes the image is applied without a savepoint
// (ApplicationReconciler.getJobUpgrade: "Job is not running but HA
// metadata is available for last state restore, ready for upgrade",
// JobUpgrade.lastStateUsingHaMeta), the job keeps its id, and the operator
// records the last-state dummy path as the restore path
// (ApplicationReconciler.deploy: LAST_STATE_DUMMY_SP_PATH when HA
// metadata is required and a checkpoint exists). On the real operator the
// node runs the job as real Flink (the bad image waits in ImagePullBackOff
// on the node) and the restored job's counters continue from the last
// checkpoint; the model's ContainerWaiting fault stands in for the image.
func TestDifferential_fixNotRunningLastState(t *testing.T) {
	modelAndReal(t, fixNotRunningLastState)
}

func fixNotRunningLastState(t *testing.T, b *bed, s *realStack) {
	ctx := context.Background()
	const pullMsg = `Back-off pulling image "flink:no-such-tag"`
	b.createDeploymentEdited(t, "orders", modeLastState, nil, func(spec map[string]any) {
		withKubernetesHA(b, "orders", spec)
	})
	first := b.runningAt(t, "orders")
	b.checkpointed(t, "orders", first.JobID)
	var old *FlinkCluster
	if s != nil {
		old = s.current(t, "orders")
		// Counts past the first checkpoints: the restored job must go on
		// from more than 1.
		if _, _, err := old.WaitCounts(ctx, 4, 2*time.Minute); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Second) // two more checkpoints (2 s interval)
	} else {
		b.op.SetFaults(func(f *Faults) { f.ContainerWaiting = &ContainerState{Reason: "ImagePullBackOff", Message: pullMsg} })
	}

	b.patch(t, true, "orders", `{"spec":{"image":"flink:no-such-tag"}}`)
	obj := b.until(t, true, "orders", "not running: the image cannot be pulled", func(o *unstructured.Unstructured) bool {
		st := readDeploymentStatus(o)
		return st.ObservedGeneration == 2 && st.JMStatus == jmError && strings.Contains(st.Error, "DeploymentFailedException")
	})
	st := readDeploymentStatus(obj)
	if want := "[flink-main-container] " + pullMsg + " ("; st.JobState != flinkReconciling || !strings.HasPrefix(kube.OperatorMessage(st.Error), want) {
		t.Errorf("after the bad image: job %s, error %q, want RECONCILING and %q…", st.JobState, st.Error, want)
	}
	if s != nil && old.Alive() {
		t.Error("the old cluster's processes still run after the upgrade")
	}
	ha, err := kube.HAMetadataAvailable(ctx, b.dyn, b.ns, "orders")
	if err != nil || !ha {
		t.Fatalf("HA metadata after the last-state upgrade: %t %v", ha, err)
	}
	src, err := kube.NotRunningRestore(ctx, b.dyn, obj, "last-state", true)
	if err != nil || !src.Proceeds || !strings.Contains(src.From, "HA metadata") {
		t.Fatalf("kube.NotRunningRestore: %+v %v, want it to proceed from the HA metadata", src, err)
	}

	if s == nil {
		b.op.SetFaults(func(f *Faults) { f.ContainerWaiting = nil })
	}
	b.patch(t, true, "orders", `{"spec":{"image":"flink:2.2.1-java17"}}`)
	fixed := b.runningAt(t, "orders")
	if fixed.ObservedGeneration != 3 || fixed.JobID != first.JobID || fixed.UpgradeSavepointPath != kube.LastStateDummyPath {
		t.Errorf("after the fix: observed %d, job %s (first %s), upgradeSavepointPath %q; want 3, the same job, %q",
			fixed.ObservedGeneration, fixed.JobID, first.JobID, fixed.UpgradeSavepointPath, kube.LastStateDummyPath)
	}
	if s == nil {
		return
	}
	c := s.current(t, "orders")
	if c == old {
		t.Fatal("the node runs the first cluster still")
	}
	if got := c.Configuration["execution.savepoint.path"]; got != kube.LastStateDummyPath {
		t.Errorf("the fixed cluster's execution.savepoint.path %q, want the operator's last-state dummy %q", got, kube.LastStateDummyPath)
	}
	_, before := old.Counts()
	firstNew, _, err := c.WaitCounts(ctx, 1, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	// Restored from the last checkpoint.
	countsContinue(t, "the fixed job", "the first one", before, firstNew)
	t.Logf("the fixed job's first counts %v, the first job's last %v", firstNew, before)
}

// Suspend and resume in savepoint mode (issue 34). Suspending
// (job.state = suspended) stops the job with a savepoint, which the
// operator records in status.jobStatus.upgradeSavepointPath
// (AbstractJobReconciler.reconcileSpecChange → cancelJob with
// SuspendMode.SAVEPOINT), and the lifecycle is SUSPENDED
// (ResourceLifecycleState: a deployed, reconciled spec whose job state is
// suspended). The JobManager stays up, READY, with its job FINISHED: a
// native savepoint suspend does not delete the cluster
// (AbstractFlinkService.cancelJob: SuspendMode.SAVEPOINT.deleteCluster()
// is false; FlinkConfigBuilder sets execution.shutdown-on-application-finish
// false), seen on the real operator with the node, where the issue
// expected its processes to stop. Resuming (job.state = running) deletes
// that cluster ("Deleting cluster with terminated application before new
// deployment": ApplicationReconciler.deploy) and deploys a new job from the
// savepoint (AbstractJobReconciler.resumeJob → restoreJob with the status
// savepoint). On the real operator the node's real Flink shows the job
// stopped while suspended and the resumed job's counters continuing.
func TestDifferential_suspendResume(t *testing.T) {
	modelAndReal(t, suspendResume)
}

func suspendResume(t *testing.T, b *bed, s *realStack) {
	ctx := context.Background()
	b.createDeployment(t, "orders", modeSavepoint, nil)
	first := b.runningAt(t, "orders")
	var old *FlinkCluster
	if s != nil {
		old = s.current(t, "orders")
		if _, _, err := old.WaitCounts(ctx, 2, 2*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	b.patch(t, true, "orders", `{"spec":{"job":{"state":"suspended"}}}`)
	obj := b.until(t, true, "orders", "suspended", func(o *unstructured.Unstructured) bool {
		lc, _, _ := unstructured.NestedString(o.Object, "status", "lifecycleState")
		return readDeploymentStatus(o).ObservedGeneration == 2 && lc == "SUSPENDED"
	})
	st := readDeploymentStatus(obj)
	_, sp := b.dirs("orders")
	t.Logf("suspended: job %s, JobManager %s, upgradeSavepointPath %s, error %q", st.JobState, st.JMStatus, st.UpgradeSavepointPath, st.Error)
	if !strings.HasPrefix(st.UpgradeSavepointPath, sp+"/savepoint-"+first.JobID[:6]+"-") || !b.exists(t, st.UpgradeSavepointPath+"/_metadata") {
		t.Errorf("upgradeSavepointPath %q: want the suspend's savepoint of job %s under %s, with _metadata", st.UpgradeSavepointPath, first.JobID, sp)
	}
	if st.JobState != "FINISHED" || st.JMStatus != jmReady || st.Error != "" {
		t.Errorf("suspended: job state %s, JobManager %s, error %q; want FINISHED, READY and no error", st.JobState, st.JMStatus, st.Error)
	}
	suspendSavepoint := st.UpgradeSavepointPath
	if s != nil {
		// The JobManager runs on; its job does not.
		_, stopped := old.Counts()
		time.Sleep(5 * time.Second)
		if _, later := old.Counts(); !old.Alive() || s.node.Running() != 1 || fmt.Sprint(later) != fmt.Sprint(stopped) {
			t.Errorf("suspended: JobManager alive %t, %d pods running, counts %v then %v; want it up with its job stopped",
				old.Alive(), s.node.Running(), stopped, later)
		}
	}

	b.patch(t, true, "orders", `{"spec":{"job":{"state":"running"}}}`)
	resumed := b.runningAt(t, "orders")
	if resumed.JobID == first.JobID || resumed.UpgradeSavepointPath != suspendSavepoint {
		t.Errorf("resumed: job %s (first %s), upgradeSavepointPath %q; want a new job from %s", resumed.JobID, first.JobID, resumed.UpgradeSavepointPath, suspendSavepoint)
	}
	if s == nil {
		return
	}
	c := s.current(t, "orders")
	if got := c.Configuration["execution.savepoint.path"]; c == old || got != suspendSavepoint {
		t.Fatalf("the resumed cluster restored from %q, want %q", got, suspendSavepoint)
	}
	_, before := old.Counts()
	firstNew, _, err := c.WaitCounts(ctx, 1, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	countsContinue(t, "the resumed job", "the suspended one", before, firstNew)
}

// The nonce redeploy (issue 34), the model's rules
// TestOperator_initialSavepointPathNeedsNonce and
// TestOperator_newNonceWithoutPathIsRejected held to the real operator:
//   - a change of job.initialSavepointPath alone is ignored (JobSpec:
//     @SpecDiff(DiffType.IGNORE)); the generation is observed
//     (ReconciliationUtils.updateReconciliationMetadata) and the job keeps
//     running, its recorded spec unchanged;
//   - a new savepointRedeployNonce (@SpecDiff SAVEPOINT_REDEPLOY) redeploys
//     a new job from initialSavepointPath, recorded as
//     upgradeSavepointPath; on the real operator and node the job's
//     counters continue from that savepoint; the same nonce again does
//     nothing;
//   - a new nonce without a path is refused by the validator
//     (DefaultValidator: "InitialSavepointPath must not be empty for
//     savepoint redeployment"), the job keeps running and the generation
//     is not observed.
func TestDifferential_nonceRedeploy(t *testing.T) {
	modelAndReal(t, nonceRedeploy)
}

func nonceRedeploy(t *testing.T, b *bed, s *realStack) {
	ctx := context.Background()
	b.createDeployment(t, "orders", modeSavepoint, nil)
	first := b.runningAt(t, "orders")
	var old *FlinkCluster
	if s != nil {
		old = s.current(t, "orders")
		if _, _, err := old.WaitCounts(ctx, 2, 2*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	b.createSnapshot(t, "sp", "orders", 1, map[string]any{})
	sp := b.snapshotEnds(t, "sp")
	if sp.State != kube.SnapshotCompleted {
		t.Fatalf("savepoint %+v", sp)
	}
	var taken map[int]int64
	if s != nil {
		_, taken = old.Counts()
	}

	b.patch(t, true, "orders", fmt.Sprintf(`{"spec":{"job":{"initialSavepointPath":%q}}}`, sp.Path))
	obj := b.until(t, true, "orders", "observed the path change", func(o *unstructured.Unstructured) bool {
		return readDeploymentStatus(o).ObservedGeneration == o.GetGeneration()
	})
	st := readDeploymentStatus(obj)
	if st.JobID != first.JobID || st.JobState != flinkRunning || st.UpgradeSavepointPath != "" {
		t.Errorf("initialSavepointPath alone: job %s -> %s (%s), upgradeSavepointPath %q; want it ignored", first.JobID, st.JobID, st.JobState, st.UpgradeSavepointPath)
	}
	if job, _ := LastReconciledSpec(obj)["job"].(map[string]any); job["initialSavepointPath"] != nil {
		t.Errorf("an ignored change was recorded as reconciled: %v", job)
	}

	b.patch(t, true, "orders", `{"spec":{"job":{"savepointRedeployNonce":1}}}`)
	obj = b.until(t, true, "orders", "redeployed", func(o *unstructured.Unstructured) bool {
		st := readDeploymentStatus(o)
		return st.ObservedGeneration == o.GetGeneration() && st.JobState == flinkRunning && st.JobID != first.JobID
	})
	st = readDeploymentStatus(obj)
	if st.UpgradeSavepointPath != sp.Path {
		t.Errorf("a new nonce: upgradeSavepointPath %q, want %s", st.UpgradeSavepointPath, sp.Path)
	}
	if s != nil {
		c := s.current(t, "orders")
		if got := c.Configuration["execution.savepoint.path"]; c == old || got != sp.Path {
			t.Errorf("the redeployed cluster restored from %q, want %q", got, sp.Path)
		}
		firstNew, _, err := c.WaitCounts(ctx, 1, 2*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		for k, n := range firstNew {
			// From the savepoint: on from at most what was printed when it
			// completed, not from 1.
			if n <= 1 || n > taken[k]+1 {
				t.Errorf("key %d: the redeployed job printed %d first, %d when the savepoint completed: want it to continue", k, n, taken[k])
			}
		}
	}
	redeployed := st.JobID

	// The same nonce again (another change the operator ignores): nothing.
	b.patch(t, true, "orders", `{"metadata":{"labels":{"x":"y"}},"spec":{"job":{"savepointRedeployNonce":1}}}`)
	time.Sleep(3 * time.Second)
	if again := b.runningAt(t, "orders"); again.JobID != redeployed {
		t.Errorf("an unchanged nonce redeployed: %s -> %s", redeployed, again.JobID)
	}

	gen := b.get(t, true, "orders").GetGeneration()
	b.patch(t, true, "orders", `{"spec":{"job":{"savepointRedeployNonce":7,"initialSavepointPath":null}}}`)
	obj = b.until(t, true, "orders", "reported the validation error", func(o *unstructured.Unstructured) bool {
		return strings.Contains(readDeploymentStatus(o).Error, "InitialSavepointPath must not be empty for savepoint redeployment")
	})
	st = readDeploymentStatus(obj)
	if st.JobID != redeployed || st.ObservedGeneration != gen || obj.GetGeneration() != gen+1 {
		t.Errorf("a nonce without a path was acted on: job %s -> %s, observed %d, generation %d", redeployed, st.JobID, st.ObservedGeneration, obj.GetGeneration())
	}
}

// A job whose JobManager never started, with no savepoint on record
// (issue 34): a last-state deployment (Kubernetes HA) created with an image
// the node cannot pull. Its first deployment is recorded with upgradeMode
// stateless (AbstractFlinkResourceReconciler
// .updateStatusBeforeFirstDeployment: stateless unless
// initialSavepointPath is set), its JobManager waits in ImagePullBackOff
// (the Deployment's Available condition False since its creation), and it
// never wrote HA metadata. The change that fixes the image is not refused:
// ApplicationReconciler.getJobUpgrade finds no upgrade available (the job
// is RECONCILING, not cancellable, no HA metadata), then, the last
// reconciled upgradeMode not being LAST_STATE and FlinkUtils
// .jmPodNeverStarted true, deletes the JobManager that never started
// (deleteJmThatNeverStarted: the job FAILED) and asks again:
// AbstractJobReconciler.getJobUpgrade's useStatusSavepoint holds (a
// terminal job without HA metadata) and SnapshotUtils.lastSavepointKnown
// is true for no savepoint at all, so JobUpgrade.savepoint(true); restoreJob
// finds no savepoint in the status and deploy starts the new spec from
// empty state (no execution.savepoint.path) with a new job id
// (setJobIdIfNecessary: not a last-state deploy). The "Manual restore
// required." UpgradeFailureException is thrown only when the JobManager is
// MISSING or in ERROR and was not deleted as never started. The job never
// ran, so it had no state to lose.
func TestDifferential_fixNeverStartedNoSavepoint(t *testing.T) {
	modelAndReal(t, fixNeverStartedNoSavepoint)
}

func fixNeverStartedNoSavepoint(t *testing.T, b *bed, s *realStack) {
	ctx := context.Background()
	const pullMsg = `Back-off pulling image "flink:no-such-tag"`
	if s == nil {
		b.op.SetFaults(func(f *Faults) { f.ContainerWaiting = &ContainerState{Reason: "ImagePullBackOff", Message: pullMsg} })
	}
	b.createDeploymentEdited(t, "orders", modeLastState, nil, func(spec map[string]any) {
		spec["image"] = "flink:no-such-tag"
		withKubernetesHA(b, "orders", spec)
	})
	obj := b.until(t, true, "orders", "not running: the image cannot be pulled", func(o *unstructured.Unstructured) bool {
		st := readDeploymentStatus(o)
		return st.ObservedGeneration == 1 && st.JMStatus == jmError && strings.Contains(st.Error, "DeploymentFailedException")
	})
	first := readDeploymentStatus(obj)
	if first.JobState != flinkReconciling || first.StartTime != "" || first.UpgradeSavepointPath != "" ||
		jobField(parseReconciled(first.LastReconciledSpec).Spec, "upgradeMode", "") != modeStateless {
		t.Errorf("the first deployment: job %s, startTime %q, upgradeSavepointPath %q, recorded upgradeMode %q; "+
			"want RECONCILING, never started, no savepoint, stateless", first.JobState, first.StartTime, first.UpgradeSavepointPath,
			jobField(parseReconciled(first.LastReconciledSpec).Spec, "upgradeMode", ""))
	}
	if ha, err := kube.HAMetadataAvailable(ctx, b.dyn, b.ns, "orders"); err != nil || ha {
		t.Fatalf("HA metadata of a job that never started: %t %v", ha, err)
	}
	if s != nil {
		if n := s.node.Running(); n != 0 {
			t.Fatalf("the node runs %d pods' Flink processes with an image it cannot pull", n)
		}
	}
	if !kube.JobManagerNeverStarted(ctx, b.dyn, b.ns, "orders") {
		t.Error("kube.JobManagerNeverStarted is false for the JobManager of an image that cannot be pulled")
	}
	// What the provider reads of it (savepoint_before_upgrade): the fix
	// goes ahead, from empty state.
	src, err := kube.NotRunningRestore(ctx, b.dyn, obj, modeLastState, true)
	if err != nil || !src.Proceeds || src.Path != "" || !strings.HasPrefix(src.From, "empty state: the JobManager never started") {
		t.Errorf("kube.NotRunningRestore: %+v %v, want it to proceed from empty state", src, err)
	}

	if s == nil {
		b.op.SetFaults(func(f *Faults) { f.ContainerWaiting = nil })
	}
	b.patch(t, true, "orders", `{"spec":{"image":"flink:2.2.1-java17"}}`)
	fixed := b.runningAt(t, "orders")
	if fixed.ObservedGeneration != 2 || fixed.JobID == "" || fixed.JobID == first.JobID || fixed.UpgradeSavepointPath != "" || fixed.Error != "" {
		t.Errorf("after the fix: observed %d, job %s (first %s), upgradeSavepointPath %q, error %q; want a new job from empty state",
			fixed.ObservedGeneration, fixed.JobID, first.JobID, fixed.UpgradeSavepointPath, fixed.Error)
	}
	evs, err := kube.ObjectEvents(ctx, b.dyn, b.get(t, true, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Reason == "UpgradeFailed" {
			t.Errorf("the fix was refused: %+v", e)
		}
	}
	if s == nil {
		return
	}
	c := s.current(t, "orders")
	if got, ok := c.Configuration["execution.savepoint.path"]; ok {
		t.Errorf("the fixed cluster restored from %q, want no restore path", got)
	}
	if got := c.Configuration[fixedJobIDKey]; got != fixed.JobID {
		t.Errorf("Flink ran with job id %q, the operator reports %q", got, fixed.JobID)
	}
	counts, _, err := c.WaitCounts(ctx, 1, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for k, n := range counts {
		if n != 1 {
			t.Errorf("key %d: the fixed job printed %d first, want 1 (empty state)", k, n)
		}
	}
}

// countsContinue checks that a job restored from its predecessor's state
// goes on counting: for each key, its first count (after) is
// 2..before[k]+1, where before is the last count the predecessor printed —
// on from (at most) there, not from 1. job and prev name the two jobs.
func countsContinue(t *testing.T, job, prev string, before, after map[int]int64) {
	t.Helper()
	for k, n := range after {
		if n <= 1 || n > before[k]+1 {
			t.Errorf("key %d: %s printed %d first, %s %d last: want it to continue", k, job, n, prev, before[k])
		}
	}
}

// modelAndReal runs a differential test's steps as the subtests "model"
// (on the model operator) and "real" (on the real operator, its pods run
// by the node stand-in; it skips, saying why, without the operator's jars).
func modelAndReal(t *testing.T, steps func(t *testing.T, b *bed, s *realStack)) {
	t.Run("model", func(t *testing.T) { steps(t, newBed(t), nil) })
	t.Run("real", func(t *testing.T) {
		s := newRealStack(t, nil)
		steps(t, s.bed, s)
	})
}

// withKubernetesHA gives the FlinkDeployment spec of name Kubernetes HA, as
// the provider writes it for last-state (the real stack's spec has it
// already).
func withKubernetesHA(b *bed, name string, spec map[string]any) {
	conf := spec["flinkConfiguration"].(map[string]any)
	if _, ok := conf["high-availability.type"]; !ok {
		cp, _ := b.dirs(name)
		conf["high-availability.type"] = "kubernetes"
		conf["high-availability.storageDir"] = strings.TrimSuffix(cp, "/checkpoints") + "/ha"
	}
}
