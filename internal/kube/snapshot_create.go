package kube

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

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
// Terraform's state and COMPLETED (ClearPendingCreate: at the end of a
// create that returned to Terraform, and by any later Read), so an object
// some state holds is not taken by another create once it is done.
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

// SnapshotClaims are the FlinkStateSnapshots (by UID) the creates of one
// provider process have taken over: held in memory, never written to the
// object, so that two creates of that process never take one object.
//
// No write: while a snapshot is not COMPLETED the operator may be in the
// middle of a reconciliation that patches its labels, and that patch is
// conditional on the resourceVersion it read (FlinkStateSnapshotController
// .getUpdateControl returns UpdateControl.patchResource(AndStatus) whenever
// the snapshot.state label changes; with server-side apply off,
// FlinkOperator: withUseSSAToPatchPrimaryResource(false), the Java
// Operator SDK 5.2.2's ReconciliationDispatcher.CustomResourceFacade
// .patchResource calls fabric8 7.3.1's edit, and OperationSupport
// .handlePatch keeps the resourceVersion of the object it was given in
// its JSON patch). Any write of ours in between bumps the resourceVersion:
// the operator's patch fails with a conflict, updateErrorStatus counts a
// failure and, within the backoff limit, triggers the savepoint again (a
// second savepoint), or else marks the snapshot FAILED.
type SnapshotClaims struct {
	mu   sync.Mutex
	uids map[ktypes.UID]bool
}

// claim takes uid unless a create of this process has: whether it took it.
func (c *SnapshotClaims) claim(uid ktypes.UID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.uids[uid] {
		return false
	}
	if c.uids == nil {
		c.uids = map[ktypes.UID]bool{}
	}
	c.uids[uid] = true
	return true
}

// PendingSnapshotCreate finds the FlinkStateSnapshot an earlier,
// interrupted create of the same configuration (c) made and never handed
// to Terraform, and claims it for this create in claims (run is the
// provider process asking): nil when there is none. Only an object that
// carries the mark for exactly c, whose own spec, generateName, triggers
// and deployment UID hash to it, that this provider's field manager
// created, that another provider process made (a create of this same run
// is alive: it is that create's, not this one's), that no other create of
// this process has taken (claims), and that is neither being deleted nor
// FAILED or ABANDONED. Of several, the newest.
//
// It writes nothing to the object (SnapshotClaims says why). The mark goes
// once the snapshot is in Terraform's state and COMPLETED
// (ClearPendingCreate).
func PendingSnapshotCreate(ctx context.Context, dyn dynamic.Interface, c SnapshotCreate, run string, claims *SnapshotClaims) (*unstructured.Unstructured, error) {
	key := c.Key()
	list, err := dyn.Resource(FlinkStateSnapshotGVR).Namespace(c.Namespace).List(ctx, metav1.ListOptions{LabelSelector: PendingCreateLabel + "=" + key})
	if err != nil {
		return nil, fmt.Errorf("listing FlinkStateSnapshots in %s an interrupted create left: %w", c.Namespace, err)
	}
	var candidates []*unstructured.Unstructured
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
		candidates = append(candidates, obj)
	}
	sort.SliceStable(candidates, func(i, j int) bool {
		return candidates[i].GetCreationTimestamp().After(candidates[j].GetCreationTimestamp().Time)
	})
	for _, obj := range candidates {
		if claims.claim(obj.GetUID()) {
			return obj, nil
		}
	}
	return nil, nil
}

// ClearPendingCreate removes the create's mark from a FlinkStateSnapshot
// now in Terraform's state, as obj shows it: nothing when it has none, and
// nothing yet while it is not COMPLETED (the operator may still patch it:
// SnapshotClaims); a later Read removes it then. COMPLETED is written by
// the reconciliation that patched the snapshot.state label to it just
// before (the Java Operator SDK 5.2.2's ReconciliationDispatcher
// .reconcileExecution patches the resource, then the status), and later
// reconciliations change neither. A FAILED or ABANDONED snapshot keeps it:
// no create takes those (PendingSnapshotCreate), and a FAILED one may
// still get its label patched (FlinkStateSnapshotController.updateLabels
// on a later event), which a write of ours could make fail and overwrite
// the error the user is shown.
func ClearPendingCreate(ctx context.Context, dyn dynamic.Interface, obj *unstructured.Unstructured) error {
	if _, ok := obj.GetLabels()[PendingCreateLabel]; !ok || ReadSnapshotStatus(obj).State != SnapshotCompleted {
		return nil
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"labels":      map[string]any{PendingCreateLabel: nil},
		"annotations": map[string]any{CreateRunAnnotation: nil},
	}})
	return PatchSnapshot(ctx, dyn, obj.GetNamespace(), obj.GetName(), patch)
}
