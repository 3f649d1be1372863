package kube

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
)

func TestClassifyWait(t *testing.T) {
	timeout := fmt.Errorf("%w: ns/x after 1m0s waiting for deployed", ErrDeploymentTimeout)
	// No FlinkDeployment in the cluster: a read fails, which counts as "it
	// ran" (nothing is deleted on a guess).
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{FlinkDeploymentGVR: "FlinkDeploymentList"})
	// One that the operator never deployed (no lastReconciledSpec).
	fresh := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkDeployment",
		"metadata": map[string]any{"namespace": "ns", "name": "fresh"}}}
	if _, err := dyn.Resource(FlinkDeploymentGVR).Namespace("ns").Create(context.Background(), fresh, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		obj      string
		st       DeploymentStatus
		err      error
		first    bool
		kind     WaitKind
		timedOut bool
	}{
		"done":                            {err: nil, kind: WaitDone},
		"timeout":                         {err: timeout, kind: WaitNotReady, timedOut: true},
		"interrupted":                     {err: ErrInterrupted, kind: WaitNotReady},
		"rejected":                        {err: fmt.Errorf("%w: bad", ErrSpecRejected), kind: WaitRejected},
		"rejected on create, unread":      {err: fmt.Errorf("%w: bad", ErrSpecRejected), first: true, kind: WaitRejected},
		"upgrade failed":                  {err: fmt.Errorf("%w: no", ErrUpgradeFailed), kind: WaitUpgradeFailed},
		"upgradeable after timeout":       {err: waitingErr(timeout, true), kind: WaitUpgradeable, timedOut: true},
		"upgradeable, interrupted":        {err: waitingErr(ErrInterrupted, true), kind: WaitUpgradeable},
		"job failed on create":            {st: DeploymentStatus{Error: "boom"}, err: fmt.Errorf("job failed"), first: true, kind: WaitNotReady},
		"refused before it deployed":      {obj: "fresh", st: DeploymentStatus{Error: "bad"}, err: fmt.Errorf("%w: bad", ErrSpecRejected), first: true, kind: WaitNeverDeployed},
		"refused, never deployed, update": {obj: "fresh", st: DeploymentStatus{Error: "bad"}, err: fmt.Errorf("%w: bad", ErrSpecRejected), kind: WaitRejected},
	} {
		obj := c.obj
		if obj == "" {
			obj = "x"
		}
		o := ClassifyWait(context.Background(), dyn, "ns", obj, c.st, c.err, c.first)
		if o.Kind != c.kind || o.TimedOut != c.timedOut {
			t.Errorf("%s: ClassifyWait() = %+v, want kind %d, timed out %v", name, o, c.kind, c.timedOut)
		}
	}
}
