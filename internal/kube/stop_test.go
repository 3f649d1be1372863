package kube

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	dynfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
)

// runningSavepointJob is a FlinkDeployment in last-state mode whose status
// is as given; its spec asks for a running job.
func runningSavepointJob(lifecycle, job, path, statusError string) *unstructured.Unstructured {
	u := deploymentWithStatus(1, 1, lifecycle, job)
	u.SetUID("uid-1")
	u.Object["spec"] = map[string]any{"job": map[string]any{"state": "running", "upgradeMode": "last-state"}}
	st := u.Object["status"].(map[string]any)
	if path != "" {
		st["jobStatus"].(map[string]any)["upgradeSavepointPath"] = path
	}
	if statusError != "" {
		st["error"] = statusError
	}
	return u
}

func specJob(t *testing.T, dyn interface {
	Get(context.Context, string, metav1.GetOptions, ...string) (*unstructured.Unstructured, error)
}) (state, mode, drain string) {
	t.Helper()
	obj, err := dyn.Get(context.Background(), "orders", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	state, _, _ = unstructured.NestedString(obj.Object, "spec", "job", "state")
	mode, _, _ = unstructured.NestedString(obj.Object, "spec", "job", "upgradeMode")
	drain, _, _ = unstructured.NestedString(obj.Object, "spec", "flinkConfiguration", DrainOnSavepointKey)
	return
}

func TestStopPatch(t *testing.T) {
	for _, tc := range []struct {
		o    StopOptions
		want string
	}{
		{StopOptions{}, `{"spec":{"flinkConfiguration":{"kubernetes.operator.job.upgrade.last-state-fallback.enabled":"false"},"job":{"state":"suspended","upgradeMode":"savepoint"}}}`},
		{StopOptions{Drain: true}, `{"spec":{"flinkConfiguration":{"kubernetes.operator.job.drain-on-savepoint-deletion":"true","kubernetes.operator.job.upgrade.last-state-fallback.enabled":"false"},"job":{"state":"suspended","upgradeMode":"savepoint"}}}`},
		{StopOptions{FormatType: "NATIVE"}, `{"spec":{"flinkConfiguration":{"kubernetes.operator.job.upgrade.last-state-fallback.enabled":"false","kubernetes.operator.savepoint.format.type":"NATIVE"},"job":{"state":"suspended","upgradeMode":"savepoint"}}}`},
	} {
		if got := string(StopPatch(tc.o)); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.o, got, tc.want)
		}
	}
}

// The stop asks for a suspended job in savepoint mode and returns the path
// the operator recorded once the lifecycle is SUSPENDED.
func TestStopWithSavepoint_returnsRecordedPath(t *testing.T) {
	dep := runningSavepointJob("STABLE", "RUNNING", "s3://b/sp/savepoint-0", "")
	dyn := eventsClient(dep)
	stopsWhenAsked(dyn, "s3://b/sp/savepoint-1")
	res, err := StopWithSavepoint(context.Background(), dyn, "ns", "orders", StopOptions{Drain: true}, time.Minute, time.Millisecond)
	if err != nil || res.Path != "s3://b/sp/savepoint-1" {
		t.Fatalf("%+v, %v", res, err)
	}
	if s, m, d := specJob(t, dyn.Resource(FlinkDeploymentGVR).Namespace("ns")); s != "suspended" || m != "savepoint" || d != "true" {
		t.Fatalf("spec job.state %q upgradeMode %q drain %q", s, m, d)
	}
}

// stopsWhenAsked makes dyn's FlinkDeployment orders read as the operator
// writes it once it stopped the job with the savepoint path, after the
// stop was written.
func stopsWhenAsked(dyn *dynfake.FakeDynamicClient, path string) {
	var asked atomic.Bool
	dyn.PrependReactor("patch", "flinkdeployments", func(k8stesting.Action) (bool, runtime.Object, error) {
		asked.Store(true)
		return false, nil, nil
	})
	dyn.PrependReactor("get", "flinkdeployments", func(k8stesting.Action) (bool, runtime.Object, error) {
		if !asked.Load() {
			return false, nil, nil
		}
		obj, err := dyn.Tracker().Get(FlinkDeploymentGVR, "ns", "orders")
		if err != nil {
			return true, nil, err
		}
		u := obj.(*unstructured.Unstructured).DeepCopy()
		st := u.Object["status"].(map[string]any)
		st["lifecycleState"] = "SUSPENDED"
		st["jobStatus"].(map[string]any)["state"] = "FINISHED"
		st["jobStatus"].(map[string]any)["upgradeSavepointPath"] = path
		return true, u, nil
	})
}

// A suspend that took no savepoint (the operator's last-state fallback)
// leaves the path before it: that is no final savepoint.
func TestStopWithSavepoint_oldPathIsNoSavepoint(t *testing.T) {
	dyn := eventsClient(runningSavepointJob("STABLE", "RUNNING", "s3://b/sp/savepoint-0", ""))
	stopsWhenAsked(dyn, "s3://b/sp/savepoint-0")
	_, err := StopWithSavepoint(context.Background(), dyn, "ns", "orders", StopOptions{}, 50*time.Millisecond, time.Millisecond)
	if !errors.Is(err, ErrStopFailed) {
		t.Fatalf("%v", err)
	}
}

// A job seen not running after the stop was written for NotRunningFor
// ends the stop: the operator stops only a running job, and waits.
func TestStopWithSavepoint_notRunningEnds(t *testing.T) {
	dep := runningSavepointJob("STABLE", "RECONCILING", "", "")
	dyn := eventsClient(dep)
	start := time.Now()
	_, err := StopWithSavepoint(context.Background(), dyn, "ns", "orders", StopOptions{NotRunningFor: 20 * time.Millisecond}, time.Minute, time.Millisecond)
	if !errors.Is(err, ErrStopFailed) || !strings.Contains(err.Error(), "the job is not running (job state RECONCILING") || time.Since(start) > 10*time.Second {
		t.Fatalf("after %s: %v", time.Since(start), err)
	}
	if s, m, _ := specJob(t, dyn.Resource(FlinkDeploymentGVR).Namespace("ns")); s != "running" || m != "last-state" {
		t.Fatalf("spec job.state %q upgradeMode %q", s, m)
	}
}

// The last-state dummy path is no savepoint: the stop is not done.
func TestStopWithSavepoint_lastStateDummyIsNoSavepoint(t *testing.T) {
	dyn := eventsClient(runningSavepointJob("SUSPENDED", "FINISHED", LastStateDummyPath, ""))
	_, err := StopWithSavepoint(context.Background(), dyn, "ns", "orders", StopOptions{}, 50*time.Millisecond, time.Millisecond)
	if !errors.Is(err, ErrStopFailed) {
		t.Fatalf("%v", err)
	}
}

// The operator's SavepointError said after the patch ends the stop at once
// with the operator's words, and the spec is put back as it was.
func TestStopWithSavepoint_savepointErrorPutsSpecBack(t *testing.T) {
	statusErr, _ := json.Marshal(map[string]string{"type": upgradeFailureException, "message": "Timed out stopping the job abc with savepoint, please configure a larger timeout via 'execution.checkpointing.timeout'"})
	dep := runningSavepointJob("STABLE", "RUNNING", "", string(statusErr))
	dyn := eventsClient(dep, operatorEvent("e1", "Warning", ReasonSavepointError,
		"Timed out stopping the job abc with savepoint, please configure a larger timeout via 'execution.checkpointing.timeout'", time.Now().Add(time.Second)))
	_, err := StopWithSavepoint(context.Background(), dyn, "ns", "orders", StopOptions{Drain: true}, time.Minute, time.Millisecond)
	if !errors.Is(err, ErrStopFailed) || !strings.Contains(err.Error(), "Timed out stopping the job abc with savepoint") {
		t.Fatalf("%v", err)
	}
	if s, m, d := specJob(t, dyn.Resource(FlinkDeploymentGVR).Namespace("ns")); s != "running" || m != "last-state" || d != "" {
		t.Fatalf("spec job.state %q upgradeMode %q drain %q", s, m, d)
	}
}

// A job that never stops (a JobManager that does not answer) ends at the
// timeout with ErrStopFailed, the status in the error, and the spec put back.
func TestStopWithSavepoint_timeoutPutsSpecBack(t *testing.T) {
	dep := runningSavepointJob("STABLE", "RECONCILING", "", "")
	dep.Object["status"].(map[string]any)["jobManagerDeploymentStatus"] = "DEPLOYED_NOT_READY"
	dyn := eventsClient(dep)
	_, err := StopWithSavepoint(context.Background(), dyn, "ns", "orders", StopOptions{}, 50*time.Millisecond, time.Millisecond)
	if !errors.Is(err, ErrStopFailed) || !strings.Contains(err.Error(), "job state RECONCILING") || !strings.Contains(err.Error(), "JobManager DEPLOYED_NOT_READY") {
		t.Fatalf("%v", err)
	}
	if s, m, _ := specJob(t, dyn.Resource(FlinkDeploymentGVR).Namespace("ns")); s != "running" || m != "last-state" {
		t.Fatalf("spec job.state %q upgradeMode %q", s, m)
	}
}

// A failed stop the operator may still retry (Retries) does not end the
// stop: one SavepointError said once, with one retry left, waits on (here
// to the timeout, since the fake operator never retries).
func TestStopWithSavepoint_savepointErrorWithRetriesLeftWaits(t *testing.T) {
	statusErr, _ := json.Marshal(map[string]string{"type": upgradeFailureException, "message": "Savepoint Error"})
	dep := runningSavepointJob("STABLE", "RUNNING", "", string(statusErr))
	dyn := eventsClient(dep, operatorEvent("e1", "Warning", ReasonSavepointError,
		"Savepoint Error -> Not all required tasks are currently running", time.Now().Add(time.Second)))
	_, err := StopWithSavepoint(context.Background(), dyn, "ns", "orders", StopOptions{Retries: 1}, 100*time.Millisecond, time.Millisecond)
	if !errors.Is(err, ErrStopFailed) || !strings.Contains(err.Error(), "waiting for the job to stop with a savepoint") {
		t.Fatalf("%v", err)
	}
	if s, m, _ := specJob(t, dyn.Resource(FlinkDeploymentGVR).Namespace("ns")); s != "running" || m != "last-state" {
		t.Fatalf("spec job.state %q upgradeMode %q", s, m)
	}
}

// refusedUpdate is a FlinkDeployment whose generation 2 (image java21) the
// operator's validator refused: it still runs generation 1 (java17).
func refusedUpdateDeployment() *unstructured.Unstructured {
	dep := runningSavepointJob("STABLE", "RUNNING", "", `{"type":"`+validationException+`","message":"HA must be enabled for rollback support."}`)
	dep.SetGeneration(2)
	dep.Object["spec"] = map[string]any{"image": "flink:2.2.1-java21", "job": map[string]any{"state": "running", "upgradeMode": "savepoint"}}
	last, _ := json.Marshal(map[string]any{
		"spec":              map[string]any{"image": "flink:2.2.1-java17", "job": map[string]any{"state": "running", "upgradeMode": "savepoint", "savepointTriggerNonce": nil}},
		"resource_metadata": map[string]any{"apiVersion": "flink.apache.org/v1beta1", "firstDeployment": true},
	})
	dep.Object["status"].(map[string]any)["reconciliationStatus"] = map[string]any{"lastReconciledSpec": string(last)}
	return dep
}

// A stop of a deployment whose live spec the validator refused is written
// onto the spec the operator runs (the last reconciled one), since the
// operator never acts on the refused one; its undo puts the refused spec
// back whole.
func TestWriteStop_refusedSpecStopsTheReconciledOne(t *testing.T) {
	before := refusedUpdateDeployment()
	dyn := eventsClient(before.DeepCopy())
	r := dyn.Resource(FlinkDeploymentGVR).Namespace("ns")
	rebased, err := writeStop(context.Background(), r, before, StopOptions{FormatType: "NATIVE"})
	if err != nil || !rebased {
		t.Fatalf("rebased %v, %v", rebased, err)
	}
	obj, _ := r.Get(context.Background(), "orders", metav1.GetOptions{})
	image, _, _ := unstructured.NestedString(obj.Object, "spec", "image")
	format, _, _ := unstructured.NestedString(obj.Object, "spec", "flinkConfiguration", SavepointFormatKey)
	_, nonce, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "job", "savepointTriggerNonce")
	if s, m, _ := specJob(t, r); s != "suspended" || m != "savepoint" || image != "flink:2.2.1-java17" || format != "NATIVE" || nonce {
		t.Fatalf("spec %v", obj.Object["spec"])
	}
	if err := undoStop(context.Background(), r, before, StopOptions{FormatType: "NATIVE"}, true); err != nil {
		t.Fatal(err)
	}
	obj, _ = r.Get(context.Background(), "orders", metav1.GetOptions{})
	image, _, _ = unstructured.NestedString(obj.Object, "spec", "image")
	_, hasConf, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "flinkConfiguration")
	if s, _, _ := specJob(t, r); s != "running" || image != "flink:2.2.1-java21" || hasConf {
		t.Fatalf("spec after undo %v", obj.Object["spec"])
	}
}

// A valid live spec gets the merge patch; its other fields stay.
func TestWriteStop_validSpecIsPatched(t *testing.T) {
	before := runningSavepointJob("STABLE", "RUNNING", "", "")
	before.Object["spec"].(map[string]any)["image"] = "flink:2.2.1-java21"
	dyn := eventsClient(before.DeepCopy())
	r := dyn.Resource(FlinkDeploymentGVR).Namespace("ns")
	if rebased, err := writeStop(context.Background(), r, before, StopOptions{}); err != nil || rebased {
		t.Fatalf("rebased %v, %v", rebased, err)
	}
	obj, _ := r.Get(context.Background(), "orders", metav1.GetOptions{})
	if image, _, _ := unstructured.NestedString(obj.Object, "spec", "image"); image != "flink:2.2.1-java21" {
		t.Fatalf("spec %v", obj.Object["spec"])
	}
}

// The validator's refusal of the stop itself, said after the stop was
// written, ends the stop at once with its words, the spec put back; one
// stamped in the second the stop was written may be the old spec's, and
// does not.
func TestStopWithSavepoint_validatorRefusalEndsAtOnce(t *testing.T) {
	dyn := eventsClient(refusedUpdateDeployment(), operatorEvent("e1", "Warning", ReasonValidationError, "HA must be enabled for rollback support.", time.Now().Add(2*time.Second)))
	start := time.Now()
	_, err := StopWithSavepoint(context.Background(), dyn, "ns", "orders", StopOptions{}, time.Minute, time.Millisecond)
	if !errors.Is(err, ErrStopFailed) || !strings.Contains(err.Error(), "the stop was refused: the Flink operator rejected the spec: FlinkDeployment ns/orders: the operator's validator refused generation 2 (the job keeps running with the spec it last reconciled): HA must be enabled for rollback support.") || time.Since(start) > 10*time.Second {
		t.Fatalf("after %s: %v", time.Since(start), err)
	}
	obj, _ := dyn.Resource(FlinkDeploymentGVR).Namespace("ns").Get(context.Background(), "orders", metav1.GetOptions{})
	if image, _, _ := unstructured.NestedString(obj.Object, "spec", "image"); image != "flink:2.2.1-java21" {
		t.Fatalf("spec not put back: %v", obj.Object["spec"])
	}

	same := eventsClient(refusedUpdateDeployment(), operatorEvent("e1", "Warning", ReasonValidationError, "HA must be enabled for rollback support.", time.Now()))
	_, err = StopWithSavepoint(context.Background(), same, "ns", "orders", StopOptions{}, 100*time.Millisecond, time.Millisecond)
	if !errors.Is(err, ErrStopFailed) || strings.Contains(err.Error(), "stop was refused") {
		t.Fatalf("%v", err)
	}
}
