package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ktypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// ErrTakeoverChanges: applying what the provider read from an adopted object
// would change its spec, so ownership was not taken (nothing was written).
var ErrTakeoverChanges = errors.New("applying the imported settings would change the object's spec")

// TakeOwnership makes FieldManager the only owner of the fields of obj, an
// adopted object's spec as the provider read it at import, without changing
// the object: obj is first applied as a dry run and must leave the spec as
// it is (else ErrTakeoverChanges), then applied, and then every other
// manager (kubectl, kubectl-client-side-apply, Helm) is removed from those
// fields in metadata.managedFields. Fields the provider does not write stay
// with their managers. Afterwards a setting removed from the configuration
// is removed from the object; while another manager co-owns a field, a
// server-side apply that drops it leaves it in place (Kubernetes docs,
// "Server-Side Apply": a field is removed only when no manager owns it).
// This is kubectl's client-side to server-side apply migration
// (client-go util/csaupgrade), narrowed to the provider's own fields.
//
// live is the object as last read (its spec is what the dry run must leave).
func TakeOwnership(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, obj, live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	r := dyn.Resource(gvr).Namespace(obj.GetNamespace())
	body, err := obj.MarshalJSON()
	if err != nil {
		return nil, err
	}
	force := true
	dry, err := r.Patch(ctx, obj.GetName(), ktypes.ApplyPatchType, body,
		metav1.PatchOptions{FieldManager: FieldManager, Force: &force, DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		return nil, err
	}
	if !equality.Semantic.DeepEqual(dry.Object["spec"], live.Object["spec"]) {
		return nil, ErrTakeoverChanges
	}
	applied, err := r.Patch(ctx, obj.GetName(), ktypes.ApplyPatchType, body, metav1.PatchOptions{FieldManager: FieldManager, Force: &force})
	if err != nil {
		return nil, err
	}
	cur := applied
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		patch, err := releasePatch(cur)
		if err != nil || patch == nil {
			return err
		}
		out, err := r.Patch(ctx, cur.GetName(), ktypes.JSONPatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
		if apierrors.IsConflict(err) {
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
	if err != nil {
		return nil, fmt.Errorf("taking the fields over from their previous managers: %w", err)
	}
	return cur, nil
}

// releasePatch returns a JSON patch removing FieldManager's applied fields
// from every other manager's entry of the main resource (nil: nothing to
// remove). It tests the resourceVersion, so a concurrent write makes it fail
// with a conflict instead of overwriting newer ownership records.
func releasePatch(obj *unstructured.Unstructured) ([]byte, error) {
	entries := obj.GetManagedFields()
	var ours *fieldpath.Set
	for _, e := range entries {
		if e.Manager == FieldManager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == "" && e.FieldsV1 != nil {
			ours = &fieldpath.Set{}
			if err := ours.FromJSON(bytes.NewReader(e.FieldsV1.Raw)); err != nil {
				return nil, err
			}
		}
	}
	if ours == nil {
		return nil, nil
	}
	changed := false
	out := make([]metav1.ManagedFieldsEntry, 0, len(entries))
	for _, e := range entries {
		if e.Manager == FieldManager || e.Subresource != "" || e.FieldsV1 == nil {
			out = append(out, e)
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(bytes.NewReader(e.FieldsV1.Raw)); err != nil {
			return nil, err
		}
		rest := set.RecursiveDifference(ours)
		if rest.Equals(set) {
			out = append(out, e)
			continue
		}
		changed = true
		if rest.Empty() {
			continue // the manager owned nothing else
		}
		raw, err := rest.ToJSON()
		if err != nil {
			return nil, err
		}
		e.FieldsV1 = &metav1.FieldsV1{Raw: raw}
		out = append(out, e)
	}
	if !changed {
		return nil, nil
	}
	return json.Marshal([]map[string]any{
		{"op": "test", "path": "/metadata/resourceVersion", "value": obj.GetResourceVersion()},
		{"op": "replace", "path": "/metadata/managedFields", "value": out},
	})
}
