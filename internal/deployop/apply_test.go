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

	done := Write{Object: deployment("new", nil), Create: true}.Do(ctx, env)
	if done.Live == nil || done.Exists || len(done.Reports) != 0 || done.At.IsZero() {
		t.Fatalf("create of a new name: %+v", done)
	}
	if _, err := dyn.Resource(kube.FlinkDeploymentGVR).Namespace("ns").Get(ctx, "new", metav1.GetOptions{}); err != nil {
		t.Fatalf("the created object is not there: %v", err)
	}

	done = Write{Object: deployment("taken", nil), Create: true}.Do(ctx, env)
	if !done.Exists || done.Live != nil || len(done.Reports) != 0 {
		t.Fatalf("create over an existing object: %+v", done)
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
	done := Write{Object: deployment("x", nil), Create: true}.Do(context.Background(), env)
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
	done := w.Do(ctx, env)
	var saved []kube.DeploymentStatus
	end := w.Wait(ctx, env, done, Ends{Waited: func(st kube.DeploymentStatus) { saved = append(saved, st) },
		Reason: func(kube.WaitOutcome, error) string { t.Error("a reason was read for a wait that is done"); return "" }})
	if !end.Done || end.Pending != "" || end.Removed || end.Status.JobID != "j1" {
		t.Fatalf("%+v", end)
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
	done := w.Do(ctx, env)
	if done.Live == nil {
		t.Fatalf("%+v", done)
	}
	existedAtReason := false
	end := w.Wait(ctx, env, done, Ends{Waited: func(kube.DeploymentStatus) {},
		Reason: func(o kube.WaitOutcome, err error) string {
			_, gerr := dyn.Resource(kube.FlinkDeploymentGVR).Namespace("ns").Get(ctx, "bad", metav1.GetOptions{})
			existedAtReason = gerr == nil
			return " (flink says why)"
		}})
	if end.Done || !end.Removed || end.Pending != "" {
		t.Fatalf("%+v", end)
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
	end := w.Wait(ctx, env, Written{Live: obj, At: time.Now()}, Ends{Waited: func(kube.DeploymentStatus) {},
		Reason: func(kube.WaitOutcome, error) string { return "" }})
	if end.Done || end.Removed || !strings.Contains(end.Pending, "job failed") {
		t.Fatalf("%+v", end)
	}
	if end.Report.Verb != "Waiting for" || !strings.HasPrefix(end.Report.Detail, "FlinkDeployment not ready: ") {
		t.Errorf("report %+v", end.Report)
	}
	if _, err := dyn.Resource(kube.FlinkDeploymentGVR).Namespace("ns").Get(ctx, "run", metav1.GetOptions{}); err != nil {
		t.Errorf("the updated object is gone: %v", err)
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
