package deployop

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	dynfake "k8s.io/client-go/dynamic/fake"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// fakeEnv is an Env on a fake Kubernetes API holding objs.
func fakeEnv(objs ...runtime.Object) (Env, dynamic.Interface) {
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		kube.FlinkDeploymentGVR:                 "FlinkDeploymentList",
		kube.FlinkStateSnapshotGVR:              "FlinkStateSnapshotList",
		{Version: "v1", Resource: "events"}:     "EventList",
		{Version: "v1", Resource: "configmaps"}: "ConfigMapList",
	}, objs...)
	return Env{Kube: func() (dynamic.Interface, error) { return dyn, nil }}, dyn
}

// deployment is a FlinkDeployment ns/name with the given status.
func deployment(name string, status map[string]any) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkDeployment",
		"metadata": map[string]any{"namespace": "ns", "name": name}, "spec": map[string]any{"image": "flink:2.2.1"}}}
	if status != nil {
		obj.Object["status"] = status
	}
	return obj
}

// A create is a POST: it makes the object, and one of that name that
// exists already is never written over (Exists, no object, no report).
func TestWriteCreateNeverAdopts(t *testing.T) {
	existing := deployment("taken", nil)
	existing.Object["spec"] = map[string]any{"image": "theirs"}
	env, dyn := fakeEnv(existing)
	ctx := context.Background()

	var m Marks
	obj := deployment("new", nil)
	obj.SetUID("u-1") // the fake API server keeps what it is given
	done := Write{Object: obj, Create: true, Target: NoWait}.Do(ctx, env, &m)
	if done.Live == nil || done.Exists || len(done.Reports) != 0 || done.At.IsZero() {
		t.Fatalf("create of a new name: %+v", done)
	}
	if m.UID != "u-1" || m.WaitPending != "" {
		t.Errorf("marks after a create without a wait: %+v", m)
	}
	if _, err := dyn.Resource(kube.FlinkDeploymentGVR).Namespace("ns").Get(ctx, "new", metav1.GetOptions{}); err != nil {
		t.Fatalf("the created object is not there: %v", err)
	}

	m = Marks{UID: "mine"}
	done = Write{Object: deployment("taken", nil), Create: true, Target: "deployed"}.Do(ctx, env, &m)
	if !done.Exists || done.Live != nil || len(done.Reports) != 0 {
		t.Fatalf("create over an existing object: %+v", done)
	}
	if m != (Marks{UID: "mine"}) {
		t.Errorf("a create that wrote nothing marked %+v", m)
	}
	got, err := dyn.Resource(kube.FlinkDeploymentGVR).Namespace("ns").Get(ctx, "taken", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if img, _, _ := unstructured.NestedString(got.Object, "spec", "image"); img != "theirs" {
		t.Errorf("the existing object was written over: image %q", img)
	}
}

// Without a Kubernetes client nothing is written, and the report says so
// as the provider's client set-up does.
func TestWriteWithoutClient(t *testing.T) {
	env := Env{Kube: func() (dynamic.Interface, error) { return nil, errors.New("no kubeconfig") }}
	done := Write{Object: deployment("x", nil), Create: true}.Do(context.Background(), env, &Marks{})
	if done.Live != nil || len(done.Reports) != 1 {
		t.Fatalf("%+v", done)
	}
	if r := done.Reports[0]; r.Object != "the Kubernetes client" || r.Verb != "Setting up" || r.Detail != "no kubeconfig" {
		t.Errorf("report %+v", r)
	}
}

// A wait that reaches its target is done: the status it read goes to the
// resource first (Ends.Waited), and no reason is read.
func TestWaitDone(t *testing.T) {
	env, _ := fakeEnv()
	ctx := context.Background()
	w := Write{Object: deployment("ok", map[string]any{"lifecycleState": "DEPLOYED", "jobStatus": map[string]any{"jobId": "j1"}}),
		Create: true, Target: "deployed", Timeout: 5 * time.Second, Every: 10 * time.Millisecond}
	var m Marks
	done := w.Do(ctx, env, &m)
	if m.WaitPending == "" {
		t.Fatalf("no wait-pending mark before the wait: %+v", m)
	}
	var saved []kube.DeploymentStatus
	end := w.Wait(ctx, env, done, &m, Ends{Waited: func(st kube.DeploymentStatus) { saved = append(saved, st) },
		Reason: func(kube.WaitOutcome, error) string { t.Error("a reason was read for a wait that is done"); return "" }})
	if !end.Done || end.Removed || end.Status.JobID != "j1" || end.Report != (kube.Report{}) {
		t.Fatalf("%+v", end)
	}
	if m.WaitPending != "" {
		t.Errorf("marks after a wait that is done: %+v", m)
	}
	if len(saved) != 1 || saved[0].LifecycleState != "DEPLOYED" {
		t.Errorf("Waited got %+v, want the DEPLOYED status once", saved)
	}
}

// A create the operator never deployed anything of is deleted again (its
// report says so, the resource drops it: Removed, no pending mark), after
// Flink's reason was read, while the object still existed.
func TestWaitDeletesACreateThatNeverRan(t *testing.T) {
	env, dyn := fakeEnv()
	ctx := context.Background()
	w := Write{Object: deployment("bad", map[string]any{"lifecycleState": "FAILED", "error": "the image is wrong"}),
		Create: true, Target: "deployed", Timeout: 5 * time.Second, Every: 10 * time.Millisecond}
	var m Marks
	done := w.Do(ctx, env, &m)
	if done.Live == nil {
		t.Fatalf("%+v", done)
	}
	existedAtReason := false
	end := w.Wait(ctx, env, done, &m, Ends{Waited: func(kube.DeploymentStatus) {},
		Reason: func(o kube.WaitOutcome, err error) string {
			_, gerr := dyn.Resource(kube.FlinkDeploymentGVR).Namespace("ns").Get(ctx, "bad", metav1.GetOptions{})
			existedAtReason = gerr == nil
			return " (flink says why)"
		}})
	if end.Done || !end.Removed || m.WaitPending != "" {
		t.Fatalf("%+v, marks %+v", end, m)
	}
	if !existedAtReason {
		t.Error("the reason was read after the object was deleted")
	}
	if _, err := dyn.Resource(kube.FlinkDeploymentGVR).Namespace("ns").Get(ctx, "bad", metav1.GetOptions{}); err == nil {
		t.Error("the object of the failed create is still there")
	}
	if r := end.Report; r.Verb != "Creating" || !strings.Contains(r.Detail, "the image is wrong") ||
		!strings.Contains(r.Detail, "(flink says why)") || !strings.Contains(r.Detail, "it was deleted again") {
		t.Errorf("report %+v", r)
	}
}

// An update whose wait fails keeps its object (nothing deleted) and the
// pending mark names why; the report is the update's.
func TestWaitFailedUpdateKeepsTheObject(t *testing.T) {
	obj := deployment("run", map[string]any{"lifecycleState": "FAILED", "error": "job failed"})
	env, dyn := fakeEnv(obj)
	ctx := context.Background()
	w := Write{Object: deployment("run", nil), Target: "deployed", Timeout: 5 * time.Second, Every: 10 * time.Millisecond}
	m := Marks{WaitPending: "the apply did not finish waiting", Restoring: true}
	end := w.Wait(ctx, env, Written{Live: obj, At: time.Now()}, &m, Ends{Waited: func(kube.DeploymentStatus) {},
		Reason: func(kube.WaitOutcome, error) string { return "" }})
	if end.Done || end.Removed || !strings.Contains(m.WaitPending, "job failed") || !m.Restoring {
		t.Fatalf("%+v, marks %+v", end, m)
	}
	if end.Report.Verb != "Waiting for" || !strings.HasPrefix(end.Report.Detail, "FlinkDeployment not ready: ") {
		t.Errorf("report %+v", end.Report)
	}
	if _, err := dyn.Resource(kube.FlinkDeploymentGVR).Namespace("ns").Get(ctx, "run", metav1.GetOptions{}); err != nil {
		t.Errorf("the updated object is gone: %v", err)
	}
}

// wait_for = "checkpoint": a target reached without a checkpoint after it
// is not done; the mark says so, and the report is the checkpoint wait's
// (none here).
func TestWaitCheckpointNotDone(t *testing.T) {
	env, _ := fakeEnv()
	ctx := context.Background()
	w := Write{Object: deployment("cp", map[string]any{"jobStatus": map[string]any{"state": "RUNNING", "jobId": "j2"}}),
		Target: "running", Timeout: 5 * time.Second, Every: 10 * time.Millisecond, Create: true}
	var m Marks
	done := w.Do(ctx, env, &m)
	asked := ""
	end := w.Wait(ctx, env, done, &m, Ends{Waited: func(kube.DeploymentStatus) {}, Reason: func(kube.WaitOutcome, error) string { return "" },
		Checkpoint: func(jobID string) bool { asked = jobID; return false }})
	if end.Done || end.Removed || end.Report != (kube.Report{}) || asked != "j2" {
		t.Fatalf("%+v, checkpoint asked for %q", end, asked)
	}
	if m.WaitPending != "no checkpoint completed since the change" {
		t.Errorf("marks %+v", m)
	}
}

// The upgrade savepoint's annotation is written with the spec, and only
// when there is one.
func TestAnnotate(t *testing.T) {
	obj := deployment("x", nil)
	Annotate(obj, "")
	if obj.GetAnnotations() != nil {
		t.Errorf("annotations without a savepoint: %v", obj.GetAnnotations())
	}
	Annotate(obj, "s3://b/sp-1")
	if got := obj.GetAnnotations()[kube.UpgradeSavepointAnnotation]; got != "s3://b/sp-1" {
		t.Errorf("annotation %q", got)
	}
}
