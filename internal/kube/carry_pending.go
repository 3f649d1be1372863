package kube

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
)

// PendingCarry finds the newest COMPLETED final savepoint of deployment
// (FinalSavepointLabel) in namespace that still names a deployment it
// goes to (CarryToAnnotation, removed by ConsumeCarry once that deployment
// started from it): a handover whose deployment was stopped and deleted,
// and whose successor was not created yet. The zero Carried when there is
// none.
func PendingCarry(ctx context.Context, dyn dynamic.Interface, namespace, deployment string) (Carried, error) {
	list, err := dyn.Resource(FlinkStateSnapshotGVR).Namespace(namespace).List(ctx,
		metav1.ListOptions{LabelSelector: FinalSavepointLabel + "=" + deployment})
	if err != nil {
		return Carried{}, fmt.Errorf("listing the final savepoints of %s/%s: %w", namespace, deployment, err)
	}
	return newestCarried(list.Items, func(to string) bool { return to != "" }), nil
}
