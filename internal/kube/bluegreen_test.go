package kube

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
)

func blueGreenWithStatus(state, job, reconciled string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkBlueGreenDeployment",
		"metadata": map[string]any{"name": "orders", "namespace": "ns"},
		"status": map[string]any{"blueGreenState": state, "jobStatus": map[string]any{"state": job},
			"lastReconciledTimestamp": reconciled},
	}}
}

func blueGreenClient(objs ...runtime.Object) *dynfake.FakeDynamicClient {
	return dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		FlinkBlueGreenDeploymentGVR: "FlinkBlueGreenDeploymentList", FlinkDeploymentGVR: "FlinkDeploymentList",
	}, objs...)
}

// A suspend ends in ACTIVE_x with the job SUSPENDED
// (finalizeSuspendedDeployment): the wait for it (Job SUSPENDED) ends there,
// where a wait for the job RUNNING runs out and says which job state it saw.
func TestBlueGreenWait_suspendEndsWithTheJobSuspended(t *testing.T) {
	dyn := blueGreenClient(blueGreenWithStatus("ACTIVE_BLUE", "SUSPENDED", "2026-12-04T05:00:01Z"))
	w := BlueGreenWait{Namespace: "ns", Name: "orders", Target: "ACTIVE_BLUE", Since: "2026-12-04T05:00:00Z", Job: "SUSPENDED",
		Timeout: time.Minute, Every: time.Millisecond}
	if _, err := w.Run(context.Background(), dyn); err != nil {
		t.Fatalf("suspend wait: %v", err)
	}
	w.Job, w.Timeout = "", 10*time.Millisecond
	if _, err := w.Run(context.Background(), dyn); err == nil || !strings.Contains(err.Error(), "waiting for ACTIVE_BLUE with the job RUNNING: the state is ACTIVE_BLUE, the job SUSPENDED") {
		t.Fatalf("running wait on a suspended job: %v", err)
	}
}

// A wait that ran out in TRANSITIONING_TO_x says what the operator waits
// for: the new child ready, until the abort time (the caller says which
// child keeps running).
func TestBlueGreenWait_waitingSaysWhatTheOperatorWaitsFor(t *testing.T) {
	child := func(name, lifecycle, job string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkDeployment",
			"metadata": map[string]any{"name": name, "namespace": "ns"},
			"status":   map[string]any{"lifecycleState": lifecycle, "jobStatus": map[string]any{"state": job}},
		}}
	}
	dyn := blueGreenClient(child("orders-blue", "STABLE", "RUNNING"), child("orders-green", "DEPLOYED", "RECONCILING"))
	w := BlueGreenWait{Namespace: "ns", Name: "orders", Target: "ACTIVE_GREEN"}
	st := BlueGreenStatus{State: "TRANSITIONING_TO_GREEN", JobState: "RECONCILING", AbortAt: "2026-12-04T05:10:00Z"}
	got := w.Waiting(context.Background(), dyn, st)
	want := "the operator waits for orders-green to be STABLE with its job RUNNING (it is DEPLOYED, its job RECONCILING) until " +
		"2026-12-04T05:10:00Z, when it aborts the transition (abort_grace_period)"
	if got != want {
		t.Errorf("Waiting:\n got  %q\n want %q", got, want)
	}
	if got := w.Waiting(context.Background(), dyn, BlueGreenStatus{State: "SAVEPOINTING_BLUE", JobState: "RUNNING"}); !strings.Contains(got, "the savepoint of orders-blue's job") {
		t.Errorf("Waiting in SAVEPOINTING_BLUE: %q", got)
	}
}

// A destroy waits while both children exist in a transition, and not when
// one child runs alone in a TRANSITIONING_TO_ state (a first deployment, an
// in-place patch).
func TestWaitTransitionEnds(t *testing.T) {
	child := func(name string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkDeployment",
			"metadata": map[string]any{"name": name, "namespace": "ns"}}}
	}
	ctx := context.Background()
	alone := blueGreenClient(blueGreenWithStatus("TRANSITIONING_TO_BLUE", "RECONCILING", ""), child("orders-blue"))
	if _, err := WaitTransitionEnds(ctx, alone, "ns", "orders", time.Minute, time.Millisecond); err != nil {
		t.Errorf("one child: %v", err)
	}
	both := blueGreenClient(blueGreenWithStatus("TRANSITIONING_TO_GREEN", "RECONCILING", ""), child("orders-blue"), child("orders-green"))
	if _, err := WaitTransitionEnds(ctx, both, "ns", "orders", 10*time.Millisecond, time.Millisecond); err == nil ||
		!strings.Contains(err.Error(), "the transition is still under way: the state is TRANSITIONING_TO_GREEN") {
		t.Errorf("both children: %v", err)
	}
	active := blueGreenClient(blueGreenWithStatus("ACTIVE_GREEN", "RUNNING", ""), child("orders-blue"), child("orders-green"))
	if _, err := WaitTransitionEnds(ctx, active, "ns", "orders", time.Minute, time.Millisecond); err != nil {
		t.Errorf("ACTIVE_GREEN with the old child not deleted yet: %v", err)
	}
	// A new child that cannot be deployed never becomes ready: the old one
	// stays until the abort, and the wait does not wait for it.
	failed := child("orders-green")
	failed.Object["status"] = map[string]any{"jobManagerDeploymentStatus": "ERROR",
		"error": `{"type":"org.apache.flink.kubernetes.operator.exception.DeploymentFailedException","message":"Back-off pulling image"}`}
	stuck := blueGreenClient(blueGreenWithStatus("TRANSITIONING_TO_GREEN", "RECONCILING", ""), child("orders-blue"), failed)
	if _, err := WaitTransitionEnds(ctx, stuck, "ns", "orders", time.Minute, time.Millisecond); err != nil {
		t.Errorf("the new child failed to deploy: %v", err)
	}
}

// The savepoint the new child of a transition starts from is checked while
// the child's job does not run yet: a problem ends the wait at once with
// the path and what is wrong (ErrTransitionSavepoint), where the operator
// would abort only after abort_grace_period; once the job runs, or for a
// child started from the template's own path, nothing is checked.
func TestBlueGreenWait_transitionSavepointCheckedBeforeTheChildRuns(t *testing.T) {
	const sp = "s3://b/flink/orders/savepoints/savepoint-0a1b2c-0123456789ab"
	bg := bgObject("")
	bg.Object["status"] = map[string]any{"blueGreenState": "TRANSITIONING_TO_GREEN", "jobStatus": map[string]any{"state": "RUNNING"},
		"lastReconciledTimestamp": "2026-12-04T05:00:01Z"}
	green := childObject("orders-green", "bg-uid", sp, "")
	if err := unstructured.SetNestedField(green.Object, "RECONCILING", "status", "jobStatus", "state"); err != nil {
		t.Fatal(err)
	}
	var asked []string
	w := BlueGreenWait{Namespace: "ns", Name: "orders", Target: "ACTIVE_GREEN", Child: "orders-green", Since: "2026-12-04T05:00:00Z",
		Timeout: time.Minute, Every: time.Millisecond,
		CheckStart: func(_ context.Context, p string) string {
			asked = append(asked, p)
			return "1 of the 2 files its _metadata references are missing"
		}}
	_, err := w.Run(context.Background(), blueGreenClient(bg, green))
	if !errors.Is(err, ErrTransitionSavepoint) || !strings.Contains(err.Error(), "orders-green would start from "+sp) ||
		!strings.Contains(err.Error(), "1 of the 2 files") {
		t.Fatalf("incomplete transition savepoint: %v", err)
	}
	if len(asked) != 1 || asked[0] != sp {
		t.Errorf("CheckStart asked for %q, want once for %s", asked, sp)
	}

	// Its job running, the child is past the restore: the wait goes on to
	// its timeout without asking.
	running := green.DeepCopy()
	if err := unstructured.SetNestedField(running.Object, "RUNNING", "status", "jobStatus", "state"); err != nil {
		t.Fatal(err)
	}
	asked, w.Timeout = nil, 20*time.Millisecond
	if _, err := w.Run(context.Background(), blueGreenClient(bg, running)); errors.Is(err, ErrTransitionSavepoint) || len(asked) != 0 {
		t.Errorf("child running: err %v, asked %q", err, asked)
	}

	// Started from the template's own path (a first deployment or a
	// savepoint redeploy): not a transition savepoint.
	own := bgObject(sp)
	own.Object["status"] = bg.Object["status"]
	if _, err := w.Run(context.Background(), blueGreenClient(own, green)); errors.Is(err, ErrTransitionSavepoint) || len(asked) != 0 {
		t.Errorf("template's path: err %v, asked %q", err, asked)
	}
}

// A change written while the operator reports a failed transition (an
// abort: ACTIVE_BLUE, FAILING, its error) is not failed by that report: the
// operator keeps jobStatus and error through SAVEPOINTING_x (measured on the
// real operator 1.15.0: TestAccRealOperator_blueGreenAbortImportAndBack).
// Once the job was seen not FAILING, the same error again is this change's
// failure; a new error is at once.
func TestBlueGreenWait_failureBeforeTheWriteIsNotThisChanges(t *testing.T) {
	const aborted = "Aborting deployment 'orders-green', rolling B/G deployment back to ACTIVE_BLUE"
	seq := func(states ...[3]string) *dynfake.FakeDynamicClient {
		dyn := blueGreenClient()
		i := 0
		dyn.PrependReactor("get", "flinkbluegreendeployments", func(k8stesting.Action) (bool, runtime.Object, error) {
			s := states[min(i, len(states)-1)]
			i++
			obj := blueGreenWithStatus(s[0], s[1], fmt.Sprintf("2026-12-04T05:00:%02dZ", i))
			if s[2] != "" {
				obj.Object["status"].(map[string]any)["error"] = s[2]
			}
			return true, obj, nil
		})
		return dyn
	}
	w := BlueGreenWait{Namespace: "ns", Name: "orders", Target: "ACTIVE_GREEN", Since: "2026-12-04T05:00:00Z", SinceError: aborted,
		Timeout: 50 * time.Millisecond, Every: time.Millisecond}
	stale := seq([3]string{"ACTIVE_BLUE", "FAILING", aborted}, [3]string{"SAVEPOINTING_BLUE", "FAILING", aborted})
	if _, err := w.Run(context.Background(), stale); errors.Is(err, ErrBlueGreenFailed) || err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("the failure before the write: %v, want a wait that runs out", err)
	}
	w.Timeout = time.Minute
	again := seq([3]string{"SAVEPOINTING_BLUE", "FAILING", aborted}, [3]string{"TRANSITIONING_TO_GREEN", "RECONCILING", ""},
		[3]string{"ACTIVE_BLUE", "FAILING", aborted})
	if _, err := w.Run(context.Background(), again); !errors.Is(err, ErrBlueGreenFailed) {
		t.Fatalf("aborted again after a transition started: %v", err)
	}
	other := seq([3]string{"ACTIVE_BLUE", "FAILING", "Could not trigger Savepoint. Details: timeout"})
	if _, err := w.Run(context.Background(), other); !errors.Is(err, ErrBlueGreenFailed) {
		t.Fatalf("a new error: %v", err)
	}
}
