package kube

import (
	"encoding/json"
	"testing"
)

func TestServiceAccountObject(t *testing.T) {
	u := ServiceAccountObject("data-processing", "flink-orders", map[string]string{"team": "data"},
		map[string]string{"eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/orders"})
	got, err := json.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"annotations":{"eks.amazonaws.com/role-arn":"arn:aws:iam::123456789012:role/orders"},` +
		`"labels":{"team":"data"},"name":"flink-orders","namespace":"data-processing"}}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// No labels or annotations: the fields are left out, so applying
	// releases the keys this manager applied before.
	u = ServiceAccountObject("ns", "sa", nil, map[string]string{})
	if _, ok := u.Object["metadata"].(map[string]any)["labels"]; ok {
		t.Error("empty labels must be left out")
	}
	if _, ok := u.Object["metadata"].(map[string]any)["annotations"]; ok {
		t.Error("empty annotations must be left out")
	}
}

func TestRoleBindingObject(t *testing.T) {
	u := RoleBindingObject("data-processing", "flink-orders", map[string]string{"team": "data"}, "ClusterRole", "flink-operator")
	got, err := json.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"labels":{"team":"data"},"name":"flink-orders","namespace":"data-processing"},` +
		`"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"flink-operator"},` +
		`"subjects":[{"kind":"ServiceAccount","name":"flink-orders","namespace":"data-processing"}]}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if kind, name := RoleRef(u); kind != "ClusterRole" || name != "flink-operator" {
		t.Errorf("RoleRef = %s %s", kind, name)
	}
}
