package kube

import (
	"context"
	"fmt"

	"k8s.io/client-go/dynamic"
)

// CarryTarget is a deployment being created that a replaced deployment's
// final savepoint may be carried to (its FlinkStateSnapshot's
// CarryToAnnotation names Namespace/Name): a replacement's create, or a
// move's blue/green deployment.
type CarryTarget struct{ Namespace, Name string }

func (t CarryTarget) id() string { return t.Namespace + "/" + t.Name }

// Find is the path of the final savepoint that waits for t ("": none,
// CarriedSavepoint); a failed look is worded as a "Creating" problem
// (ok false): nothing is created on a guess.
func (t CarryTarget) Find(ctx context.Context, dyn dynamic.Interface) (path string, rep Report, ok bool) {
	carried, err := CarriedSavepoint(ctx, dyn, t.Namespace, t.Name)
	if err != nil {
		return "", Report{Verb: "Creating", Detail: "looking for the final savepoint of the deployment it replaces: " + err.Error(),
			Advice: "Nothing was created. Apply again."}, false
	}
	return carried.Path, Report{}, true
}

// Consume marks the final savepoint t started from (path) as used: its
// CarryToAnnotation goes (ConsumeCarry), so a later create of t does not
// start from it again. A failure is a warning (failed true): t is created.
func (t CarryTarget) Consume(ctx context.Context, dyn dynamic.Interface, path string) (rep Report, failed bool) {
	carried, err := CarriedSavepoint(ctx, dyn, t.Namespace, t.Name)
	if err == nil && carried.Snapshot != "" && carried.Path == path {
		err = ConsumeCarry(ctx, dyn, carried.Namespace, carried.Snapshot)
	}
	if err == nil {
		return Report{}, false
	}
	return Report{Warning: "Final savepoint not marked as used",
		Detail: fmt.Sprintf("FlinkDeployment %s started from %s, but its FlinkStateSnapshot still names it as its replacement: %s. Remove "+
			"the annotation %s from it, or a later create of %s would start from it again.", t.id(), path, err, CarryToAnnotation, t.id())}, true
}
