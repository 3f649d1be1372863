package kube

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// DeploymentStatus is the operator's view of a FlinkDeployment.
type DeploymentStatus struct {
	LifecycleState string
	JobState       string
	JobID          string
	Error          string
}

// ReadDeploymentStatus reads the status the operator writes.
func ReadDeploymentStatus(obj *unstructured.Unstructured) DeploymentStatus {
	var st DeploymentStatus
	st.LifecycleState, _, _ = unstructured.NestedString(obj.Object, "status", "lifecycleState")
	st.JobState, _, _ = unstructured.NestedString(obj.Object, "status", "jobStatus", "state")
	st.JobID, _, _ = unstructured.NestedString(obj.Object, "status", "jobStatus", "jobId")
	st.Error, _, _ = unstructured.NestedString(obj.Object, "status", "error")
	return st
}

// ErrDeploymentTimeout is returned when a deployment is not ready in time.
var ErrDeploymentTimeout = errors.New("FlinkDeployment not ready in time")

// WaitDeployment polls until the deployment is deployed (lifecycleState
// DEPLOYED or STABLE) or running (jobStatus.state RUNNING), as waitFor says;
// a FAILED lifecycle or an error in status ends it with the operator's
// message. The last status seen is always returned.
func WaitDeployment(ctx context.Context, dyn dynamic.Interface, namespace, name, waitFor string, timeout, every time.Duration) (DeploymentStatus, error) {
	deadline := time.Now().Add(timeout)
	var last DeploymentStatus
	for {
		obj, err := dyn.Resource(FlinkDeploymentGVR).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return last, fmt.Errorf("reading FlinkDeployment %s/%s: %w", namespace, name, err)
		}
		last = ReadDeploymentStatus(obj)
		// A status is about the spec just applied only once the operator has
		// observed this generation; before that it describes the previous one.
		observed, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
		current := observed >= obj.GetGeneration()
		switch {
		case !current:
		case last.LifecycleState == "FAILED" || last.Error != "":
			msg := OperatorMessage(last.Error)
			if msg == "" {
				msg = "the operator gave no error message"
			}
			return last, fmt.Errorf("FlinkDeployment %s/%s failed (lifecycle %s, job %s): %s", namespace, name, orNone(last.LifecycleState), orNone(last.JobState), msg)
		case waitFor == "deployed" && (last.LifecycleState == "DEPLOYED" || last.LifecycleState == "STABLE"):
			return last, nil
		case waitFor == "running" && last.JobState == "RUNNING":
			return last, nil
		}
		if time.Now().After(deadline) {
			if !current {
				return last, fmt.Errorf("%w: %s/%s after %s waiting for %s: the operator has not observed generation %d yet (observed %d; is the Flink operator running?)",
					ErrDeploymentTimeout, namespace, name, timeout, waitFor, obj.GetGeneration(), observed)
			}
			return last, fmt.Errorf("%w: %s/%s after %s waiting for %s: lifecycle state %s, job state %s (is the Flink operator running?)",
				ErrDeploymentTimeout, namespace, name, timeout, waitFor, orNone(last.LifecycleState), orNone(last.JobState))
		}
		select {
		case <-ctx.Done():
			return last, ctx.Err()
		case <-time.After(every):
		}
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none yet)"
	}
	return s
}

// DeploymentsRestoringFrom names the FlinkDeployments in namespace whose
// spec.job.initialSavepointPath is path (the operator restores from it on
// first deployment and on a savepointRedeployNonce change, so its files
// must stay). An empty path matches nothing.
func DeploymentsRestoringFrom(ctx context.Context, dyn dynamic.Interface, namespace, path string) ([]string, error) {
	if path == "" {
		return nil, nil
	}
	var names []string
	opts := metav1.ListOptions{Limit: 500}
	for {
		list, err := dyn.Resource(FlinkDeploymentGVR).Namespace(namespace).List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("listing FlinkDeployments in %s: %w", namespace, err)
		}
		for _, obj := range list.Items {
			p, _, _ := unstructured.NestedString(obj.Object, "spec", "job", "initialSavepointPath")
			if strings.TrimSuffix(p, "/") == strings.TrimSuffix(path, "/") {
				names = append(names, obj.GetName())
			}
		}
		if list.GetContinue() == "" {
			return names, nil
		}
		opts.Continue = list.GetContinue()
	}
}
