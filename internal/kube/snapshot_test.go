package kube

import (
	"strings"
	"testing"
)

func TestSnapshotObject(t *testing.T) {
	sp := SnapshotSpec{DeploymentName: "orders", Type: "savepoint", FormatType: "CANONICAL", BackoffLimit: 1}.Object("ns", "", "orders-")
	if sp.GetGenerateName() != "orders-" || sp.GetName() != "" || sp.GetNamespace() != "ns" {
		t.Fatalf("metadata %v", sp.Object["metadata"])
	}
	spec := sp.Object["spec"].(map[string]any)
	save := spec["savepoint"].(map[string]any)
	// disposeOnDelete false must be written explicitly: the operator defaults it to true.
	if v, ok := save["disposeOnDelete"]; !ok || v != false {
		t.Fatalf("disposeOnDelete not written as false: %v", save)
	}
	if _, ok := save["path"]; ok {
		t.Fatal("no path when none is given")
	}
	if spec["jobReference"].(map[string]any)["kind"] != "FlinkDeployment" || spec["backoffLimit"] != int64(1) {
		t.Fatalf("spec %v", spec)
	}
	cp := SnapshotSpec{DeploymentName: "orders", Type: "checkpoint"}.Object("ns", "", "x-")
	if _, ok := cp.Object["spec"].(map[string]any)["savepoint"]; ok {
		t.Fatal("a checkpoint snapshot has no savepoint section")
	}
}

func TestOperatorMessage(t *testing.T) {
	js := `{"type":"org.apache.flink.kubernetes.operator.exception.ReconciliationException","message":"Savepoint failed","throwableList":[{"type":"java.util.concurrent.TimeoutException","message":"Checkpoint expired before completing"}]}`
	got := OperatorMessage(js)
	for _, want := range []string{"Savepoint failed", "caused by Checkpoint expired before completing", "ReconciliationException"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	if OperatorMessage("plain text") != "plain text" {
		t.Error("non-JSON error not passed through")
	}
}
