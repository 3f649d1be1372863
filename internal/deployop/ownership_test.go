package deployop

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	ktypes "k8s.io/apimachinery/pkg/types"
	dynfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// takeoverEnv answers the takeover's server-side applies with answer (the
// object after the patch, or an error) and records the applied bodies.
func takeoverEnv(t *testing.T, answer func(body map[string]any) (*unstructured.Unstructured, error)) (Env, *[]map[string]any) {
	env, dyn := fakeEnv()
	var bodies []map[string]any
	dyn.(*dynfake.FakeDynamicClient).PrependReactor("patch", "flinkdeployments", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.PatchAction)
		if p.GetPatchType() != ktypes.ApplyPatchType {
			return false, nil, nil
		}
		var body map[string]any
		if err := json.Unmarshal(p.GetPatch(), &body); err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, body)
		out, err := answer(body)
		return true, out, err
	})
	return env, &bodies
}

// liveAdopted is an imported object whose flinkConfiguration is nested
// (the shape a takeover keeps: flinkdeploy.ShapeConfiguration).
func liveAdopted() *unstructured.Unstructured {
	live := deployment("adopted", nil)
	live.Object["spec"] = map[string]any{"image": "flink:2.2.1", "flinkConfiguration": map[string]any{"a": map[string]any{"b": "1"}}}
	return live
}

// A takeover that leaves the spec as it is applies the object as the state
// read it, with the live configuration's shape and the upgrade savepoint's
// annotation, and returns the object afterwards.
func TestTakeOwnershipTaken(t *testing.T) {
	live := liveAdopted()
	env, bodies := takeoverEnv(t, func(map[string]any) (*unstructured.Unstructured, error) {
		// The server keeps the spec as it is (the dry run's check passes).
		return live.DeepCopy(), nil
	})
	spec := flinkdeploy.Spec{Image: "flink:2.2.1", FlinkConfiguration: map[string]string{"a.b": "1"}}
	got := TakeOwnership(context.Background(), env, "ns", "adopted", spec, "s3://b/sp", live)
	if !got.Taken || got.Live == nil || got.Report != (kube.Report{}) {
		t.Fatalf("%+v", got)
	}
	if len(*bodies) != 2 {
		t.Fatalf("%d applies, want the dry run and the apply", len(*bodies))
	}
	body := (*bodies)[1]
	conf, _, _ := unstructured.NestedMap(body, "spec", "flinkConfiguration")
	if _, nested := conf["a"].(map[string]any); !nested {
		t.Errorf("flinkConfiguration %v, want the live object's nested shape", conf)
	}
	if a, _, _ := unstructured.NestedString(body, "metadata", "annotations", kube.UpgradeSavepointAnnotation); a != "s3://b/sp" {
		t.Errorf("upgrade savepoint annotation %q", a)
	}
}

// A dry run that would change the spec takes nothing over: a warning, and
// the update goes on from the live object.
func TestTakeOwnershipWouldChange(t *testing.T) {
	live := liveAdopted()
	env, bodies := takeoverEnv(t, func(map[string]any) (*unstructured.Unstructured, error) {
		out := live.DeepCopy()
		out.Object["spec"] = map[string]any{"image": "other"}
		return out, nil
	})
	got := TakeOwnership(context.Background(), env, "ns", "adopted", flinkdeploy.Spec{Image: "flink:2.2.1"}, "", live)
	if got.Taken || got.Live != live || got.Report.Warning == "" {
		t.Fatalf("%+v", got)
	}
	if len(*bodies) != 1 {
		t.Errorf("%d applies after a dry run that changes the spec, want only the dry run", len(*bodies))
	}
}

// Any other failure is a problem: no object (the update stops).
func TestTakeOwnershipFailed(t *testing.T) {
	env, _ := takeoverEnv(t, func(map[string]any) (*unstructured.Unstructured, error) {
		return nil, errors.New("connection refused")
	})
	got := TakeOwnership(context.Background(), env, "ns", "adopted", flinkdeploy.Spec{Image: "flink:2.2.1"}, "", liveAdopted())
	if got.Taken || got.Live != nil || got.Report.Verb != "Taking over" {
		t.Fatalf("%+v", got)
	}
}

// A refresh reads the status and the provider's annotations; a deleted
// object is gone (not a problem).
func TestObserve(t *testing.T) {
	live := deployment("seen", map[string]any{"lifecycleState": "STABLE", "jobStatus": map[string]any{"state": "RUNNING", "jobId": "j3"}})
	live.SetAnnotations(map[string]string{kube.UpgradeSavepointAnnotation: "s3://b/sp-2", kube.FinalSavepointFailedAnnotation: "timed out"})
	env, _ := fakeEnv(live)
	o := Observe(context.Background(), env, "ns", "seen")
	if o.Live == nil || o.Gone || o.Status.JobID != "j3" || o.Status.LifecycleState != "STABLE" ||
		o.UpgradeSavepoint != "s3://b/sp-2" || o.FinalFailed != "timed out" {
		t.Fatalf("%+v", o)
	}
	if o = Observe(context.Background(), env, "ns", "deleted"); !o.Gone || o.Live != nil || o.Report != (Report{}) {
		t.Errorf("a deleted object: %+v", o)
	}
}

// An update rewrites only the object this resource owns: one of that name
// with another UID is left alone, and the report names it.
func TestStillOurs(t *testing.T) {
	live := deployment("owned", nil)
	live.SetUID("u-1")
	env, _ := fakeEnv(live)
	if got, _, ok := StillOurs(context.Background(), env, "ns", "owned", "u-1"); !ok || got == nil {
		t.Fatalf("the owned object: %v, %v", got, ok)
	}
	got, rep, ok := StillOurs(context.Background(), env, "ns", "owned", "u-0")
	if ok || got != nil || rep.Object != "FlinkDeployment ns/owned" || rep.Verb != "Updating" {
		t.Errorf("another object of that name: %v, %+v, %v", got, rep, ok)
	}
}
