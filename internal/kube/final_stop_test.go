package kube

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
)

// finalStopClient serves the FlinkDeployment orders (objs) with lists of
// events and FlinkStateSnapshots.
func finalStopClient(objs ...runtime.Object) *dynfake.FakeDynamicClient {
	return dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		FlinkDeploymentGVR: "FlinkDeploymentList", EventGVR: "EventList", ConfigMapGVR: "ConfigMapList",
		FlinkStateSnapshotGVR: "FlinkStateSnapshotList",
	}, objs...)
}

// snapshotsEndAs makes each FlinkStateSnapshot created on dyn named as the
// API server names it (generateName + "x1") and ended as the operator ends
// it: in state, with the savepoint path it records (a COMPLETED one
// without a path when withPath is false).
func snapshotsEndAs(dyn *dynfake.FakeDynamicClient, state string, withPath bool) {
	dyn.PrependReactor("create", "flinkstatesnapshots", func(a k8stesting.Action) (bool, runtime.Object, error) {
		obj := a.(k8stesting.CreateAction).GetObject().(*unstructured.Unstructured).DeepCopy()
		obj.SetName(obj.GetGenerateName() + "x1")
		p, _, _ := unstructured.NestedString(obj.Object, "spec", "savepoint", "path")
		st := map[string]any{"state": state, "failures": int64(0)}
		if state == SnapshotFailed {
			st["error"] = "Savepoint Error"
		} else if withPath {
			st["path"] = p
		}
		obj.Object["status"] = st
		return true, obj, dyn.Tracker().Create(FlinkStateSnapshotGVR, obj, a.GetNamespace())
	})
}

func finalStopRequest() FinalStopRequest {
	return FinalStopRequest{Namespace: "ns", Name: "orders", UID: "uid-1", Format: "CANONICAL", NotRunningFor: time.Minute,
		Timeout: 100 * time.Millisecond, Every: time.Millisecond}
}

// patched tells whether anything was patched on dyn.
func patched(dyn *dynfake.FakeDynamicClient) bool {
	for _, a := range dyn.Actions() {
		if a.GetVerb() == "patch" {
			return true
		}
	}
	return false
}

func finalSnapshot(t *testing.T, dyn *dynfake.FakeDynamicClient) *unstructured.Unstructured {
	t.Helper()
	obj, err := dyn.Resource(FlinkStateSnapshotGVR).Namespace("ns").Get(context.Background(), "orders-final-x1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

func failedAnnotation(t *testing.T, dyn *dynfake.FakeDynamicClient) string {
	t.Helper()
	obj, err := dyn.Resource(FlinkDeploymentGVR).Namespace("ns").Get(context.Background(), "orders", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return obj.GetAnnotations()[FinalSavepointFailedAnnotation]
}

// A running job is stopped with a savepoint (drained as asked), which a
// FlinkStateSnapshot records for the replacement.
func TestFinalStop_takenFromARunningJob(t *testing.T) {
	dyn := finalStopClient(runningSavepointJob("STABLE", "RUNNING", "", ""))
	stopsWhenAsked(dyn, "s3://b/sp/savepoint-1")
	snapshotsEndAs(dyn, SnapshotCompleted, true)
	q := finalStopRequest()
	q.Drain, q.CarryTo = true, "ns/orders2"
	res := FinalStop(context.Background(), dyn, q)
	if res.Kind != FinalStopTaken || res.Path != "s3://b/sp/savepoint-1" || res.Snapshot != "orders-final-x1" || !res.Drained || res.Err != nil {
		t.Fatalf("%+v", res)
	}
	sp := finalSnapshot(t, dyn)
	if sp.GetAnnotations()[CarryToAnnotation] != "ns/orders2" || sp.GetLabels()[FinalSavepointLabel] != "orders" {
		t.Fatalf("metadata %v", sp.Object["metadata"])
	}
	if s, m, d := specJob(t, dyn.Resource(FlinkDeploymentGVR).Namespace("ns")); s != "suspended" || m != "savepoint" || d != "true" {
		t.Fatalf("spec job.state %q upgradeMode %q drain %q", s, m, d)
	}
}

// A job a suspend stopped with a savepoint is not stopped again: that
// savepoint is recorded, undrained.
func TestFinalStop_takenFromASuspendsSavepoint(t *testing.T) {
	dyn := finalStopClient(runningSavepointJob("SUSPENDED", "FINISHED", "s3://b/sp/savepoint-0", ""))
	snapshotsEndAs(dyn, SnapshotCompleted, true)
	q := finalStopRequest()
	q.Drain = true
	res := FinalStop(context.Background(), dyn, q)
	if res.Kind != FinalStopTaken || res.Path != "s3://b/sp/savepoint-0" || res.Drained || patched(dyn) {
		t.Fatalf("%+v (patched: %v)", res, patched(dyn))
	}
	if exists, _, _ := unstructured.NestedBool(finalSnapshot(t, dyn).Object, "spec", "savepoint", "alreadyExists"); !exists {
		t.Fatal("the suspend's savepoint is not recorded as already existing")
	}
}

// No FlinkDeployment, or another object of its name: nothing to stop, and
// nothing is written.
func TestFinalStop_goneWhenAbsentOrNotOurs(t *testing.T) {
	other := runningSavepointJob("STABLE", "RUNNING", "", "")
	other.SetUID("uid-2")
	for name, dyn := range map[string]*dynfake.FakeDynamicClient{"absent": finalStopClient(), "not ours": finalStopClient(other)} {
		res := FinalStop(context.Background(), dyn, finalStopRequest())
		if res.Kind != FinalStopGone || patched(dyn) {
			t.Errorf("%s: %+v (patched: %v)", name, res, patched(dyn))
		}
	}
}

// A failed read before the stop refuses it with the API server's answer.
func TestFinalStop_unreadable(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "flink.apache.org", Resource: "flinkdeployments"}, "orders", errors.New("no"))
	dyn := fakeDynamic(runningSavepointJob("STABLE", "RUNNING", "", ""), 1, forbidden)
	res := FinalStop(context.Background(), dyn, finalStopRequest())
	if res.Kind != FinalStopUnreadable || !apierrors.IsForbidden(res.Err) || patched(dyn) {
		t.Fatalf("%+v", res)
	}
}

// A job not running whose lifecycle holds no savepoint of a suspend (a
// failed job, or a last-state suspend's HA dummy) gives none: nothing is
// asked of the operator.
func TestFinalStop_notRunning(t *testing.T) {
	for name, dep := range map[string]*unstructured.Unstructured{
		"reconciling":        runningSavepointJob("STABLE", "RECONCILING", "", ""),
		"failed":             runningSavepointJob("STABLE", "FAILED", "s3://b/sp/savepoint-0", ""),
		"last-state suspend": runningSavepointJob("SUSPENDED", "FINISHED", LastStateDummyPath, ""),
	} {
		dyn := finalStopClient(dep)
		res := FinalStop(context.Background(), dyn, finalStopRequest())
		job, _, _ := unstructured.NestedString(dep.Object, "status", "jobStatus", "state")
		if res.Kind != FinalStopNotRunning || res.Before.JobState != job || patched(dyn) {
			t.Errorf("%s: %+v (patched: %v)", name, res, patched(dyn))
		}
	}
}

// A replacement into another namespace needs the FlinkStateSnapshots of all
// namespaces listed: without that, the stop is refused before anything is
// written; a replacement in the same namespace does not list them.
func TestFinalStop_carryToAnotherNamespaceNeedsTheList(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "flink.apache.org", Resource: "flinkstatesnapshots"}, "", errors.New("no"))
	dyn := finalStopClient(runningSavepointJob("STABLE", "RUNNING", "", ""))
	dyn.PrependReactor("list", "flinkstatesnapshots", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, forbidden })
	q := finalStopRequest()
	q.CarryTo = "other/orders"
	res := FinalStop(context.Background(), dyn, q)
	if res.Kind != FinalStopCarryUnlistable || !apierrors.IsForbidden(res.Err) || patched(dyn) {
		t.Fatalf("%+v (patched: %v)", res, patched(dyn))
	}

	same := finalStopClient(runningSavepointJob("STABLE", "RUNNING", "", ""))
	same.PrependReactor("list", "flinkstatesnapshots", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, forbidden })
	stopsWhenAsked(same, "s3://b/sp/savepoint-1")
	snapshotsEndAs(same, SnapshotCompleted, true)
	q.CarryTo = "ns/orders2"
	if res := FinalStop(context.Background(), same, q); res.Kind != FinalStopTaken {
		t.Fatalf("same namespace: %+v", res)
	}
}

// A stop that does not complete (here, a job that never stops) ends as
// FinalStopFailed at the stop, with the status read again, the failure
// recorded on the FlinkDeployment, and no FlinkStateSnapshot.
func TestFinalStop_failedAtTheStop(t *testing.T) {
	dep := runningSavepointJob("STABLE", "RUNNING", "", "")
	dep.Object["status"].(map[string]any)["jobManagerDeploymentStatus"] = "READY"
	dyn := finalStopClient(dep)
	res := FinalStop(context.Background(), dyn, finalStopRequest())
	if res.Kind != FinalStopFailed || res.Step != StepStop || !errors.Is(res.Err, ErrStopFailed) || !res.AfterRead ||
		res.After.JobState != "RUNNING" || res.AfterJobManager != "READY" || res.AnnotateErr != nil {
		t.Fatalf("%+v", res)
	}
	if note := failedAnnotation(t, dyn); !strings.Contains(note, " "+StepStop+": "+ErrStopFailed.Error()) {
		t.Fatalf("annotation %q", note)
	}
	list, err := dyn.Resource(FlinkStateSnapshotGVR).Namespace("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil || len(list.Items) != 0 {
		t.Fatalf("snapshots %v, %v", list, err)
	}
}

// A FlinkStateSnapshot that fails, or completes without a path, ends as
// FinalStopFailed at that snapshot, recorded on the FlinkDeployment.
func TestFinalStop_failedAtTheSnapshot(t *testing.T) {
	for name, c := range map[string]struct {
		state    string
		withPath bool
		says     string
	}{
		"failed":  {SnapshotFailed, true, "Savepoint Error"},
		"no path": {SnapshotCompleted, false, "the operator reported no path"},
	} {
		dyn := finalStopClient(runningSavepointJob("STABLE", "RUNNING", "", ""))
		stopsWhenAsked(dyn, "s3://b/sp/savepoint-1")
		snapshotsEndAs(dyn, c.state, c.withPath)
		res := FinalStop(context.Background(), dyn, finalStopRequest())
		if res.Kind != FinalStopFailed || res.Step != "FlinkStateSnapshot ns/orders-final-x1" || !strings.Contains(res.Err.Error(), c.says) ||
			res.Path != "s3://b/sp/savepoint-1" || !res.AfterRead || res.After.LifecycleState != "SUSPENDED" {
			t.Errorf("%s: %+v", name, res)
			continue
		}
		if note := failedAnnotation(t, dyn); !strings.Contains(note, "FlinkStateSnapshot ns/orders-final-x1: ") || !strings.Contains(note, c.says) {
			t.Errorf("%s: annotation %q", name, note)
		}
	}
}

// A stopped job whose savepoint cannot be recorded in a FlinkStateSnapshot
// ends as FinalStopUnrecorded with that savepoint's path.
func TestFinalStop_unrecorded(t *testing.T) {
	dyn := finalStopClient(runningSavepointJob("STABLE", "RUNNING", "", ""))
	stopsWhenAsked(dyn, "s3://b/sp/savepoint-1")
	dyn.PrependReactor("create", "flinkstatesnapshots", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "flink.apache.org", Resource: "flinkstatesnapshots"}, "", errors.New("no"))
	})
	res := FinalStop(context.Background(), dyn, finalStopRequest())
	if res.Kind != FinalStopUnrecorded || res.Path != "s3://b/sp/savepoint-1" || !apierrors.IsForbidden(res.Err) {
		t.Fatalf("%+v", res)
	}
}
