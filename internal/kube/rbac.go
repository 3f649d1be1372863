package kube

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
