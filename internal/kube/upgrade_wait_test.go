package kube

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
)

// pendingUpgrade is a FlinkDeployment at generation 2 whose operator
// observed generation 1, with status.error and JobManager status as given.
func pendingUpgrade(statusError, jm string) *unstructured.Unstructured {
	u := deploymentWithStatus(2, 1, "DEPLOYED", "RECONCILING")
	u.SetUID("uid-1")
	st := u.Object["status"].(map[string]any)
	st["jobManagerDeploymentStatus"] = jm
	if statusError != "" {
		st["error"] = statusError
	}
	return u
}

func operatorEvent(name, typ, reason, message string, at time.Time) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Event",
		"metadata":       map[string]any{"name": name, "namespace": "ns"},
		"involvedObject": map[string]any{"kind": "FlinkDeployment", "name": "orders", "namespace": "ns", "uid": "uid-1"},
		"type":           typ, "reason": reason, "message": message, "count": int64(1),
		"lastTimestamp": at.UTC().Format(time.RFC3339),
	}}
}

func eventsClient(objs ...runtime.Object) *dynfake.FakeDynamicClient {
	return dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		FlinkDeploymentGVR: "FlinkDeploymentList", EventGVR: "EventList", ConfigMapGVR: "ConfigMapList",
	}, objs...)
}

const manualRestore = "JobManager deployment is missing and HA metadata is not available to make stateful upgrades. " +
	"It is possible that the job has finished or terminally failed, or the configmaps have been deleted.Manual restore required."

// An UpgradeFailureException with its UpgradeFailed event said after the
// spec was written ends the wait at once (ErrUpgradeFailed) with the
// operator's words; the same error with only an older event does not.
func TestWaitDeployment_upgradeFailedEndsAtOnce(t *testing.T) {
	written := time.Now().Add(-2 * time.Second)
	statusErr := `{"type":"` + upgradeFailureException + `","message":"` + manualRestore + `"}`
	dep := pendingUpgrade(statusErr, "MISSING")
	dyn := eventsClient(dep, operatorEvent("e1", "Warning", ReasonUpgradeFailed, manualRestore, time.Now()))
	start := time.Now()
	_, err := WaitDeploymentSince(context.Background(), dyn, "ns", "orders", "deployed", written, time.Minute, time.Millisecond)
	if !errors.Is(err, ErrUpgradeFailed) || !strings.Contains(err.Error(), "Manual restore required") ||
		!strings.Contains(err.Error(), "refused to upgrade to generation 2") || time.Since(start) > 10*time.Second {
		t.Fatalf("after %s: %v", time.Since(start), err)
	}

	old := eventsClient(pendingUpgrade(statusErr, "MISSING"), operatorEvent("e1", "Warning", ReasonUpgradeFailed, manualRestore, written.Add(-time.Hour)))
	_, err = WaitDeploymentSince(context.Background(), old, "ns", "orders", "deployed", written, 50*time.Millisecond, time.Millisecond)
	if errors.Is(err, ErrUpgradeFailed) || !errors.Is(err, ErrDeploymentTimeout) {
		t.Fatalf("an older UpgradeFailed event ended the wait: %v", err)
	}
}

// A wait that ends while the operator waits for an upgradeable state (its
// SpecChanged event since the spec was written, no error) says so and is
// ErrWaitingForUpgradeableState, not a question whether the operator runs.
func TestWaitDeployment_waitingForUpgradeableState(t *testing.T) {
	written := time.Now().Add(-2 * time.Second)
	dyn := eventsClient(pendingUpgrade("", "DEPLOYING"), operatorEvent("e1", "Normal", ReasonSpecChanged,
		"UPGRADE change(s) detected (Diff: FlinkDeploymentSpec[image : a -> b]), starting reconciliation.", time.Now()))
	_, err := WaitDeploymentSince(context.Background(), dyn, "ns", "orders", "deployed", written, 50*time.Millisecond, time.Millisecond)
	if !errors.Is(err, ErrWaitingForUpgradeableState) || !errors.Is(err, ErrDeploymentTimeout) ||
		!strings.Contains(err.Error(), "waits for an upgradeable state: its job is RECONCILING and its JobManager DEPLOYING") ||
		strings.Contains(err.Error(), "is it running") {
		t.Fatalf("%v", err)
	}
	// Without the event the wait's end asks as before.
	quiet := eventsClient(pendingUpgrade("", "DEPLOYING"))
	_, err = WaitDeploymentSince(context.Background(), quiet, "ns", "orders", "deployed", written, 50*time.Millisecond, time.Millisecond)
	if errors.Is(err, ErrWaitingForUpgradeableState) || !strings.Contains(err.Error(), "is it running") {
		t.Fatalf("%v", err)
	}
}

// FailedBeforeItRan: a first deployment whose JobManager container never
// started, and no other case.
func TestFailedBeforeItRan(t *testing.T) {
	failed := func(edit func(st map[string]any)) *unstructured.Unstructured {
		u := deploymentWithStatus(1, 1, "DEPLOYED", "RECONCILING")
		st := u.Object["status"].(map[string]any)
		st["jobManagerDeploymentStatus"] = "ERROR"
		st["error"] = `{"type":"org.apache.flink.kubernetes.operator.exception.DeploymentFailedException","message":"[flink-main-container] Back-off pulling image"}`
		st["reconciliationStatus"] = map[string]any{"lastReconciledSpec": `{"spec":{},"resource_metadata":{"apiVersion":"flink.apache.org/v1beta1","firstDeployment":true}}`}
		if edit != nil {
			edit(st)
		}
		return u
	}
	cases := []struct {
		name string
		obj  *unstructured.Unstructured
		cms  []runtime.Object
		want bool
	}{
		{"image pull", failed(nil), nil, true},
		{"a later spec", failed(func(st map[string]any) {
			st["reconciliationStatus"] = map[string]any{"lastReconciledSpec": `{"spec":{},"resource_metadata":{"firstDeployment":false}}`}
		}), nil, false},
		{"the job started once", failed(func(st map[string]any) {
			st["jobStatus"].(map[string]any)["startTime"] = "1796141836129"
		}), nil, false},
		{"HA metadata", failed(nil), []runtime.Object{haConfigMap("orders-0123-config-map")}, false},
		{"another error", failed(func(st map[string]any) {
			st["error"] = `{"type":"org.apache.flink.kubernetes.operator.exception.ReconciliationException","message":"x"}`
		}), nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := FailedBeforeItRan(context.Background(), eventsClient(c.cms...), c.obj); got != c.want {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}
