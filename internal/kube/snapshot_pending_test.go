package kube

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ktypes "k8s.io/apimachinery/pkg/types"
	dynfake "k8s.io/client-go/dynamic/fake"
)

func snapshotsClient(objs ...runtime.Object) *dynfake.FakeDynamicClient {
	return dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		FlinkDeploymentGVR: "FlinkDeploymentList", FlinkStateSnapshotGVR: "FlinkStateSnapshotList",
	}, objs...)
}

// asCreated is obj as the API server stores it after this provider's POST:
// a name, and the create's managedFields entry.
func asCreated(obj *unstructured.Unstructured, name, manager string) *unstructured.Unstructured {
	obj.SetName(name)
	obj.SetUID(ktypes.UID("uid-" + name))
	obj.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate}})
	return obj
}

func withState(obj *unstructured.Unstructured, state string) *unstructured.Unstructured {
	obj.Object["status"] = map[string]any{"state": state}
	return obj
}

// The savepoint an interrupted upgrade left is found again only for the
// same FlinkDeployment object and job: a deployment destroyed and created
// again under its name starts at generation 1 again, and its predecessor's
// kept upgrade savepoint (same name, spec hash, generation) is another
// job's state.
func TestPendingUpgradeSavepoint_onlyTheSameObjectAndJob(t *testing.T) {
	ctx := context.Background()
	old := UpgradeTarget{Deployment: "orders", UID: "uid-1", Generation: 1, JobID: "job-1", SpecHash: "h"}
	prev := asCreated(UpgradeSavepointObject("ns", "CANONICAL", old), "orders-upgrade-aaaaa", FieldManager)
	// One written before the object and job were recorded: of no known incarnation.
	legacy := asCreated(UpgradeSavepointObject("ns", "CANONICAL", old), "orders-upgrade-bbbbb", FieldManager)
	a := legacy.GetAnnotations()
	delete(a, ForUIDAnnotation)
	delete(a, ForJobAnnotation)
	legacy.SetAnnotations(a)
	dyn := snapshotsClient(prev, legacy)

	for _, c := range []struct {
		name string
		u    UpgradeTarget
		want string
	}{
		{"same object, job, generation and spec", old, "orders-upgrade-aaaaa"},
		{"a new incarnation (new UID and job, generation 1 again)", UpgradeTarget{Deployment: "orders", UID: "uid-2", Generation: 1, JobID: "job-2", SpecHash: "h"}, ""},
		{"a new incarnation whose job id the user fixed", UpgradeTarget{Deployment: "orders", UID: "uid-2", Generation: 1, JobID: "job-1", SpecHash: "h"}, ""},
		{"the same object, another job", UpgradeTarget{Deployment: "orders", UID: "uid-1", Generation: 1, JobID: "job-2", SpecHash: "h"}, ""},
		{"the same object, another target spec", UpgradeTarget{Deployment: "orders", UID: "uid-1", Generation: 1, JobID: "job-1", SpecHash: "other"}, ""},
		{"the same object, later generation", UpgradeTarget{Deployment: "orders", UID: "uid-1", Generation: 2, JobID: "job-1", SpecHash: "h"}, ""},
	} {
		got, err := PendingUpgradeSavepoint(ctx, dyn, "ns", c.u)
		if err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}

// The upgrade savepoint records what it was taken for.
func TestUpgradeSavepointObject_recordsObjectAndJob(t *testing.T) {
	obj := UpgradeSavepointObject("ns", "NATIVE", UpgradeTarget{Deployment: "orders", UID: "u", Generation: 3, JobID: "j", SpecHash: "h"})
	a := obj.GetAnnotations()
	if a[ForUIDAnnotation] != "u" || a[ForJobAnnotation] != "j" || a[ForGenerationAnnotation] != "3" || a[ForSpecAnnotation] != "h" ||
		obj.GetLabels()[UpgradeOfLabel] != "orders" || obj.GetGenerateName() != "orders-upgrade-" {
		t.Fatalf("metadata %v", obj.Object["metadata"])
	}
}
