package kube

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ktypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// A flinkstate_snapshot's create marks the FlinkStateSnapshot it makes
// until it has handed the object to Terraform: PendingCreateLabel holds a
// hash of what the create asked for (SnapshotCreate.Key), and
// CreateRunAnnotation the provider process that made it. A terraform
// killed while the create waited never saved the object in its state; the
// next apply's create of the same configuration finds it by the mark
// (PendingSnapshotCreate) and waits for it instead of triggering a second
// savepoint, as an interrupted upgrade's savepoint is found again
// (PendingUpgradeSavepoint). The mark is removed once the object is in
// Terraform's state (ClearPendingCreate: at the end of a create that
// returned to Terraform, and by any later Read), so an object some state
// holds is never taken by another create.
const (
	PendingCreateLabel  = "terraform-provider-flinkstate/pending-create"
	CreateRunAnnotation = "terraform-provider-flinkstate/create-run"
)

// SnapshotCreate is what one flinkstate_snapshot create asks for: the
// snapshot, its generateName and triggers, and the FlinkDeployment object
// (UID, "" without one) whose job it snapshots.
type SnapshotCreate struct {
	Namespace     string
	GenerateName  string
	Spec          SnapshotSpec
	Triggers      map[string]string
	DeploymentUID string
}

// Object renders the FlinkStateSnapshot with its marks; run identifies the
// provider process that creates it.
func (c SnapshotCreate) Object(run string) *unstructured.Unstructured {
	obj := c.Spec.Object(c.Namespace, "", c.GenerateName)
	SetTriggers(obj, c.Triggers)
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[CreateRunAnnotation] = run
	if c.DeploymentUID != "" {
		a[ForUIDAnnotation] = c.DeploymentUID
	}
	obj.SetAnnotations(a)
	obj.SetLabels(map[string]string{PendingCreateLabel: createKey(obj)})
	return obj
}

// Key is the hash PendingCreateLabel holds for this create.
func (c SnapshotCreate) Key() string { return createKey(c.Object("")) }

// createKey hashes what an object was created for, read back from the
// object itself (absent fields as the operator defaults them:
// FlinkStateSnapshotSpec and SavepointSpec, flink-kubernetes-operator-api
// release-1.15.0), so that only an object that really has this
// configuration matches, whatever its label says. 40 hex digits: a valid
// label value (at most 63 characters).
func createKey(obj *unstructured.Unstructured) string {
	var k struct {
		Namespace, GenerateName, Deployment, DeploymentKind, Type, Format, Path, UID string
		Dispose, AlreadyExists                                                       bool
		BackoffLimit                                                                 int64
		Triggers                                                                     map[string]string
	}
	k.Namespace, k.GenerateName = obj.GetNamespace(), obj.GetGenerateName()
	k.Deployment, _, _ = unstructured.NestedString(obj.Object, "spec", "jobReference", "name")
	k.DeploymentKind, _, _ = unstructured.NestedString(obj.Object, "spec", "jobReference", "kind")
	k.BackoffLimit = -1
	if bl, ok, _ := unstructured.NestedInt64(obj.Object, "spec", "backoffLimit"); ok {
		k.BackoffLimit = bl
	}
	if sp, ok, _ := unstructured.NestedMap(obj.Object, "spec", "savepoint"); ok {
		k.Type, k.Format, k.Dispose = "savepoint", "CANONICAL", true
		if f, ok := sp["formatType"].(string); ok {
			k.Format = f
		}
		if d, ok := sp["disposeOnDelete"].(bool); ok {
			k.Dispose = d
		}
		k.AlreadyExists, _ = sp["alreadyExists"].(bool)
		k.Path, _ = sp["path"].(string)
	} else {
		k.Type = "checkpoint"
	}
	k.Triggers = Triggers(obj)
	k.UID = obj.GetAnnotations()[ForUIDAnnotation]
	b, _ := json.Marshal(k) // map keys are sorted
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:20])
}

// createdByProvider: the object was created (POST) by this provider's
// field manager (the create's entry in metadata.managedFields, operation
// Update, on the main resource, not status).
func createdByProvider(obj *unstructured.Unstructured) bool {
	for _, e := range obj.GetManagedFields() {
		if e.Manager == FieldManager && e.Operation == metav1.ManagedFieldsOperationUpdate && e.Subresource == "" {
			return true
		}
	}
	return false
}

// PendingSnapshotCreate finds the FlinkStateSnapshot an earlier,
// interrupted create of the same configuration (c) made and never handed
// to Terraform, and claims it for this create (run, the provider process
// asking): nil when there is none. Only an object that carries the mark
// for exactly c, whose own spec, generateName, triggers and deployment UID
// hash to it, that this provider's field manager created, that another
// provider process made (a create of this same run is alive: it is that
// create's, not this one's), and that is neither being deleted nor FAILED
// or ABANDONED. Of several, the newest. The claim is an update conditional
// on the object's resourceVersion, so two creates never claim one object.
func PendingSnapshotCreate(ctx context.Context, dyn dynamic.Interface, c SnapshotCreate, run string) (*unstructured.Unstructured, error) {
	key := c.Key()
	r := dyn.Resource(FlinkStateSnapshotGVR).Namespace(c.Namespace)
	for attempt := 0; attempt < 5; attempt++ {
		list, err := r.List(ctx, metav1.ListOptions{LabelSelector: PendingCreateLabel + "=" + key})
		if err != nil {
			return nil, fmt.Errorf("listing FlinkStateSnapshots in %s an interrupted create left: %w", c.Namespace, err)
		}
		var best *unstructured.Unstructured
		var newest time.Time
		for i := range list.Items {
			obj := &list.Items[i]
			if obj.GetDeletionTimestamp() != nil || obj.GetAnnotations()[CreateRunAnnotation] == run ||
				createKey(obj) != key || !createdByProvider(obj) {
				continue
			}
			switch ReadSnapshotStatus(obj).State {
			case SnapshotFailed, SnapshotAbandoned:
				continue
			}
			if t := obj.GetCreationTimestamp().Time; best == nil || t.After(newest) {
				best, newest = obj, t
			}
		}
		if best == nil {
			return nil, nil
		}
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
			"resourceVersion": best.GetResourceVersion(),
			"annotations":     map[string]any{CreateRunAnnotation: run},
		}})
		claimed, err := r.Patch(ctx, best.GetName(), ktypes.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			continue // changed since the list (the operator's status, or another claim): look again
		}
		if err != nil {
			return nil, fmt.Errorf("claiming FlinkStateSnapshot %s/%s, left by an interrupted create: %w", c.Namespace, best.GetName(), err)
		}
		return claimed, nil
	}
	return nil, nil
}

// ClearPendingCreate removes the create's mark from a FlinkStateSnapshot
// now in Terraform's state (nothing when it has none).
func ClearPendingCreate(ctx context.Context, dyn dynamic.Interface, obj *unstructured.Unstructured) error {
	if _, ok := obj.GetLabels()[PendingCreateLabel]; !ok {
		return nil
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"labels":      map[string]any{PendingCreateLabel: nil},
		"annotations": map[string]any{CreateRunAnnotation: nil},
	}})
	return PatchSnapshot(ctx, dyn, obj.GetNamespace(), obj.GetName(), patch)
}
