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
	dynfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// resSuspended is FlinkDeployment ns/orders (uid-1) whose job a suspend
// stopped with the savepoint path ("": it failed, none).
func resSuspended(path string) *unstructured.Unstructured {
	d := resRunning("FINISHED")
	st := d.Object["status"].(map[string]any)
	st["lifecycleState"] = "SUSPENDED"
	if path == "" {
		st["lifecycleState"] = "FAILED"
		st["jobStatus"].(map[string]any)["state"] = "FAILED"
	} else {
		st["jobStatus"].(map[string]any)["upgradeSavepointPath"] = path
	}
	return d
}

func resFinal(carryTo string, s flinkconf.State) FinalSavepoint {
	return FinalSavepoint{Namespace: "ns", Name: "orders", UID: "uid-1", FormatType: "CANONICAL", CarryTo: carryTo, Timeout: time.Minute, State: s,
		Prior: flinkdeploy.Desired{HasJob: true, UpgradeMode: "savepoint", FinalSavepoint: true}}
}

// A suspended job's savepoint is recorded as the final savepoint, in the
// format its backend takes (ForSt: NATIVE), for the replacement that
// starts from it, and the report says so.
func TestFinalSavepointTake_recorded(t *testing.T) {
	defer func(p time.Duration) { savepointPoll = p }(savepointPoll)
	savepointPoll = time.Millisecond
	dyn := resDyn(resSuspended("s3://bkt/sp/savepoint-1"))
	resCompletes(dyn)
	rep, ok, err := resFinal("ns/orders-2", flinkconf.State{Backend: "forst"}).Take(context.Background(), dyn)
	if !ok || err != nil || rep.Warning != "Final savepoint taken" || !strings.Contains(rep.Detail, "The replacement ns/orders-2 starts from it.") {
		t.Fatalf("%+v, %v, %v", rep, ok, err)
	}
	sp, err := dyn.Resource(kube.FlinkStateSnapshotGVR).Namespace("ns").Get(context.Background(), "orders-final-x1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	format, _, _ := unstructured.NestedString(sp.Object, "spec", "savepoint", "formatType")
	if format != "NATIVE" || sp.GetAnnotations()[kube.CarryToAnnotation] != "ns/orders-2" {
		t.Errorf("format %q, annotations %v", format, sp.GetAnnotations())
	}
}

// A job that is not running has no final savepoint: the warning names
// where its checkpoints stay, by path or, unset, by what it is.
func TestFinalSavepointTake_notRunning(t *testing.T) {
	for dir, want := range map[string]string{"s3://bkt/cp": "stay under s3://bkt/cp", "": "stay under the checkpoint directory"} {
		rep, ok, _ := resFinal("", flinkconf.State{CheckpointDir: dir}).Take(context.Background(), resDyn(resSuspended("")))
		if !ok || rep.Warning != "No final savepoint" || !strings.Contains(rep.Detail, want) {
			t.Errorf("dir %q: %+v, %v", dir, rep, ok)
		}
	}
}

// Nothing is stopped, and nothing said, for a deployment that keeps no
// state or an object this resource does not own.
func TestFinalSavepointTake_nothing(t *testing.T) {
	dyn := resDyn(resRunning("RUNNING"))
	stateless := resFinal("", flinkconf.State{})
	stateless.Prior.UpgradeMode = "stateless"
	if _, ok, _ := stateless.Take(context.Background(), dyn); ok || len(dyn.Actions()) != 0 {
		t.Errorf("stateless: %v, %d API calls", ok, len(dyn.Actions()))
	}
	other := resFinal("", flinkconf.State{})
	other.UID = "uid-2"
	if _, ok, _ := other.Take(context.Background(), dyn); ok {
		t.Error("another object of that name: reported")
	}
	for _, a := range dyn.Actions() {
		if a.GetVerb() != "get" {
			t.Errorf("another object of that name: %s", a.GetVerb())
		}
	}
}

// The final savepoint a replacement carries is found for a create that
// restores from nothing else; a failed look stops the create.
func TestFindCarried(t *testing.T) {
	carried := kube.FinalSavepointObject("ns", "old-orders", "CANONICAL", "", "ns/orders")
	carried.SetName("old-orders-final-1")
	carried.Object["status"] = map[string]any{"state": "COMPLETED", "path": "s3://bkt/sp/savepoint-9"}
	dyn := resDyn(carried)
	if p, halt := FindCarried(context.Background(), dyn, "ns", "orders", true); p != "s3://bkt/sp/savepoint-9" || halt != nil {
		t.Errorf("carried: %q, %+v", p, halt)
	}
	if p, halt := FindCarried(context.Background(), dyn, "ns", "payments", true); p != "" || halt != nil {
		t.Errorf("none for it: %q, %+v", p, halt)
	}
	n := len(dyn.Actions())
	if p, halt := FindCarried(context.Background(), dyn, "ns", "orders", false); p != "" || halt != nil || len(dyn.Actions()) != n {
		t.Errorf("restores from its own path: %q, %+v", p, halt)
	}
	dyn.PrependReactor("list", "flinkstatesnapshots", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("forbidden")
	})
	p, halt := FindCarried(context.Background(), dyn, "ns", "orders", true)
	if p != "" || halt == nil || halt.Object != "FlinkDeployment ns/orders" || halt.Verb != "Creating" || !strings.Contains(halt.Detail, "forbidden") {
		t.Errorf("look failed: %q, %+v", p, halt)
	}
}

// A session cluster with a session job on it is not deleted: the refusal
// names the job; one without is.
func TestRefuseSessionDelete(t *testing.T) {
	job := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkSessionJob",
		"metadata": map[string]any{"namespace": "ns", "name": "counts"}, "spec": map[string]any{"deploymentName": "session"}}}
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{kube.FlinkSessionJobGVR: "FlinkSessionJobList"}, job)
	halt := RefuseSessionDelete(context.Background(), dyn, "ns", "session", nil, time.Minute)
	if halt == nil || halt.Object != "FlinkDeployment ns/session" || halt.Verb != "Deleting" || !strings.Contains(halt.Advice, "counts") {
		t.Errorf("with a session job: %+v", halt)
	}
	if halt := RefuseSessionDelete(context.Background(), dyn, "ns", "other", nil, time.Minute); halt != nil {
		t.Errorf("without: %+v", halt)
	}
}

// The final stop's format: the requested one, NATIVE for ForSt.
func TestFinalFormat(t *testing.T) {
	if got := FinalFormat("rocksdb", "CANONICAL"); got != "CANONICAL" {
		t.Errorf("rocksdb: %q", got)
	}
	if got := FinalFormat("forst", "CANONICAL"); got != "NATIVE" {
		t.Errorf("forst: %q", got)
	}
}
