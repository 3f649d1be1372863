package kube

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
)

func TestTransient(t *testing.T) {
	gr := schema.GroupResource{Group: "flink.apache.org", Resource: "flinkdeployments"}
	refused := &url.Error{Op: "Get", URL: "https://127.0.0.1:6443/apis", Err: &net.OpError{Op: "dial", Err: errors.New("connect: connection refused")}}
	for name, tc := range map[string]struct {
		err  error
		want bool
	}{
		"connection refused":  {refused, true},
		"wrapped refused":     {fmt.Errorf("reading: %w", refused), true},
		"503":                 {apierrors.NewServiceUnavailable("restarting"), true},
		"500":                 {apierrors.NewInternalError(errors.New("etcd")), true},
		"429":                 {apierrors.NewTooManyRequests("slow down", 1), true},
		"server timeout":      {apierrors.NewServerTimeout(gr, "get", 1), true},
		"not found":           {apierrors.NewNotFound(gr, "orders"), false},
		"forbidden":           {apierrors.NewForbidden(gr, "orders", errors.New("rbac")), false},
		"unauthorized":        {apierrors.NewUnauthorized("token"), false},
		"cancelled by caller": {fmt.Errorf("get: %w", context.Canceled), false},
		"a FAILED deployment": {errors.New("FlinkDeployment ns/orders failed (lifecycle FAILED)"), false},
		"nil":                 {nil, false},
	} {
		if got := Transient(tc.err); got != tc.want {
			t.Errorf("%s: Transient = %v, want %v", name, got, tc.want)
		}
	}
}

func deploymentWithStatus(generation, observed int64, lifecycle, job string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkDeployment",
		"metadata": map[string]any{"name": "orders", "namespace": "ns", "generation": generation},
		"status":   map[string]any{"observedGeneration": observed, "lifecycleState": lifecycle, "jobStatus": map[string]any{"state": job}},
	}}
	return u
}

// fakeDynamic serves one FlinkDeployment whose reads fail with failWith for
// the first failures reads.
func fakeDynamic(obj *unstructured.Unstructured, failures int32, failWith error) *dynfake.FakeDynamicClient {
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{FlinkDeploymentGVR: "FlinkDeploymentList"}, obj)
	var n atomic.Int32
	dyn.PrependReactor("get", "flinkdeployments", func(k8stesting.Action) (bool, runtime.Object, error) {
		if n.Add(1) <= failures {
			return true, nil, failWith
		}
		return false, nil, nil
	})
	return dyn
}

func TestWaitDeployment_toleratesTransientReadFailures(t *testing.T) {
	refused := &url.Error{Op: "Get", URL: "https://127.0.0.1:6443", Err: errors.New("connect: connection refused")}
	dyn := fakeDynamic(deploymentWithStatus(1, 1, "STABLE", "RUNNING"), 3, refused)
	st, err := WaitDeployment(context.Background(), dyn, "ns", "orders", "running", time.Minute, time.Millisecond)
	if err != nil || st.JobState != "RUNNING" {
		t.Fatalf("three refused reads then RUNNING: %v, %+v", err, st)
	}
}

func TestWaitDeployment_timeoutNamesTheLastReadFailure(t *testing.T) {
	refused := &url.Error{Op: "Get", URL: "https://127.0.0.1:6443", Err: errors.New("connect: connection refused")}
	dyn := fakeDynamic(deploymentWithStatus(1, 1, "STABLE", "RUNNING"), 1<<30, refused)
	_, err := WaitDeployment(context.Background(), dyn, "ns", "orders", "running", 50*time.Millisecond, time.Millisecond)
	if !errors.Is(err, ErrDeploymentTimeout) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("got %v, want a timeout naming the refused read", err)
	}
}

func TestWaitDeployment_notFoundEndsTheWait(t *testing.T) {
	gone := apierrors.NewNotFound(schema.GroupResource{Group: "flink.apache.org", Resource: "flinkdeployments"}, "orders")
	dyn := fakeDynamic(deploymentWithStatus(1, 1, "STABLE", "RUNNING"), 1<<30, gone)
	_, err := WaitDeployment(context.Background(), dyn, "ns", "orders", "running", time.Minute, time.Millisecond)
	if !apierrors.IsNotFound(err) {
		t.Fatalf("got %v, want NotFound at once", err)
	}
}

func TestDeploymentReady(t *testing.T) {
	if _, current, ready, _ := DeploymentReady(deploymentWithStatus(2, 1, "STABLE", "RUNNING"), "running"); current || ready {
		t.Error("a status of the previous generation is not ready")
	}
	if _, _, ready, err := DeploymentReady(deploymentWithStatus(2, 2, "DEPLOYED", "RECONCILING"), "deployed"); !ready || err != nil {
		t.Errorf("DEPLOYED for deployed: ready %v err %v", ready, err)
	}
	if _, _, _, err := DeploymentReady(deploymentWithStatus(1, 1, "FAILED", ""), "deployed"); err == nil {
		t.Error("FAILED must be an error")
	}
}

// A suspend ends at lifecycleState SUSPENDED; a running job is not what a
// suspend waits for, and SUSPENDED is not "deployed".
func TestDeploymentReady_suspended(t *testing.T) {
	if _, _, ready, err := DeploymentReady(deploymentWithStatus(3, 3, "SUSPENDED", "FINISHED"), WaitSuspended); !ready || err != nil {
		t.Errorf("SUSPENDED for a suspend: ready %v err %v", ready, err)
	}
	if _, _, ready, _ := DeploymentReady(deploymentWithStatus(3, 3, "STABLE", "RUNNING"), WaitSuspended); ready {
		t.Error("a running job is not suspended")
	}
	if _, _, ready, _ := DeploymentReady(deploymentWithStatus(3, 3, "SUSPENDED", "FINISHED"), "deployed"); ready {
		t.Error("SUSPENDED is not deployed")
	}
}

func TestWaitDeployment_failedEndsTheWaitAtOnce(t *testing.T) {
	dyn := fakeDynamic(deploymentWithStatus(1, 1, "FAILED", ""), 0, nil)
	_, err := WaitDeployment(context.Background(), dyn, "ns", "orders", "running", time.Minute, time.Millisecond)
	if err == nil || errors.Is(err, ErrDeploymentTimeout) || !strings.Contains(err.Error(), "lifecycle FAILED") {
		t.Fatalf("got %v, want the FAILED error, not a timeout", err)
	}
}

// A spec change the operator refused (its exception in status.error, the
// generation not observed) times out naming the operator's message; it never
// ends the wait early, since the error may be the previous generation's.
func TestWaitDeployment_timeoutBeforeObservedNamesOperatorError(t *testing.T) {
	obj := deploymentWithStatus(2, 1, "FAILED", "RECONCILING")
	_ = unstructured.SetNestedField(obj.Object, `{"type":"org.apache.flink.kubernetes.operator.exception.UpgradeFailureException",`+
		`"message":"JobManager deployment is missing and HA metadata is not available to make stateful upgrades. Manual restore required."}`, "status", "error")
	dyn := fakeDynamic(obj, 0, nil)
	_, err := WaitDeployment(context.Background(), dyn, "ns", "orders", "running", 50*time.Millisecond, time.Millisecond)
	if !errors.Is(err, ErrDeploymentTimeout) || !strings.Contains(err.Error(), "has not observed generation 2") ||
		!strings.Contains(err.Error(), "Manual restore required.") {
		t.Fatalf("got %v, want a timeout naming the operator's error", err)
	}
}

// A restore waits for the job to run from its path: RUNNING from another
// path is not enough, and a failed job ends the wait with the operator's
// message.
func TestWaitRestored(t *testing.T) {
	running := deploymentWithStatus(2, 2, "DEPLOYED", "RUNNING")
	_ = unstructured.SetNestedField(running.Object, "s3://b/sp/savepoint-1", "status", "jobStatus", "upgradeSavepointPath")
	if _, err := WaitRestored(context.Background(), fakeDynamic(running, 0, nil), "ns", "orders", "s3://b/sp/savepoint-1/", time.Second, time.Millisecond); err != nil {
		t.Fatalf("running from the path: %v", err)
	}
	if _, err := WaitRestored(context.Background(), fakeDynamic(running, 0, nil), "ns", "orders", "s3://b/sp/savepoint-2", 30*time.Millisecond, time.Millisecond); !errors.Is(err, ErrDeploymentTimeout) ||
		!strings.Contains(err.Error(), "restored from s3://b/sp/savepoint-1") {
		t.Fatalf("running from another path: got %v, want a timeout naming the path it runs from", err)
	}
	deployed := deploymentWithStatus(2, 2, "DEPLOYED", "RECONCILING")
	if _, err := WaitRestored(context.Background(), fakeDynamic(deployed, 0, nil), "ns", "orders", "", 30*time.Millisecond, time.Millisecond); !errors.Is(err, ErrDeploymentTimeout) {
		t.Fatalf("DEPLOYED but not running: got %v, want a timeout", err)
	}
	failed := deploymentWithStatus(2, 2, "FAILED", "FAILED")
	_ = unstructured.SetNestedField(failed.Object, `{"type":"java.io.FileNotFoundException","message":"Cannot find checkpoint or savepoint file/directory"}`, "status", "error")
	if _, err := WaitRestored(context.Background(), fakeDynamic(failed, 0, nil), "ns", "orders", "s3://b/sp/x", time.Minute, time.Millisecond); err == nil ||
		errors.Is(err, ErrDeploymentTimeout) || !strings.Contains(err.Error(), "Cannot find checkpoint") {
		t.Fatalf("failed restore: got %v, want the operator's message at once", err)
	}
	// What the real operator 1.15.0 reports when Flink 2.2.1 cannot
	// restore from the path (TestDifferential_restoreFromMissingPath):
	// "Job Not Found" with the job RECONCILING, never FAILED. The wait ends
	// at once and says what it means.
	notFound := deploymentWithStatus(2, 2, "DEPLOYED", "RECONCILING")
	_ = unstructured.SetNestedField(notFound.Object, "s3://b/sp/x", "status", "jobStatus", "upgradeSavepointPath")
	_ = unstructured.SetNestedField(notFound.Object, JobNotFound, "status", "error")
	if _, err := WaitRestored(context.Background(), fakeDynamic(notFound, 0, nil), "ns", "orders", "s3://b/sp/x", time.Minute, time.Millisecond); err == nil ||
		errors.Is(err, ErrDeploymentTimeout) || !strings.Contains(err.Error(), "Job Not Found") ||
		!strings.Contains(err.Error(), "Flink could not start the job from it") || !strings.Contains(err.Error(), "JobManager's log") {
		t.Fatalf("a restore whose job Flink could not start: got %v, want at once what it means", err)
	}
}

// A spec the operator's validator refused on create is ErrSpecRejected,
// with the operator's message, although the operator records no
// observedGeneration for it (operator 1.15.0: FAILED, the
// ValidationException in status.error, nothing else; seen on the real
// operator, and so written by the model: TestRealOperator_rejectedCreate).
func TestDeploymentReady_specRejected(t *testing.T) {
	obj := deploymentWithStatus(1, 1, "FAILED", "")
	unstructured.RemoveNestedField(obj.Object, "status", "observedGeneration")
	unstructured.RemoveNestedField(obj.Object, "status", "jobStatus")
	_ = unstructured.SetNestedField(obj.Object, `{"type":"org.apache.flink.kubernetes.operator.exception.ValidationException","message":"Job parallelism must be larger than 0"}`, "status", "error")
	_, current, _, err := DeploymentReady(obj, "deployed")
	if current || !errors.Is(err, ErrSpecRejected) || !strings.Contains(err.Error(), "Job parallelism must be larger than 0") {
		t.Fatalf("got current=%v %v, want ErrSpecRejected with the operator's message", current, err)
	}
	// Once something was deployed, a refusal without the new generation
	// observed is not read from status.error alone (it may be an older
	// refusal): the wait reads the operator's events for it.
	_ = unstructured.SetNestedField(obj.Object, `{"spec":{}}`, "status", "reconciliationStatus", "lastReconciledSpec")
	if _, _, _, err := DeploymentReady(obj, "deployed"); err != nil {
		t.Fatalf("refusal of a deployed object from status alone: %v", err)
	}
	other := deploymentWithStatus(1, 1, "FAILED", "FAILED")
	_ = unstructured.SetNestedField(other.Object, `{"type":"java.io.FileNotFoundException","message":"no such savepoint"}`, "status", "error")
	if _, _, _, err := DeploymentReady(other, "deployed"); err == nil || errors.Is(err, ErrSpecRejected) {
		t.Fatalf("got %v, want a failure that is not a rejected spec", err)
	}
}

// A cancelled run (terraform's Ctrl-C cancels the request's context) is
// reported as interrupted, with how far the wait got: never as a timeout or
// an operator that does not answer.
func TestWait_interruptedIsNotATimeout(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := WaitDeployment(ctx, fakeDynamic(deploymentWithStatus(2, 2, "DEPLOYED", "RECONCILING"), 0, nil), "ns", "orders", "running", 10*time.Minute, time.Millisecond)
	if !errors.Is(err, ErrInterrupted) || errors.Is(err, ErrDeploymentTimeout) || !strings.Contains(err.Error(), "into the wait") ||
		strings.Contains(err.Error(), "10m0s") || strings.Contains(err.Error(), "operator running") {
		t.Fatalf("got %v, want an interruption that names neither the timeout nor the operator", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := WaitSnapshot(ctx, fakeSnapshotDynamic(t), "ns", "sp", 10*time.Minute, time.Millisecond); !errors.Is(err, ErrInterrupted) || errors.Is(err, ErrSnapshotTimeout) {
		t.Fatalf("snapshot wait: got %v, want ErrInterrupted", err)
	}
}

// fakeSnapshotDynamic serves one FlinkStateSnapshot "sp" in "ns" that is
// still IN_PROGRESS.
func fakeSnapshotDynamic(t *testing.T) *dynfake.FakeDynamicClient {
	t.Helper()
	obj := SnapshotSpec{DeploymentName: "orders", Type: "savepoint", FormatType: "CANONICAL"}.Object("ns", "sp", "")
	_ = unstructured.SetNestedField(obj.Object, SnapshotInProgress, "status", "state")
	return dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{FlinkStateSnapshotGVR: "FlinkStateSnapshotList"}, obj)
}

// An error the operator retries (a ReconciliationException while the
// lifecycle is not FAILED: the Java Operator SDK reschedules the
// reconciliation with backoff) is progress, not the wait's end; the same
// error once the operator marks the deployment FAILED ends it, and so does
// another kind of error (a DeploymentFailedException of the JobManager).
func TestDeploymentReady_retriedErrorIsProgress(t *testing.T) {
	retried := `{"type":"org.apache.flink.kubernetes.operator.exception.ReconciliationException","message":"java.net.SocketTimeoutException: timeout"}`
	obj := deploymentWithStatus(2, 2, "DEPLOYED", "RECONCILING")
	_ = unstructured.SetNestedField(obj.Object, retried, "status", "error")
	if _, current, ready, err := DeploymentReady(obj, "deployed"); err != nil || ready || !current {
		t.Fatalf("retried error: current=%v ready=%v err=%v, want a wait that goes on", current, ready, err)
	}
	failed := deploymentWithStatus(2, 2, "FAILED", "FAILED")
	_ = unstructured.SetNestedField(failed.Object, retried, "status", "error")
	_ = unstructured.SetNestedField(failed.Object, `{"spec":{},"resource_metadata":{}}`, "status", "reconciliationStatus", "lastReconciledSpec")
	if _, _, _, err := DeploymentReady(failed, "deployed"); err == nil || !strings.Contains(err.Error(), "SocketTimeoutException") {
		t.Fatalf("FAILED: got %v, want the operator's message", err)
	}
	// The moment of a retried first deployment when the operator has
	// cleared its lastReconciledSpec: FAILED, but still a retry.
	retrying := deploymentWithStatus(1, 1, "FAILED", "")
	_ = unstructured.SetNestedField(retrying.Object, retried, "status", "error")
	unstructured.RemoveNestedField(retrying.Object, "status", "reconciliationStatus", "lastReconciledSpec")
	if _, _, ready, err := DeploymentReady(retrying, "running"); err != nil || ready {
		t.Fatalf("retried first deployment between attempts: ready=%v err=%v, want a wait that goes on", ready, err)
	}
	other := deploymentWithStatus(2, 2, "DEPLOYED", "RECONCILING")
	_ = unstructured.SetNestedField(other.Object, `{"type":"org.apache.flink.kubernetes.operator.exception.DeploymentFailedException","message":"ImagePullBackOff"}`, "status", "error")
	if _, _, _, err := DeploymentReady(other, "deployed"); err == nil {
		t.Fatal("a DeploymentFailedException did not end the wait")
	}
	// The wait that ends on a retried error says what the operator reports.
	_, err := WaitDeployment(context.Background(), fakeDynamic(obj, 0, nil), "ns", "orders", "deployed", 30*time.Millisecond, time.Millisecond)
	if !errors.Is(err, ErrDeploymentTimeout) || !strings.Contains(err.Error(), "retries the reconciliation") || !strings.Contains(err.Error(), "SocketTimeoutException") {
		t.Fatalf("got %v, want a timeout naming the retried error", err)
	}
}
