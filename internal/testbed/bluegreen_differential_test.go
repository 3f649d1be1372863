package testbed

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// createBlueGreen writes a FlinkBlueGreenDeployment whose template is the
// spec createDeployment writes for name, with spec.configuration conf.
func (b *bed) createBlueGreen(t *testing.T, name, upgradeMode string, conf map[string]any) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkBlueGreenDeployment",
		"metadata": map[string]any{"name": name, "namespace": b.ns},
		"spec":     map[string]any{"configuration": conf, "template": map[string]any{"spec": b.deploymentSpec(name, upgradeMode, nil)}},
	}}
	if _, err := b.dyn.Resource(kube.FlinkBlueGreenDeploymentGVR).Namespace(b.ns).Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// blueGreenUntil polls the FlinkBlueGreenDeployment until cond holds.
func (b *bed) blueGreenUntil(t *testing.T, name, what string, cond func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
	t.Helper()
	var last *unstructured.Unstructured
	for deadline := time.Now().Add(b.wait); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		obj, err := b.dyn.Resource(kube.FlinkBlueGreenDeploymentGVR).Namespace(b.ns).Get(context.Background(), name, metav1.GetOptions{})
		if err == nil {
			last = obj
			if cond(obj) {
				return obj
			}
		}
	}
	t.Fatalf("%s never %s; last status: %v", name, what, last.Object["status"])
	return nil
}

func bgState(obj *unstructured.Unstructured) (state, job, msg string) {
	state, _, _ = unstructured.NestedString(obj.Object, "status", "blueGreenState")
	job, _, _ = unstructured.NestedString(obj.Object, "status", "jobStatus", "state")
	msg, _, _ = unstructured.NestedString(obj.Object, "status", "error")
	return state, job, msg
}

func (b *bed) activeBlueGreen(t *testing.T, name, state string) *unstructured.Unstructured {
	t.Helper()
	return b.blueGreenUntil(t, name, state+" with its job RUNNING", func(o *unstructured.Unstructured) bool {
		s, j, _ := bgState(o)
		return s == state && j == "RUNNING"
	})
}

// patchTemplate merge-patches the blue/green deployment's template spec.
func (b *bed) patchTemplate(t *testing.T, name string, spec map[string]any) {
	t.Helper()
	patch := map[string]any{"spec": map[string]any{"template": map[string]any{"spec": spec}}}
	body, _ := json.Marshal(patch)
	if _, err := b.dyn.Resource(kube.FlinkBlueGreenDeploymentGVR).Namespace(b.ns).Patch(context.Background(), name, ktypes.MergePatchType, body,
		metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (b *bed) childGone(t *testing.T, name string) bool {
	t.Helper()
	_, err := b.dyn.Resource(kube.FlinkDeploymentGVR).Namespace(b.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return apierrors.IsNotFound(err)
}

// TestDifferential_blueGreenTransition (issue 46): a FlinkBlueGreenDeployment
// on the model and on the real operator 1.15.0 (its pods real Flink):
// created, it runs as <name>-blue, labelled and owned by it, ACTIVE_BLUE;
// a change of the template that is no IGNORE field (a flinkConfiguration
// key) is a TRANSITION: a savepoint of blue's running job under its
// savepoint dir, <name>-green written with job.initialSavepointPath that
// savepoint, blue deleted once green is STABLE and RUNNING, ACTIVE_GREEN
// (BlueGreenDeploymentService.checkAndInitiateDeployment, startTransition,
// shouldWeDelete, finalizeBlueGreenDeployment). With real Flink, green's
// counts go on from blue's: no key starts again at 1.
func TestDifferential_blueGreenTransition(t *testing.T) {
	modelAndReal(t, blueGreenTransition)
}

func blueGreenTransition(t *testing.T, b *bed, s *realStack) {
	b.createBlueGreen(t, "orders", modeSavepoint, nil)
	b.activeBlueGreen(t, "orders", "ACTIVE_BLUE")
	blue := b.get(t, true, "orders-blue")
	if blue.GetLabels()["flink/blue-green-deployment-type"] != "BLUE" {
		t.Errorf("orders-blue labels %v: want flink/blue-green-deployment-type BLUE", blue.GetLabels())
	}
	if refs := blue.GetOwnerReferences(); len(refs) != 1 || refs[0].Kind != "FlinkBlueGreenDeployment" || refs[0].Name != "orders" {
		t.Errorf("orders-blue owner references %+v: want the FlinkBlueGreenDeployment orders", refs)
	}
	blueJob := readDeploymentStatus(blue).JobID
	if s != nil {
		if _, _, err := s.current(t, "orders-blue").WaitCounts(context.Background(), 2, 2*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	b.patchTemplate(t, "orders", map[string]any{"flinkConfiguration": map[string]any{"pipeline.object-reuse": "true"}})
	b.activeBlueGreen(t, "orders", "ACTIVE_GREEN")
	t.Logf("transition to green: %s", time.Since(start).Round(time.Second))
	green := b.get(t, true, "orders-green")
	path, _, _ := unstructured.NestedString(green.Object, "spec", "job", "initialSavepointPath")
	_, sp := b.dirs("orders")
	if !strings.HasPrefix(path, sp+"/savepoint-"+blueJob[:6]+"-") || !b.exists(t, path+"/_metadata") {
		t.Errorf("orders-green initialSavepointPath %q: want a savepoint of blue's job %s under %s, with _metadata", path, blueJob, sp)
	}
	if !b.childGone(t, "orders-blue") {
		t.Errorf("orders-blue still there at ACTIVE_GREEN")
	}
	if s == nil {
		return
	}
	first, _, err := s.current(t, "orders-green").WaitCounts(context.Background(), 1, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	// Blue ran on after the savepoint until it was deleted: green counts
	// again what blue counted after it (the overlap), and loses nothing.
	blueCluster := s.current(t, "orders-blue")
	_, blueLast := blueCluster.Counts()
	for k, n := range first {
		if n <= 1 || n > blueLast[k]+1 {
			t.Errorf("green's key %d started at %d: want more than 1 and at most blue's last %d + 1 (%v, blue's last %v)", k, n, blueLast[k], first, blueLast)
		}
	}
	t.Logf("green's first counts %v, blue's last %v: the overlap", first, blueLast)
}

// TestDifferential_blueGreenAbort (issue 46): a transition whose green
// child never becomes ready (its JobManager's image cannot be pulled on
// the real operator; the model's ContainerWaiting fault) is aborted once
// kubernetes.operator.bluegreen.abort.grace-period has passed: green is
// suspended, the state rolls back to ACTIVE_BLUE with jobStatus FAILING
// and "Aborting deployment 'orders-green', rolling B/G deployment back to
// ACTIVE_BLUE" in status.error, and blue keeps running (shouldWeAbort,
// abortDeployment).
func TestDifferential_blueGreenAbort(t *testing.T) {
	modelAndReal(t, blueGreenAbort)
}

func blueGreenAbort(t *testing.T, b *bed, s *realStack) {
	// The grace period counts for the first deployment too: on the real
	// operator a 20 s one aborted blue itself, whose real Flink took
	// longer to run (INITIALIZING_BLUE, "Aborting deployment
	// 'orders-blue', rolling B/G deployment back to INITIALIZING_BLUE").
	grace := "20s"
	if s != nil {
		grace = "90s"
	}
	b.createBlueGreen(t, "orders", modeSavepoint, map[string]any{"kubernetes.operator.bluegreen.abort.grace-period": grace,
		"kubernetes.operator.bluegreen.reconciliation.reschedule-interval": "2s"})
	b.activeBlueGreen(t, "orders", "ACTIVE_BLUE")
	blueJob := readDeploymentStatus(b.get(t, true, "orders-blue")).JobID
	var image string
	if s == nil {
		// The model's stand-in for an image that cannot be pulled.
		b.op.SetFaults(func(f *Faults) {
			f.ContainerWaiting = &ContainerState{Reason: "ImagePullBackOff", Message: "Back-off pulling image"}
		})
		image = "flink:2.2.1-java17-missing"
	} else {
		image = "registry.invalid/flink:missing"
	}
	b.patchTemplate(t, "orders", map[string]any{"image": image})
	obj := b.blueGreenUntil(t, "orders", "aborted", func(o *unstructured.Unstructured) bool {
		_, j, _ := bgState(o)
		return j == "FAILING"
	})
	state, _, msg := bgState(obj)
	want := "Aborting deployment 'orders-green', rolling B/G deployment back to ACTIVE_BLUE"
	if state != "ACTIVE_BLUE" || msg != want {
		t.Errorf("after the abort: %s, %q; want ACTIVE_BLUE, %q", state, msg, want)
	}
	green := b.get(t, true, "orders-green")
	if st, _, _ := unstructured.NestedString(green.Object, "spec", "job", "state"); st != "suspended" {
		t.Errorf("orders-green job.state %q after the abort: want suspended", st)
	}
	if s == nil {
		b.op.SetFaults(func(f *Faults) { f.ContainerWaiting = nil })
	}
	blue := readDeploymentStatus(b.get(t, true, "orders-blue"))
	if blue.JobState != "RUNNING" || blue.JobID != blueJob {
		t.Errorf("orders-blue after the abort: job %s %s; want %s RUNNING", blue.JobID, blue.JobState, blueJob)
	}
}

// TestDifferential_blueGreenSuspendResume (issue 46): job.state suspended
// on an ACTIVE_BLUE deployment suspends blue in place (no green, no
// transition savepoint): the operator patches blue (TRANSITIONING_TO_BLUE)
// and, once blue's lifecycle is SUSPENDED, is ACTIVE_BLUE with jobStatus
// SUSPENDED (checkAndInitiateDeployment SUSPEND → patchFlinkDeployment;
// monitorTransition → finalizeSuspendedDeployment). job.state running again
// resumes blue in place: ACTIVE_BLUE with jobStatus RUNNING (RESUME,
// handled before the current child's readiness is checked).
func TestDifferential_blueGreenSuspendResume(t *testing.T) {
	modelAndReal(t, blueGreenSuspendResume)
}

func blueGreenSuspendResume(t *testing.T, b *bed, s *realStack) {
	b.createBlueGreen(t, "orders", modeSavepoint, map[string]any{"kubernetes.operator.bluegreen.reconciliation.reschedule-interval": "2s"})
	b.activeBlueGreen(t, "orders", "ACTIVE_BLUE")
	b.patchTemplate(t, "orders", map[string]any{"job": map[string]any{"state": "suspended"}})
	obj := b.blueGreenUntil(t, "orders", "ACTIVE_BLUE with its job SUSPENDED", func(o *unstructured.Unstructured) bool {
		st, j, _ := bgState(o)
		return st == "ACTIVE_BLUE" && j == "SUSPENDED"
	})
	if _, _, msg := bgState(obj); msg != "" {
		t.Errorf("status.error %q after the suspend: want none", msg)
	}
	blue := b.get(t, true, "orders-blue")
	if lc, _, _ := unstructured.NestedString(blue.Object, "status", "lifecycleState"); lc != "SUSPENDED" {
		t.Errorf("orders-blue lifecycleState %q after the suspend: want SUSPENDED", lc)
	}
	if !b.childGone(t, "orders-green") {
		t.Errorf("orders-green exists after an in-place suspend")
	}
	b.patchTemplate(t, "orders", map[string]any{"job": map[string]any{"state": "running"}})
	b.activeBlueGreen(t, "orders", "ACTIVE_BLUE")
	if st := readDeploymentStatus(b.get(t, true, "orders-blue")); st.JobState != "RUNNING" {
		t.Errorf("orders-blue job %s after the resume: want RUNNING", st.JobState)
	}
	if !b.childGone(t, "orders-green") {
		t.Errorf("orders-green exists after an in-place resume")
	}
}

// TestDifferential_blueGreenCreateSuspended: a FlinkBlueGreenDeployment
// whose template asks for job.state suspended is not deployed: it stays
// INITIALIZING_BLUE with jobStatus SUSPENDED and no child
// (InitializingBlueStateHandler.handle: "Blocking initial deployment …
// waiting for RUNNING", patchStatusUpdateControl(context, null,
// JobStatus.SUSPENDED, null)). The provider refuses such a create at plan;
// the model keeps the operator's answer for anything that writes one.
func TestDifferential_blueGreenCreateSuspended(t *testing.T) {
	modelAndReal(t, blueGreenCreateSuspended)
}

func blueGreenCreateSuspended(t *testing.T, b *bed, _ *realStack) {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkBlueGreenDeployment",
		"metadata": map[string]any{"name": "orders", "namespace": b.ns},
		"spec": map[string]any{"configuration": map[string]any{"kubernetes.operator.bluegreen.reconciliation.reschedule-interval": "2s"},
			"template": map[string]any{"spec": b.deploymentSpec("orders", modeSavepoint, map[string]any{"state": "suspended"})}},
	}}
	if _, err := b.dyn.Resource(kube.FlinkBlueGreenDeploymentGVR).Namespace(b.ns).Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got := b.blueGreenUntil(t, "orders", "with its job SUSPENDED", func(o *unstructured.Unstructured) bool {
		_, j, _ := bgState(o)
		return j == "SUSPENDED"
	})
	if st, _, msg := bgState(got); st != "INITIALIZING_BLUE" || msg != "" {
		t.Errorf("a create asked suspended: state %s, error %q; want INITIALIZING_BLUE and none", st, msg)
	}
	// A few reconciliations later, still no child.
	time.Sleep(5 * time.Second)
	if !b.childGone(t, "orders-blue") {
		t.Errorf("orders-blue exists: a create asked suspended was deployed")
	}
}
