package provider

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// operatorFinalizer is the finalizer the fake operator puts on snapshots,
// as the real one does, so that deletes must wait for it.
const operatorFinalizer = "flinkstate.test/fake-operator"

// fakeOperator plays the Flink operator's part on the test bed, where no
// operator runs: for each new FlinkStateSnapshot in its namespace it adds a
// finalizer and writes the status that decide returns (nil: never answer),
// through the status subresource as the operator does. When a snapshot is
// deleted it removes the finalizer after finalizerDelay.
type fakeOperator struct {
	t              *testing.T
	ns             string
	decide         func(obj *unstructured.Unstructured) map[string]any
	finalizerDelay time.Duration

	mu      sync.Mutex
	handled map[string]bool
}

func startFakeOperator(t *testing.T, ns string, decide func(obj *unstructured.Unstructured) map[string]any) *fakeOperator {
	op := &fakeOperator{t: t, ns: ns, decide: decide, finalizerDelay: 500 * time.Millisecond, handled: map[string]bool{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			op.reconcile(ctx)
			select {
			case <-ctx.Done():
			case <-time.After(150 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return op
}

func (op *fakeOperator) reconcile(ctx context.Context) {
	r := testKube(op.t).Dynamic.Resource(kube.FlinkStateSnapshotGVR).Namespace(op.ns)
	list, err := r.List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for i := range list.Items {
		obj := &list.Items[i]
		name := obj.GetName()
		if obj.GetDeletionTimestamp() != nil {
			if time.Since(obj.GetDeletionTimestamp().Time) >= op.finalizerDelay {
				_, _ = r.Patch(ctx, name, ktypes.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
			}
			continue
		}
		op.mu.Lock()
		seen := op.handled[name]
		op.handled[name] = true
		op.mu.Unlock()
		if seen {
			continue
		}
		fin, _ := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": []string{operatorFinalizer}}})
		updated, err := r.Patch(ctx, name, ktypes.MergePatchType, fin, metav1.PatchOptions{})
		if err != nil {
			op.t.Logf("fake operator: adding finalizer to %s: %v", name, err)
			continue
		}
		status := op.decide(updated)
		if status == nil {
			continue
		}
		updated.Object["status"] = status
		if _, err := r.UpdateStatus(ctx, updated, metav1.UpdateOptions{}); err != nil {
			op.t.Logf("fake operator: writing status of %s: %v", name, err)
		}
	}
}

// completeAt answers COMPLETED with a savepoint path under dir.
func completeAt(dir string) func(*unstructured.Unstructured) map[string]any {
	return func(obj *unstructured.Unstructured) map[string]any {
		return map[string]any{
			"state":            kube.SnapshotCompleted,
			"path":             dir + "/savepoint-" + obj.GetName(),
			"resultTimestamp":  time.Now().UTC().Format(time.RFC3339Nano),
			"triggerTimestamp": time.Now().UTC().Format(time.RFC3339Nano),
			"triggerId":        "trigger-" + obj.GetName(),
			"failures":         int64(0),
		}
	}
}

// operatorError is status.error as the operator serialises an exception.
const operatorError = `{"type":"org.apache.flink.kubernetes.operator.exception.ReconciliationException","message":"Savepoint failed for job 9f3c2a8d","additionalMetadata":{},"throwableList":[{"type":"java.util.concurrent.TimeoutException","message":"Checkpoint expired before completing","additionalMetadata":{}}]}`

func endAs(state string) func(*unstructured.Unstructured) map[string]any {
	return func(*unstructured.Unstructured) map[string]any {
		return map[string]any{"state": state, "error": operatorError, "failures": int64(2),
			"resultTimestamp": time.Now().UTC().Format(time.RFC3339Nano)}
	}
}

// startFakeDeploymentOperator plays the operator for FlinkDeployments: it
// adds its finalizer, a label and an annotation (which must never show as
// drift), and for each new generation writes the status decide returns
// (nil: never answer). Deleted deployments lose the finalizer after a delay.
func startFakeDeploymentOperator(t *testing.T, ns string, decide func(obj *unstructured.Unstructured) map[string]any) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r := testKube(t).Dynamic.Resource(kube.FlinkDeploymentGVR).Namespace(ns)
		for ctx.Err() == nil {
			list, err := r.List(ctx, metav1.ListOptions{})
			if err == nil {
				for i := range list.Items {
					obj := &list.Items[i]
					name := obj.GetName()
					if ts := obj.GetDeletionTimestamp(); ts != nil {
						if time.Since(ts.Time) > 500*time.Millisecond {
							_, _ = r.Patch(ctx, name, ktypes.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
						}
						continue
					}
					observed, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
					if observed == obj.GetGeneration() {
						continue
					}
					meta := []byte(`{"metadata":{"finalizers":["flinkdeployments.flink.apache.org/finalizer"],` +
						`"labels":{"app.kubernetes.io/managed-by":"flink-kubernetes-operator"},` +
						`"annotations":{"flink.apache.org/last-reconciled":"` + time.Now().UTC().Format(time.RFC3339) + `"}}}`)
					updated, err := r.Patch(ctx, name, ktypes.MergePatchType, meta, metav1.PatchOptions{FieldManager: "flink-kubernetes-operator"})
					if err != nil {
						continue
					}
					status := decide(updated)
					if status == nil {
						status = map[string]any{}
					}
					status["observedGeneration"] = updated.GetGeneration()
					updated.Object["status"] = status
					_, _ = r.UpdateStatus(ctx, updated, metav1.UpdateOptions{FieldManager: "flink-kubernetes-operator"})
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(150 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}

func deploymentRunning(obj *unstructured.Unstructured) map[string]any {
	return map[string]any{
		"lifecycleState":             "STABLE",
		"jobManagerDeploymentStatus": "READY",
		"jobStatus":                  map[string]any{"state": "RUNNING", "jobId": "9f3c2a8d7e6b5a4c3d2e1f0a9b8c7d6e", "jobName": obj.GetName()},
	}
}
