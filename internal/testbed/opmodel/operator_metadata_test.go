package opmodel

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
)

// The model's _metadata is read by the provider's reader of real Flink
// _metadata, and references exactly the files the model writes.
func TestModelMetadata_readAsFlinks(t *testing.T) {
	job := "s3://b/flink/checkpoints/0123456789abcdef0123456789abcdef"
	meta, err := checkpointMetadata(7, jobParallelism{1, 128}, modelFile{job + "/taskowned/t1", 22}, modelFile{job + "/chk-7/e1", 22}, modelFile{job + "/shared/s1", 22})
	if err != nil {
		t.Fatal(err)
	}
	m, err := checkpoint.ReadMetadata(bytes.NewReader(meta), job+"/chk-7/_metadata")
	if err != nil {
		t.Fatalf("the model's checkpoint _metadata: %v", err)
	}
	if want := []string{job + "/chk-7/e1", job + "/shared/s1", job + "/taskowned/t1"}; !reflect.DeepEqual(m.FileURIs(), want) {
		t.Errorf("checkpoint references %v, want %v", m.FileURIs(), want)
	}
	if m.Version != 6 || m.CheckpointID != 7 || m.Properties == nil || m.Properties.IsSavepoint() {
		t.Errorf("checkpoint: version %d, ID %d, properties %+v", m.Version, m.CheckpointID, m.Properties)
	}
	for _, f := range m.Files {
		if f.URI == job+"/shared/s1" && f.Kind != checkpoint.FileShared {
			t.Errorf("the shared file is read as %s", f.Kind)
		}
	}

	sp := "s3://b/flink/savepoints/savepoint-012345-0a1b2c3d4e5f"
	meta, err = savepointMetadata(3, jobParallelism{1, 128}, "f1", 26)
	if err != nil {
		t.Fatal(err)
	}
	if m, err = checkpoint.ReadMetadata(bytes.NewReader(meta), sp); err != nil {
		t.Fatalf("the model's savepoint _metadata: %v", err)
	}
	if want := []string{sp + "/f1"}; !reflect.DeepEqual(m.FileURIs(), want) {
		t.Errorf("savepoint references %v, want %v", m.FileURIs(), want)
	}
	if !m.Properties.IsSavepoint() || m.Properties.SavepointFormat != "CANONICAL" {
		t.Errorf("savepoint properties %+v", m.Properties)
	}
}

func TestModelMetadata_refusesNonASCII(t *testing.T) {
	if _, err := savepointMetadata(1, jobParallelism{1, 128}, "fé", 1); err == nil {
		t.Fatal("a non-ASCII name was written as if DataOutputStream.writeUTF wrote it so")
	}
}

// The model's operator runs with the spec's parallelism, and the max
// parallelism Flink gives it: pipeline.max-parallelism, else
// KeyGroupRangeAssignment.computeDefaultMaxParallelism.
func TestSpecParallelism(t *testing.T) {
	for _, c := range []struct {
		spec map[string]any
		want jobParallelism
	}{
		{map[string]any{"job": map[string]any{"parallelism": int64(2)}}, jobParallelism{2, 128}},
		{map[string]any{"job": map[string]any{"parallelism": int64(100)}}, jobParallelism{100, 256}},
		{map[string]any{"job": map[string]any{"parallelism": int64(2)}, "flinkConfiguration": map[string]any{"pipeline.max-parallelism": "8"}}, jobParallelism{2, 8}},
		{map[string]any{}, jobParallelism{1, 128}},
	} {
		if got := specParallelism(c.spec); got != c.want {
			t.Errorf("specParallelism(%v) = %v, want %v", c.spec, got, c.want)
		}
	}
	if g := (jobParallelism{2, 8}).keyGroups(); g != 4 {
		t.Errorf("subtask 0 of 2 with 8 key groups holds %d, want 4", g)
	}
}
