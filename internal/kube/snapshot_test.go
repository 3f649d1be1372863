package kube

import (
	"errors"
	"strings"
	"testing"
	"time"
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

func TestPickNewest(t *testing.T) {
	at := func(s string) time.Time { tt, _ := time.Parse(time.RFC3339, s); return tt }
	meta := map[string]time.Time{"s3://b/sp/old": at("2026-01-01T00:00:00Z")}
	metaTime := func(p string) (time.Time, error) {
		if tt, ok := meta[p]; ok {
			return tt, nil
		}
		return time.Time{}, errors.New("no such key")
	}
	taken := SavepointInfo{Name: "taken", Path: "s3://b/sp/new", TriggerTimestamp: "2026-06-01T00:00:00Z", ResultTimestamp: "2026-06-01T00:00:05Z", Type: "savepoint"}
	recorded := SavepointInfo{Name: "recorded", Path: "s3://b/sp/old", TriggerTimestamp: "2026-07-01T00:00:00Z", ResultTimestamp: "2026-07-01T00:00:00Z", Type: "savepoint", AlreadyExists: true}
	got, err := PickNewest([]SavepointInfo{recorded, taken}, metaTime)
	if err != nil || got == nil || got.Name != "taken" || got.Rule != RuleTriggered {
		t.Fatalf("got %+v, %v; want the savepoint taken last, not the one recorded last", got, err)
	}
	meta["s3://b/sp/old"] = at("2026-08-01T00:00:00Z")
	if got, _ := PickNewest([]SavepointInfo{recorded, taken}, metaTime); got == nil || got.Name != "recorded" || got.Rule != RuleRecorded {
		t.Fatalf("got %+v, want the recorded savepoint, written after the other", got)
	}
	lost := recorded
	lost.Path = "s3://b/sp/gone"
	if _, err := PickNewest([]SavepointInfo{lost, taken}, metaTime); err == nil || !strings.Contains(err.Error(), "recorded") {
		t.Fatalf("got %v, want an error naming the snapshot that cannot be dated", err)
	}
	if got, err := PickNewest(nil, metaTime); got != nil || err != nil {
		t.Fatalf("none: got %+v, %v", got, err)
	}
}
