package kube

import (
	"context"
	"fmt"
	"time"

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
	var found Carried
	var newest time.Time
	for i := range list.Items {
		obj := &list.Items[i]
		if obj.GetAnnotations()[CarryToAnnotation] == "" {
			continue
		}
		st := ReadSnapshotStatus(obj)
		if st.State != SnapshotCompleted || st.Path == "" {
			continue
		}
		if t := obj.GetCreationTimestamp().Time; found.Path == "" || t.After(newest) {
			found, newest = Carried{Namespace: obj.GetNamespace(), Snapshot: obj.GetName(), Path: st.Path}, t
		}
	}
	return found, nil
}
