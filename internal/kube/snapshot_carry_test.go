package kube

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"
)

// finalSavepointIn is a COMPLETED final savepoint of deployment orders in
// ns, annotated for the replacement carryTo.
func finalSavepointIn(ns, name, carryTo, path string) runtime.Object {
	obj := FinalSavepointObject(ns, "orders", "CANONICAL", "", carryTo)
	obj.SetName(name)
	obj.Object["status"] = map[string]any{"state": SnapshotCompleted, "path": path}
	return obj
}

// A replacement finds the final savepoint of the deployment it replaces in
// its own namespace, or, moved to another namespace, in the old one, where
// the FlinkStateSnapshot stays with its deployment.
func TestCarriedSavepoint(t *testing.T) {
	ctx := context.Background()
	dyn := snapshotsClient(
		finalSavepointIn("old", "orders-final-a", "new/orders", "s3://b/sp/savepoint-a"),
		finalSavepointIn("new", "other-final-b", "new/other", "s3://b/sp/savepoint-b"),
	)
	got, err := CarriedSavepoint(ctx, dyn, "new", "orders")
	if err != nil || got != (Carried{Namespace: "old", Snapshot: "orders-final-a", Path: "s3://b/sp/savepoint-a"}) {
		t.Errorf("moved into new: %+v %v", got, err)
	}
	got, err = CarriedSavepoint(ctx, dyn, "new", "other")
	if err != nil || got != (Carried{Namespace: "new", Snapshot: "other-final-b", Path: "s3://b/sp/savepoint-b"}) {
		t.Errorf("renamed in new: %+v %v", got, err)
	}
	if got, err := CarriedSavepoint(ctx, dyn, "old", "orders"); err != nil || got != (Carried{}) {
		t.Errorf("nothing carried to old/orders: %+v %v", got, err)
	}
}

// Without list in all namespaces the other namespaces are not searched
// (nothing found, no error: a create must not fail on it), and
// SnapshotsListableEverywhere says why, for the destroy to refuse first.
func TestCarriedSavepoint_forbiddenEverywhere(t *testing.T) {
	ctx := context.Background()
	dyn := snapshotsClient(finalSavepointIn("old", "orders-final-a", "new/orders", "s3://b/sp/savepoint-a"))
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "flink.apache.org", Resource: "flinkstatesnapshots"}, "", errors.New("denied"))
	dyn.PrependReactor("list", "flinkstatesnapshots", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetNamespace() == "" {
			return true, nil, forbidden
		}
		return false, nil, nil
	})
	if got, err := CarriedSavepoint(ctx, dyn, "new", "orders"); err != nil || got != (Carried{}) {
		t.Errorf("%+v %v, want nothing and no error", got, err)
	}
	if err := SnapshotsListableEverywhere(ctx, dyn); !apierrors.IsForbidden(err) {
		t.Errorf("SnapshotsListableEverywhere: %v, want Forbidden", err)
	}
}
