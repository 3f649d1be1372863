package kube

import (
	"context"
	"testing"
)

// A handover's final savepoint that still names where it goes is pending;
// a destroy's (no carry-to) and one passed on (ConsumeCarry) are not.
func TestPendingCarry(t *testing.T) {
	ctx := context.Background()
	dyn := snapshotsClient(
		finalSavepointIn("ns", "orders-final-a", "ns/orders-bg", "s3://b/sp/savepoint-a"),
		finalSavepointIn("other", "orders-final-b", "", "s3://b/sp/savepoint-b"),
	)
	if got, err := PendingCarry(ctx, dyn, "ns", "orders"); err != nil || got != (Carried{Namespace: "ns", Snapshot: "orders-final-a", Path: "s3://b/sp/savepoint-a"}) {
		t.Errorf("pending in ns: %+v %v", got, err)
	}
	if got, err := PendingCarry(ctx, dyn, "other", "orders"); err != nil || got != (Carried{}) {
		t.Errorf("a destroy's final savepoint taken for pending: %+v %v", got, err)
	}
	if err := ConsumeCarry(ctx, dyn, "ns", "orders-final-a"); err != nil {
		t.Fatal(err)
	}
	if got, err := PendingCarry(ctx, dyn, "ns", "orders"); err != nil || got != (Carried{}) {
		t.Errorf("a consumed carry taken for pending: %+v %v", got, err)
	}
}
