package kube

import (
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// releasePatch removes the provider's applied fields from other managers
// only: kubectl keeps what the provider does not write (a job field it does
// not model, the last-applied annotation), the status manager is left alone.
func TestReleasePatch(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	obj.SetResourceVersion("42")
	obj.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationApply, FieldsType: "FieldsV1",
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:image":{},"f:flinkConfiguration":{"f:a.b":{}},"f:podTemplate":{}}}`)}},
		{Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1",
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:annotations":{"f:kubectl.kubernetes.io/last-applied-configuration":{}}},` +
				`"f:spec":{"f:image":{},"f:flinkConfiguration":{"f:a.b":{},"f:c":{}},"f:podTemplate":{"f:spec":{"f:containers":{}}},"f:job":{"f:savepointTriggerNonce":{}}}}`)}},
		{Manager: "helm", Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1",
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:image":{}}}`)}},
		{Manager: "flink-kubernetes-operator", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", FieldsType: "FieldsV1",
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:lifecycleState":{}}}`)}},
	})
	patch, err := releasePatch(obj)
	if err != nil || patch == nil {
		t.Fatalf("patch %s, %v", patch, err)
	}
	var ops []struct {
		Op    string          `json:"op"`
		Path  string          `json:"path"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(patch, &ops); err != nil {
		t.Fatal(err)
	}
	if ops[0].Op != "test" || string(ops[0].Value) != `"42"` {
		t.Fatalf("first op %+v, want a resourceVersion test", ops[0])
	}
	var entries []metav1.ManagedFieldsEntry
	if err := json.Unmarshal(ops[1].Value, &entries); err != nil {
		t.Fatal(err)
	}
	byManager := map[string]string{}
	for _, e := range entries {
		byManager[e.Manager] = string(e.FieldsV1.Raw)
	}
	if _, ok := byManager["helm"]; ok {
		t.Errorf("helm owned only spec.image, which the provider took: its entry should be gone: %v", byManager)
	}
	kubectl := byManager["kubectl-client-side-apply"]
	for _, gone := range []string{"f:image", "f:a.b", "f:podTemplate"} {
		if strings.Contains(kubectl, gone) {
			t.Errorf("kubectl still owns %s: %s", gone, kubectl)
		}
	}
	for _, kept := range []string{"f:c", "f:savepointTriggerNonce", "last-applied-configuration"} {
		if !strings.Contains(kubectl, kept) {
			t.Errorf("kubectl lost %s, which the provider does not write: %s", kept, kubectl)
		}
	}
	if byManager["flink-kubernetes-operator"] != `{"f:status":{"f:lifecycleState":{}}}` {
		t.Errorf("the status entry changed: %v", byManager)
	}
}
