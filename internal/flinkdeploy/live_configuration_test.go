package flinkdeploy

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestLiveConfiguration_copyOfTheObjects(t *testing.T) {
	if got := LiveConfiguration(nil); got != nil {
		t.Fatalf("no object: got %v, want nil", got)
	}
	bare := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
	if got := LiveConfiguration(bare); got != nil {
		t.Fatalf("no flinkConfiguration: got %v, want nil", got)
	}
	live := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"flinkConfiguration": map[string]any{"taskmanager.numberOfTaskSlots": int64(2)},
	}}}
	got, ok := LiveConfiguration(live).(map[string]any)
	if !ok || got["taskmanager.numberOfTaskSlots"] != int64(2) {
		t.Fatalf("got %#v, want the object's map with its int64 value", got)
	}
	// A copy: what is rendered from it never changes the live object.
	got["taskmanager.numberOfTaskSlots"] = "3"
	again := live.Object["spec"].(map[string]any)["flinkConfiguration"].(map[string]any)
	if again["taskmanager.numberOfTaskSlots"] != int64(2) {
		t.Fatalf("the live object changed: %#v", again)
	}
}
