package kube

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ktypes "k8s.io/apimachinery/pkg/types"
	dynfake "k8s.io/client-go/dynamic/fake"
)

const transitionSP = "s3://b/app/savepoints/savepoint-a1b2c3-0123456789ab"

func bgObject(templatePath string) *unstructured.Unstructured {
	job := map[string]any{"upgradeMode": "savepoint"}
	if templatePath != "" {
		job["initialSavepointPath"] = templatePath
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkBlueGreenDeployment",
		"metadata": map[string]any{"name": "orders", "namespace": "ns", "uid": "bg-uid"},
		"spec":     map[string]any{"template": map[string]any{"spec": map[string]any{"job": job}}},
		"status":   map[string]any{"blueGreenState": "ACTIVE_GREEN"},
	}}
}

func childObject(name, owner, initialPath, jobID string) *unstructured.Unstructured {
	job := map[string]any{"upgradeMode": "savepoint"}
	if initialPath != "" {
		job["initialSavepointPath"] = initialPath
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkDeployment",
		"metadata": map[string]any{"name": name, "namespace": "ns"},
		"spec":     map[string]any{"job": job},
		"status":   map[string]any{"jobStatus": map[string]any{"jobId": jobID, "state": "RUNNING"}},
	}}
	if owner != "" {
		obj.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "flink.apache.org/v1beta1", Kind: "FlinkBlueGreenDeployment", Name: "orders", UID: ktypes.UID(owner)}})
	}
	return obj
}

// A child's job.initialSavepointPath is a transition savepoint only when
// the operator put it there in a transition: not the template's own path
// (first deployment, savepoint redeploy), not a checkpoint a carry-over
// took from the child's status, not empty.
func TestTransitionSavepoint(t *testing.T) {
	user := "s3://b/app/savepoints/savepoint-ffffff-000000000000"
	for _, tc := range []struct {
		name, template, child, want string
	}{
		{"transition", "", transitionSP, transitionSP},
		{"transition with its _metadata named", "", transitionSP + "/_metadata", transitionSP + "/_metadata"},
		{"transition while the template names another path", user, transitionSP, transitionSP},
		{"first deployment or redeploy from the template's path", user, user, ""},
		{"no path", "", "", ""},
		{"a checkpoint carried over from the child's status", "", "s3://b/app/checkpoints/0123/chk-7", ""},
	} {
		if got := TransitionSavepoint(bgObject(tc.template), childObject("orders-green", "bg-uid", tc.child, "")); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func bgFake(objs ...runtime.Object) *dynfake.FakeDynamicClient {
	return dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		FlinkDeploymentGVR: "FlinkDeploymentList", FlinkStateSnapshotGVR: "FlinkStateSnapshotList",
		FlinkBlueGreenDeploymentGVR: "FlinkBlueGreenDeploymentList",
	}, objs...)
}

func completedSnapshot(name, deployment, path, triggered string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkStateSnapshot",
		"metadata": map[string]any{"name": name, "namespace": "ns"},
		"spec": map[string]any{"jobReference": map[string]any{"kind": "FlinkDeployment", "name": deployment},
			"savepoint": map[string]any{"path": ""}},
		"status": map[string]any{"state": "COMPLETED", "path": path, "triggerTimestamp": triggered, "resultTimestamp": triggered},
	}}
}

// The snapshots of a blue/green deployment are both children's
// FlinkStateSnapshots (blue's outlive blue) and the transition savepoint
// green was started from, which is of blue's job; another deployment's
// snapshots, and a FlinkDeployment of a child's name that the resource does
// not own, are not among them. type "checkpoint" leaves the transition
// savepoint out. Once the resource is gone, its children's snapshots are
// still found.
func TestBlueGreenSnapshots(t *testing.T) {
	ctx := context.Background()
	dyn := bgFake(bgObject(""),
		childObject("orders-green", "bg-uid", transitionSP, "green-job"),
		completedSnapshot("blue-upgrade", "orders-blue", "s3://b/app/savepoints/savepoint-000001-000000000001", "2026-01-01T00:00:00Z"),
		completedSnapshot("green-manual", "orders-green", "s3://b/app/savepoints/savepoint-000002-000000000002", "2026-01-02T00:00:00Z"),
		completedSnapshot("other", "payments", "s3://b/other/savepoints/savepoint-000003-000000000003", "2026-01-03T00:00:00Z"),
	)
	got, err := BlueGreenSnapshots(ctx, dyn, "ns", "orders", "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range got {
		names = append(names, s.Name+"@"+s.Deployment+"@"+s.Path)
	}
	want := []string{
		"blue-upgrade@orders-blue@s3://b/app/savepoints/savepoint-000001-000000000001",
		"green-manual@orders-green@s3://b/app/savepoints/savepoint-000002-000000000002",
		"@orders-blue@" + transitionSP,
	}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("got %q, want %q", names, want)
	}
	if !got[2].Transition || got[0].Transition || got[1].Transition {
		t.Errorf("Transition set on %+v", got)
	}
	if cps, err := BlueGreenSnapshots(ctx, dyn, "ns", "orders", "checkpoint"); err != nil || len(cps) != 0 {
		t.Errorf("checkpoints: got %+v, %v; want none", cps, err)
	}

	notOwned := bgFake(bgObject(""), childObject("orders-green", "someone-else", transitionSP, "x"))
	if got, err := BlueGreenSnapshots(ctx, notOwned, "ns", "orders", ""); err != nil || len(got) != 0 {
		t.Errorf("a child the resource does not own: got %+v, %v; want nothing", got, err)
	}
	gone := bgFake(completedSnapshot("orders-green-final-x", "orders-green", "s3://b/app/savepoints/savepoint-000002-000000000009", "2026-01-04T00:00:00Z"))
	if got, err := BlueGreenSnapshots(ctx, gone, "ns", "orders", ""); err != nil || len(got) != 1 || got[0].Name != "orders-green-final-x" {
		t.Errorf("the resource destroyed: got %+v, %v; want the final savepoint its child left", got, err)
	}
}

// The active child's job id is its own; a child the resource does not own
// has none.
func TestChildJobID(t *testing.T) {
	ctx := context.Background()
	bg := bgObject("")
	dyn := bgFake(bg, childObject("orders-green", "bg-uid", "", "green-job"), childObject("orders-blue", "someone-else", "", "blue-job"))
	if id, err := ChildJobID(ctx, dyn, bg, "green"); err != nil || id != "green-job" {
		t.Errorf("green: got %q, %v", id, err)
	}
	if id, err := ChildJobID(ctx, dyn, bg, "blue"); err != nil || id != "" {
		t.Errorf("a blue the resource does not own: got %q, %v; want none", id, err)
	}
}

// A transition savepoint is dated by its _metadata (the operator records
// no time), and wins over a FlinkStateSnapshot triggered before it was
// written; one whose _metadata is gone is an error naming it.
func TestPickNewest_transition(t *testing.T) {
	at := func(s string) time.Time { tt, _ := time.Parse(time.RFC3339, s); return tt }
	meta := map[string]time.Time{transitionSP: at("2026-03-01T00:00:00Z")}
	metaTime := func(p string) (time.Time, error) {
		if tt, ok := meta[p]; ok {
			return tt, nil
		}
		return time.Time{}, errors.New("no such key")
	}
	manual := SavepointInfo{Name: "manual", Path: "s3://b/sp/m", TriggerTimestamp: "2026-02-01T00:00:00Z", Type: "savepoint", Deployment: "orders-blue"}
	tr := SavepointInfo{Path: transitionSP, Type: "savepoint", Transition: true, Deployment: "orders-blue"}
	got, err := PickNewest([]SavepointInfo{manual, tr}, metaTime)
	if err != nil || got == nil || !got.Transition || got.Rule != RuleTransition || !got.TakenAt.Equal(at("2026-03-01T00:00:00Z")) {
		t.Fatalf("got %+v, %v; want the transition savepoint dated by its _metadata", got, err)
	}
	manual.TriggerTimestamp = "2026-04-01T00:00:00Z"
	if got, _ := PickNewest([]SavepointInfo{manual, tr}, metaTime); got == nil || got.Name != "manual" {
		t.Fatalf("got %+v, want the snapshot triggered after the transition savepoint was written", got)
	}
	delete(meta, transitionSP)
	if _, err := PickNewest([]SavepointInfo{manual, tr}, metaTime); err == nil || !strings.Contains(err.Error(), transitionSP) ||
		!strings.Contains(err.Error(), "transition savepoint") {
		t.Fatalf("got %v, want an error naming the transition savepoint", err)
	}
}
