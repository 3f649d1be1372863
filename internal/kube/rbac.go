package kube

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ktypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// Built-in resources the provider writes. They go through the dynamic
// client like the operator's: the typed clientset would link every API
// group of Kubernetes into the provider and slow down each of the plugin
// launches a `terraform plan` makes.
var (
	ServiceAccountGVR = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
	RoleBindingGVR    = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}
)

// ServiceAccountObject is the server-side apply configuration of a
// ServiceAccount: exactly the labels and annotations given (an empty map
// is left out, so applying it releases keys applied before).
func ServiceAccountObject(namespace, name string, labels, annotations map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ServiceAccount"}}
	setMeta(u, namespace, name, labels, annotations)
	return u
}

// RoleBindingObject is the server-side apply configuration of a RoleBinding
// that grants the ServiceAccount of the same name a Role or ClusterRole.
func RoleBindingObject(namespace, name string, labels map[string]string, roleKind, roleName string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1",
		"kind":       "RoleBinding",
		"roleRef":    map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": roleKind, "name": roleName},
		"subjects":   []any{map[string]any{"kind": "ServiceAccount", "name": name, "namespace": namespace}},
	}}
	setMeta(u, namespace, name, labels, nil)
	return u
}

// RoleRef reads a RoleBinding's roleRef kind and name.
func RoleRef(rb *unstructured.Unstructured) (kind, name string) {
	kind, _, _ = unstructured.NestedString(rb.Object, "roleRef", "kind")
	name, _, _ = unstructured.NestedString(rb.Object, "roleRef", "name")
	return kind, name
}

func setMeta(u *unstructured.Unstructured, namespace, name string, labels, annotations map[string]string) {
	u.SetNamespace(namespace)
	u.SetName(name)
	if len(labels) > 0 {
		u.SetLabels(labels)
	}
	if len(annotations) > 0 {
		u.SetAnnotations(annotations)
	}
}

// GetServiceAccount reads a ServiceAccount; a *notfound.Error when the API
// server answers that it does not exist.
func GetServiceAccount(ctx context.Context, dyn dynamic.Interface, namespace, name string) (*unstructured.Unstructured, error) {
	return get(ctx, dyn, ServiceAccountGVR, "ServiceAccount", namespace, name)
}

// DeleteServiceAccount deletes a ServiceAccount; with a uid, only that
// object (the API server refuses, 409, to delete another of the same name:
// metav1.Preconditions). A *notfound.Error when it does not exist.
func DeleteServiceAccount(ctx context.Context, dyn dynamic.Interface, namespace, name string, uid ktypes.UID) error {
	opts := metav1.DeleteOptions{}
	if uid != "" {
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	return NotFound("ServiceAccount "+namespace+"/"+name, dyn.Resource(ServiceAccountGVR).Namespace(namespace).Delete(ctx, name, opts))
}

// GetRoleBinding reads a RoleBinding; a *notfound.Error when the API server
// answers that it does not exist.
func GetRoleBinding(ctx context.Context, dyn dynamic.Interface, namespace, name string) (*unstructured.Unstructured, error) {
	return get(ctx, dyn, RoleBindingGVR, "RoleBinding", namespace, name)
}

// DeleteRoleBinding deletes a RoleBinding; a *notfound.Error when it does
// not exist.
func DeleteRoleBinding(ctx context.Context, dyn dynamic.Interface, namespace, name string) error {
	return NotFound("RoleBinding "+namespace+"/"+name, dyn.Resource(RoleBindingGVR).Namespace(namespace).Delete(ctx, name, metav1.DeleteOptions{}))
}

// get reads one object of gvr; the API server's NotFound becomes a
// *notfound.Error about "kind namespace/name", any other error is returned
// as it came (callers show the API server's message).
func get(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, kind, namespace, name string) (*unstructured.Unstructured, error) {
	obj, err := dyn.Resource(gvr).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, NotFound(kind+" "+namespace+"/"+name, err)
	}
	return obj, nil
}
