package provider

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// The test bed runs no Flink operator; testbed.FakeOperator plays its part
// (finalizers, and status written through the status subresource).

func runFakeOperator(t *testing.T, op *testbed.FakeOperator) {
	op.Logf = t.Logf
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); op.Run(ctx, testKube(t).Dynamic, 150*time.Millisecond) }()
	t.Cleanup(func() { cancel(); <-done })
}

// startFakeOperator answers FlinkStateSnapshots in ns with decide (nil: never).
func startFakeOperator(t *testing.T, ns string, decide func(*unstructured.Unstructured) map[string]any) {
	runFakeOperator(t, &testbed.FakeOperator{Namespace: ns, Snapshot: decide})
}

// startFakeDeploymentOperator answers FlinkDeployments in ns with decide.
func startFakeDeploymentOperator(t *testing.T, ns string, decide func(*unstructured.Unstructured) map[string]any) {
	runFakeOperator(t, &testbed.FakeOperator{Namespace: ns, Deployment: decide})
}

var (
	completeAt        = testbed.CompleteSnapshotAt
	deploymentRunning = testbed.RunningDeployment
)

// operatorError is status.error as the operator serialises an exception.
const operatorError = `{"type":"org.apache.flink.kubernetes.operator.exception.ReconciliationException","message":"Savepoint failed for job 9f3c2a8d","additionalMetadata":{},"throwableList":[{"type":"java.util.concurrent.TimeoutException","message":"Checkpoint expired before completing","additionalMetadata":{}}]}`

func endAs(state string) func(*unstructured.Unstructured) map[string]any {
	return func(*unstructured.Unstructured) map[string]any {
		return map[string]any{"state": state, "error": operatorError, "failures": int64(2),
			"resultTimestamp": time.Now().UTC().Format(time.RFC3339Nano)}
	}
}
