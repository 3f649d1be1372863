package kube

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// BlueGreenStatus is what the provider reads of a FlinkBlueGreenDeployment's
// status (FlinkBlueGreenDeploymentStatus, operator 1.15.0): its state, the
// jobStatus.state the controller writes (RECONCILING, RUNNING, FAILING,
// SUSPENDED), status.error, and lastReconciledTimestamp, which it sets
// whenever it records a spec it acts on (BlueGreenUtils.setLastReconciledSpec).
type BlueGreenStatus struct {
	State, JobState, Error, LastReconciled string
}

// ReadBlueGreenStatus reads the status of obj.
func ReadBlueGreenStatus(obj *unstructured.Unstructured) BlueGreenStatus {
	s := func(p ...string) string {
		v, _, _ := unstructured.NestedString(obj.Object, append([]string{"status"}, p...)...)
		return v
	}
	return BlueGreenStatus{State: s("blueGreenState"), JobState: s("jobStatus", "state"), Error: s("error"), LastReconciled: s("lastReconciledTimestamp")}
}

// GetBlueGreen reads a FlinkBlueGreenDeployment.
func GetBlueGreen(ctx context.Context, dyn dynamic.Interface, namespace, name string) (*unstructured.Unstructured, error) {
	return get(ctx, dyn, FlinkBlueGreenDeploymentGVR, "FlinkBlueGreenDeployment", namespace, name)
}

// BlueGreenWait waits for a FlinkBlueGreenDeployment to reach Target
// (ACTIVE_BLUE or ACTIVE_GREEN) with its job RUNNING, after a write that
// the operator acts on (Since: the lastReconciledTimestamp before the
// write; the wait ends only once the operator recorded a spec after it,
// "" for a create).
type BlueGreenWait struct {
	Namespace, Name, Target, Since string
	// Child is the child the write starts or rewrites (the target's), whose
	// own failure ends the wait before the operator's abort.
	Child   string
	Timeout time.Duration
	Every   time.Duration
}

// ErrBlueGreenFailed is a wait that ended because the operator said the
// deployment or transition failed (jobStatus FAILING, its error), or the
// child it starts cannot run.
var ErrBlueGreenFailed = errors.New("the blue/green deployment failed")

// Run polls until the target is reached, the operator reports a failure,
// or the timeout runs out; it returns the last status read. Reads that fail
// are retried (the API server restarting).
func (w BlueGreenWait) Run(ctx context.Context, dyn dynamic.Interface) (BlueGreenStatus, error) {
	deadline := time.Now().Add(w.Timeout)
	var st BlueGreenStatus
	var lastErr error
	for {
		obj, err := GetBlueGreen(ctx, dyn, w.Namespace, w.Name)
		if err == nil {
			st, lastErr = ReadBlueGreenStatus(obj), nil
			recorded := w.Since == "" || (st.LastReconciled != "" && st.LastReconciled != w.Since)
			switch {
			case recorded && st.State == w.Target && st.JobState == "RUNNING":
				return st, nil
			case st.JobState == "FAILING" && st.Error != "" && (recorded || strings.HasPrefix(st.Error, "Could not trigger Savepoint")):
				// markDeploymentFailing; a savepoint trigger that failed
				// records no spec (checkAndInitiateDeployment).
				return st, fmt.Errorf("%w: %s (state %s)", ErrBlueGreenFailed, st.Error, st.State)
			}
			if msg := w.childFailed(ctx, dyn); msg != "" && recorded {
				return st, fmt.Errorf("%w: FlinkDeployment %s/%s: %s (state %s)", ErrBlueGreenFailed, w.Namespace, w.Child, msg, st.State)
			}
		} else {
			lastErr = err
		}
		if time.Now().After(deadline) {
			if lastErr != nil {
				return st, fmt.Errorf("timed out after %s waiting for %s, reads failing: %w", w.Timeout, w.Target, lastErr)
			}
			return st, fmt.Errorf("timed out after %s waiting for %s with the job RUNNING: the state is %s, the job %s", w.Timeout, w.Target,
				orNone(st.State), orNone(st.JobState))
		}
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-time.After(w.Every):
		}
	}
}

// childFailed is the child's JobManager failing to deploy, as the operator
// records it on the child (DeploymentFailedException with the JobManager
// ERROR: AbstractFlinkDeploymentObserver.checkContainerErrors), e.g. an
// image that cannot be pulled: the blue/green controller would only abort
// after its grace period (BlueGreenDeploymentService.shouldWeAbort).
func (w BlueGreenWait) childFailed(ctx context.Context, dyn dynamic.Interface) string {
	if w.Child == "" {
		return ""
	}
	obj, err := GetFlinkDeployment(ctx, dyn, w.Namespace, w.Child)
	if err != nil {
		return ""
	}
	st := ReadDeploymentStatus(obj)
	if jobManagerStatus(obj) == "ERROR" && strings.Contains(st.Error, "DeploymentFailedException") {
		return st.Error
	}
	return ""
}

// DeleteChildren deletes the children of the FlinkBlueGreenDeployment
// name whose owner reference names its UID, as the garbage collector would
// once the resource is gone (blockOwnerDeletion, controller false:
// BlueGreenKubernetesService.getDependentObjectMeta): a cluster whose
// garbage collector lags or does not run keeps no child behind. Another
// object of a child's name is left alone.
func DeleteChildren(ctx context.Context, dyn dynamic.Interface, namespace, name string, owner string) error {
	for _, c := range []string{"blue", "green"} {
		r := dyn.Resource(FlinkDeploymentGVR).Namespace(namespace)
		obj, err := r.Get(ctx, name+"-"+c, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		owned := false
		for _, ref := range obj.GetOwnerReferences() {
			owned = owned || string(ref.UID) == owner
		}
		if !owned {
			continue
		}
		uid := obj.GetUID()
		err = r.Delete(ctx, obj.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
	}
	return nil
}

// WaitChildrenGone waits until neither child of the FlinkBlueGreenDeployment
// name exists (the garbage collector deletes them by their owner
// references once the resource is gone).
func WaitChildrenGone(ctx context.Context, dyn dynamic.Interface, namespace, name string, timeout, every time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		left := []string{}
		// The children the operator writes (BlueGreenUtils.prepareFlinkDeployment).
		for _, c := range []string{"blue", "green"} {
			n := name + "-" + c
			_, err := dyn.Resource(FlinkDeploymentGVR).Namespace(namespace).Get(ctx, n, metav1.GetOptions{})
			if err == nil || !apierrors.IsNotFound(err) {
				left = append(left, n)
			}
		}
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %s, FlinkDeployment %s still exists", timeout, strings.Join(left, " and "))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(every):
		}
	}
}
