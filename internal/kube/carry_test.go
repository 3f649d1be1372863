package kube

import (
	"context"
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
)

// A create finds the final savepoint carried to it, and once it started
// from it, the annotation goes: a later create finds nothing.
func TestCarryTarget(t *testing.T) {
	ctx := context.Background()
	dyn := snapshotsClient(finalSavepointIn("old", "orders-final-a", "new/orders", "s3://b/sp/savepoint-a"))
	target := CarryTarget{Namespace: "new", Name: "orders"}
	path, _, ok := target.Find(ctx, dyn)
	if !ok || path != "s3://b/sp/savepoint-a" {
		t.Fatalf("Find: %q %v", path, ok)
	}
	if rep, failed := target.Consume(ctx, dyn, path); failed {
		t.Fatalf("Consume: %+v", rep)
	}
	if path, _, ok := target.Find(ctx, dyn); !ok || path != "" {
		t.Errorf("after Consume: %q %v", path, ok)
	}
}

// A failed look refuses the create; a failed mark is a warning naming the
// annotation to remove.
func TestCarryTarget_failures(t *testing.T) {
	ctx := context.Background()
	dyn := snapshotsClient(finalSavepointIn("new", "orders-final-a", "new/orders", "s3://b/sp/savepoint-a"))
	dyn.PrependReactor("patch", "flinkstatesnapshots", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("patch denied")
	})
	target := CarryTarget{Namespace: "new", Name: "orders"}
	rep, failed := target.Consume(ctx, dyn, "s3://b/sp/savepoint-a")
	if !failed || rep.Warning != "Final savepoint not marked as used" || !strings.Contains(rep.Detail, "patch denied. Remove the annotation "+CarryToAnnotation) ||
		!strings.Contains(rep.Detail, "FlinkDeployment new/orders started from s3://b/sp/savepoint-a") {
		t.Errorf("Consume: %v %+v", failed, rep)
	}
	dyn.PrependReactor("list", "flinkstatesnapshots", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("list denied")
	})
	if _, rep, ok := target.Find(ctx, dyn); ok || rep.Verb != "Creating" || !strings.Contains(rep.Detail, "list denied") ||
		rep.Advice != "Nothing was created. Apply again." {
		t.Errorf("Find: %v %+v", ok, rep)
	}
}
