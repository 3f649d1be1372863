package kube

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ktypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/csaupgrade"
	"k8s.io/client-go/util/retry"
)

// Create makes a new object and never takes over an existing one: it is a
// POST, which the API server refuses with 409 AlreadyExists
// (apierrors.IsAlreadyExists) when an object of that name exists, atomically
// in etcd. A server-side apply PATCH would instead create-or-update, and
// with force take over every field of someone else's object.
//
// A POST records this manager's fields under operation Update; later
// updates are server-side applies (operation Apply). Were both entries kept,
// the fields would stay co-owned by the Update entry and a key removed from
// the configuration would never be removed from the object. So the Update
// entry is converted into the Apply entry right away with client-go's
// csaupgrade (the migration kubectl uses; its patch carries the
// resourceVersion, so it cannot overwrite a concurrent change).
//
// created is non-nil whenever the object was created, even if err reports
// that the ownership conversion failed (Apply retries it).
func Create(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (created *unstructured.Unstructured, err error) {
	r := dyn.Resource(gvr).Namespace(obj.GetNamespace())
	created, err = r.Create(ctx, obj, metav1.CreateOptions{FieldManager: FieldManager})
	if err != nil {
		return nil, err
	}
	upgraded, err := upgradeOwnership(ctx, r, created)
	if err != nil {
		return created, fmt.Errorf("%s %s/%s was created, but moving its fields to server-side apply ownership failed (the next apply retries): %w",
			created.GetKind(), created.GetNamespace(), created.GetName(), err)
	}
	return upgraded, nil
}

// upgradeOwnership moves the fields FieldManager owns through Update
// operations to its Apply entry (no-op when there is none).
func upgradeOwnership(ctx context.Context, r dynamic.ResourceInterface, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	cur := obj
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		patch, err := csaupgrade.UpgradeManagedFieldsPatch(cur, sets.New(FieldManager), FieldManager)
		if err != nil || patch == nil {
			return err
		}
		out, err := r.Patch(ctx, cur.GetName(), ktypes.JSONPatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
		if apierrors.IsConflict(err) {
			// Someone (the operator) wrote in between: convert the new version.
			if fresh, gerr := r.Get(ctx, cur.GetName(), metav1.GetOptions{}); gerr == nil {
				cur = fresh
			}
			return err
		}
		if err == nil {
			cur = out
		}
		return err
	})
	return cur, err
}

// hasUpdateEntry tells whether FieldManager still owns fields through an
// Update operation (a create whose ownership conversion failed).
func hasUpdateEntry(obj *unstructured.Unstructured) bool {
	for _, e := range obj.GetManagedFields() {
		if e.Manager == FieldManager && e.Operation == metav1.ManagedFieldsOperationUpdate && e.Subresource == "" {
			return true
		}
	}
	return false
}
