package kube

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
		{StopOptions{}, `{"spec":{"job":{"state":"suspended","upgradeMode":"savepoint"}}}`},
		{StopOptions{Drain: true}, `{"spec":{"flinkConfiguration":{"kubernetes.operator.job.drain-on-savepoint-deletion":"true"},"job":{"state":"suspended","upgradeMode":"savepoint"}}}`},
		{StopOptions{FormatType: "NATIVE"}, `{"spec":{"flinkConfiguration":{"kubernetes.operator.savepoint.format.type":"NATIVE"},"job":{"state":"suspended","upgradeMode":"savepoint"}}}`},
	} {
		if got := string(StopPatch(tc.o)); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.o, got, tc.want)
		}
	}
}

// The stop asks for a suspended job in savepoint mode and returns the path
// the operator recorded once the lifecycle is SUSPENDED.
func TestStopWithSavepoint_returnsRecordedPath(t *testing.T) {
	dep := runningSavepointJob("SUSPENDED", "FINISHED", "s3://b/sp/savepoint-1", "")
	dyn := eventsClient(dep)
	res, err := StopWithSavepoint(context.Background(), dyn, "ns", "orders", StopOptions{Drain: true}, time.Minute, time.Millisecond)
	if err != nil || res.Path != "s3://b/sp/savepoint-1" {
		t.Fatalf("%+v, %v", res, err)
	}
	if s, m, d := specJob(t, dyn.Resource(FlinkDeploymentGVR).Namespace("ns")); s != "suspended" || m != "savepoint" || d != "true" {
		t.Fatalf("spec job.state %q upgradeMode %q drain %q", s, m, d)
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
