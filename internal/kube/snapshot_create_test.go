package kube

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func orderSnapshot() SnapshotCreate {
	return SnapshotCreate{Namespace: "ns", GenerateName: "orders-",
		Spec:     SnapshotSpec{DeploymentName: "orders", Type: "savepoint", FormatType: "CANONICAL", BackoffLimit: 1},
		Triggers: map[string]string{"release": "42"}, DeploymentUID: "dep-uid"}
}

// An interrupted create's object is taken by the next create of the same
// configuration, claimed for it in memory (a second create of that run
// does not take it too), with nothing written to it: the operator may be
// patching it (SnapshotClaims).
func TestPendingSnapshotCreate_takesTheInterruptedOne(t *testing.T) {
	ctx := context.Background()
	c := orderSnapshot()
	dyn := snapshotsClient(asCreated(c.Object("earlier-run"), "orders-abcde", FieldManager))
	var claims SnapshotClaims
	got, err := PendingSnapshotCreate(ctx, dyn, c, "this-run", &claims)
	if err != nil || got == nil || got.GetName() != "orders-abcde" {
		t.Fatalf("found %v, %v; want orders-abcde", got, err)
	}
	for _, a := range dyn.Actions() {
		if a.GetVerb() != "list" {
			t.Errorf("the take-over wrote to the snapshot: %s %s", a.GetVerb(), a.GetResource().Resource)
		}
	}
	if again, err := PendingSnapshotCreate(ctx, dyn, c, "this-run", &claims); err != nil || again != nil {
		t.Fatalf("a second create of the same run took it too: %v, %v", again, err)
	}
}

// The mark stays while the snapshot is not COMPLETED (no status yet,
// TRIGGER_PENDING, IN_PROGRESS: the operator may patch it) and goes once it
// is; then no later create takes it.
func TestClearPendingCreate_onlyOnceCompleted(t *testing.T) {
	ctx := context.Background()
	c := orderSnapshot()
	for _, state := range []string{"", SnapshotTriggerPending, SnapshotInProgress, SnapshotFailed, SnapshotAbandoned} {
		obj := asCreated(c.Object("earlier-run"), "orders-abcde", FieldManager)
		if state != "" {
			obj = withState(obj, state)
		}
		dyn := snapshotsClient(obj)
		if err := ClearPendingCreate(ctx, dyn, obj); err != nil {
			t.Fatal(err)
		}
		if n := len(dyn.Actions()); n != 0 {
			t.Errorf("state %q: %d writes, want none (%v)", state, n, dyn.Actions())
		}
	}
	obj := withState(asCreated(c.Object("earlier-run"), "orders-abcde", FieldManager), SnapshotCompleted)
	dyn := snapshotsClient(obj)
	if err := ClearPendingCreate(ctx, dyn, obj); err != nil {
		t.Fatal(err)
	}
	if again, err := PendingSnapshotCreate(ctx, dyn, c, "a-third-run", &SnapshotClaims{}); err != nil || again != nil {
		t.Fatalf("an object in state (mark cleared) taken again: %v, %v", again, err)
	}
}

// Nothing else is taken: not another configuration's object, not one of a
// create that is still running (this run), not one this provider did not
// create, not one whose own spec does not hash to its label (a copied
// label), not one of an earlier FlinkDeployment of that name, not a failed
// or deleted one.
func TestPendingSnapshotCreate_takesNothingElse(t *testing.T) {
	ctx := context.Background()
	c := orderSnapshot()
	other := func(f func(*SnapshotCreate)) *unstructured.Unstructured {
		o := orderSnapshot()
		f(&o)
		return o.Object("earlier-run")
	}
	forged := c.Object("earlier-run")
	_ = unstructured.SetNestedField(forged.Object, int64(5), "spec", "backoffLimit") // label kept, spec differs
	deleting := asCreated(c.Object("earlier-run"), "orders-del00", FieldManager)
	now := metav1.Now()
	deleting.SetDeletionTimestamp(&now)
	deleting.SetFinalizers([]string{"flinkstatesnapshots.flink.apache.org/finalizer"})
	for name, obj := range map[string]*unstructured.Unstructured{
		"other triggers":      asCreated(other(func(o *SnapshotCreate) { o.Triggers = map[string]string{"release": "43"} }), "orders-trig0", FieldManager),
		"other name prefix":   asCreated(other(func(o *SnapshotCreate) { o.GenerateName = "nightly-" }), "nightly-aaaaa", FieldManager),
		"other type":          asCreated(other(func(o *SnapshotCreate) { o.Spec.Type = "checkpoint" }), "orders-chk00", FieldManager),
		"other deployment":    asCreated(other(func(o *SnapshotCreate) { o.Spec.DeploymentName = "billing" }), "orders-dep00", FieldManager),
		"earlier incarnation": asCreated(other(func(o *SnapshotCreate) { o.DeploymentUID = "old-uid" }), "orders-inc00", FieldManager),
		"this run's own":      asCreated(c.Object("this-run"), "orders-mine0", FieldManager),
		"not the provider's":  asCreated(c.Object("earlier-run"), "orders-kubec", "kubectl-create"),
		"copied label":        asCreated(forged, "orders-forge", FieldManager),
		"failed":              withState(asCreated(c.Object("earlier-run"), "orders-fail0", FieldManager), SnapshotFailed),
		"abandoned":           withState(asCreated(c.Object("earlier-run"), "orders-aband", FieldManager), SnapshotAbandoned),
		"being deleted":       deleting,
		"without the mark at all": asCreated(func() *unstructured.Unstructured {
			o := c.Object("earlier-run")
			o.SetLabels(nil)
			return o
		}(), "orders-nomrk", FieldManager),
	} {
		got, err := PendingSnapshotCreate(ctx, snapshotsClient(obj), c, "this-run", &SnapshotClaims{})
		if err != nil || got != nil {
			t.Errorf("%s: took %v (%v), want nothing", name, got, err)
		}
	}
}

// Of several an interrupted create left, the newest is taken.
func TestPendingSnapshotCreate_newest(t *testing.T) {
	c := orderSnapshot()
	older := asCreated(c.Object("run-1"), "orders-older", FieldManager)
	older.SetCreationTimestamp(metav1.Unix(100, 0))
	newer := asCreated(c.Object("run-2"), "orders-newer", FieldManager)
	newer.SetCreationTimestamp(metav1.Unix(200, 0))
	got, err := PendingSnapshotCreate(context.Background(), snapshotsClient(older, newer), c, "run-3", &SnapshotClaims{})
	if err != nil || got == nil || got.GetName() != "orders-newer" {
		t.Fatalf("took %v, %v; want orders-newer", got, err)
	}
}

// Two creates of one run with the same configuration, two interrupted
// ones' objects: each takes one, the newest first.
func TestPendingSnapshotCreate_oneEach(t *testing.T) {
	c := orderSnapshot()
	older := asCreated(c.Object("run-1"), "orders-older", FieldManager)
	older.SetCreationTimestamp(metav1.Unix(100, 0))
	newer := asCreated(c.Object("run-2"), "orders-newer", FieldManager)
	newer.SetCreationTimestamp(metav1.Unix(200, 0))
	dyn := snapshotsClient(older, newer)
	var claims SnapshotClaims
	var got []string
	for i := 0; i < 3; i++ {
		obj, err := PendingSnapshotCreate(context.Background(), dyn, c, "run-3", &claims)
		if err != nil {
			t.Fatal(err)
		}
		if obj != nil {
			got = append(got, obj.GetName())
		}
	}
	if len(got) != 2 || got[0] != "orders-newer" || got[1] != "orders-older" {
		t.Fatalf("took %v, want [orders-newer orders-older]", got)
	}
}
