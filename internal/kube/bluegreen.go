package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ktypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// BlueGreenStatus is what the provider reads of a FlinkBlueGreenDeployment's
// status (FlinkBlueGreenDeploymentStatus, operator 1.15.0): its state, the
// jobStatus.state the controller writes (RECONCILING, RUNNING, FAILING,
// SUSPENDED), status.error, and lastReconciledTimestamp, which it sets
// whenever it records a spec it acts on (BlueGreenUtils.setLastReconciledSpec),
// and a transition's deadlines: abortTimestamp (BlueGreenUtils
// .setAbortTimestamp: the new child's start plus abort.grace-period) and
// deploymentReadyTimestamp (shouldWeDelete: when the new child was ready).
type BlueGreenStatus struct {
	State, JobState, Error, LastReconciled string
	AbortAt, ReadyAt                       string
}

// ReadBlueGreenStatus reads the status of obj.
func ReadBlueGreenStatus(obj *unstructured.Unstructured) BlueGreenStatus {
	s := func(p ...string) string {
		v, _, _ := unstructured.NestedString(obj.Object, append([]string{"status"}, p...)...)
		return v
	}
	return BlueGreenStatus{State: s("blueGreenState"), JobState: s("jobStatus", "state"), Error: s("error"), LastReconciled: s("lastReconciledTimestamp"),
		AbortAt: s("abortTimestamp"), ReadyAt: s("deploymentReadyTimestamp")}
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
	// SinceError is status.error before the write when the job was
	// FAILING then (a failed or aborted transition): the operator leaves
	// jobStatus and error as they are until the next transition starts a
	// child (patchStatusUpdateControl with a null jobState: the
	// SAVEPOINTING_x patch of checkAndInitiateDeployment; initiateDeployment
	// sets RECONCILING and clears the error), so that FAILING is not this
	// write's failure until the job was seen not FAILING, or the error
	// changed.
	SinceError string
	// Child is the child the write starts or rewrites (the target's), whose
	// own failure ends the wait before the operator's abort.
	Child string
	// Job is the jobStatus.state the target comes with: RUNNING ("", the
	// end of a deployment or transition: finalizeBlueGreenDeployment) or
	// SUSPENDED (an in-place suspend: finalizeSuspendedDeployment).
	Job     string
	Timeout time.Duration
	Every   time.Duration
	// CheckStart, when set, checks the savepoint Child is started from by
	// a transition (TransitionSavepoint) while Child's job does not run
	// yet: what Flink could not restore ("" when it could). The operator
	// starts the new child from the savepoint's path alone
	// (configureInitialSavepoint) and Flink checks only its _metadata when
	// it resolves it (AbstractFsCheckpointStorageAccess
	// .resolveCheckpointPointer): a missing file fails the new child's job
	// only when its tasks read it, and the operator aborts the transition
	// only after abort_grace_period (shouldWeAbort). Asked again every
	// Recheck (each poll when zero): files can go after the savepoint
	// completed.
	CheckStart func(ctx context.Context, path string) string
	Recheck    time.Duration
}

// ErrTransitionSavepoint is a wait that ended because the savepoint the
// new child starts from cannot be restored (BlueGreenWait.CheckStart): the
// operator goes on with the transition, the old child running on.
var ErrTransitionSavepoint = errors.New("the transition savepoint cannot be restored")

func (w BlueGreenWait) job() string {
	if w.Job == "" {
		return "RUNNING"
	}
	return w.Job
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
	var checked time.Time
	stale := w.SinceError != ""
	for {
		obj, err := GetBlueGreen(ctx, dyn, w.Namespace, w.Name)
		if err == nil {
			st, lastErr = ReadBlueGreenStatus(obj), nil
			recorded := w.Since == "" || (st.LastReconciled != "" && st.LastReconciled != w.Since)
			if st.JobState != "FAILING" || st.Error != w.SinceError {
				stale = false
			}
			switch {
			case recorded && st.State == w.Target && st.JobState == w.job():
				return st, nil
			case st.JobState == "FAILING" && st.Error != "" && !stale && (recorded || strings.HasPrefix(st.Error, "Could not trigger Savepoint")):
				// markDeploymentFailing; a savepoint trigger that failed
				// records no spec (checkAndInitiateDeployment).
				return st, fmt.Errorf("%w: %s (state %s)", ErrBlueGreenFailed, st.Error, st.State)
			}
			child := w.child(ctx, dyn)
			if msg := childFailed(child); msg != "" && recorded {
				return st, fmt.Errorf("%w: FlinkDeployment %s/%s: %s (state %s)", ErrBlueGreenFailed, w.Namespace, w.Child, msg, st.State)
			}
			if recorded && w.CheckStart != nil && time.Since(checked) >= w.Recheck {
				checked = time.Now()
				if p, msg := w.startProblem(ctx, obj, child); msg != "" {
					return st, fmt.Errorf("%w: FlinkDeployment %s/%s would start from %s: %s (state %s)",
						ErrTransitionSavepoint, w.Namespace, w.Child, p, msg, st.State)
				}
			}
		} else {
			lastErr = err
		}
		if time.Now().After(deadline) {
			if lastErr != nil {
				return st, fmt.Errorf("timed out after %s waiting for %s, reads failing: %w", w.Timeout, w.Target, lastErr)
			}
			return st, fmt.Errorf("timed out after %s waiting for %s with the job %s: the state is %s, the job %s", w.Timeout, w.Target,
				w.job(), orNone(st.State), orNone(st.JobState))
		}
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-time.After(w.Every):
		}
	}
}

// Waiting says what the operator waits for in st, the state a wait for
// the FlinkBlueGreenDeployment name ran out in (its children read now;
// "" when the state says nothing more than its name):
//   - SAVEPOINTING_x: the savepoint of x's job, without a time limit
//     (SavepointingStateHandler.handle: "this will wait indefinitely");
//   - TRANSITIONING_TO_x: x STABLE with its job RUNNING
//     (BlueGreenKubernetesService.isFlinkDeploymentReady), aborted at
//     abortTimestamp (shouldWeAbort); once x is ready, the deletion of the
//     other child after deployment-deletion.delay (shouldWeDelete);
//   - ACTIVE_x (the wait would have ended at its target): a change not acted on yet (the next
//     reconciliation, reschedule-interval: checkAndInitiateDeployment).
func (w BlueGreenWait) Waiting(ctx context.Context, dyn dynamic.Interface, st BlueGreenStatus) string {
	child := func(t string) (string, *DeploymentStatus) {
		n := w.Name + "-" + t
		obj, err := GetFlinkDeployment(ctx, dyn, w.Namespace, n)
		if err != nil {
			return n, nil
		}
		ds := ReadDeploymentStatus(obj)
		return n, &ds
	}
	lower := func(s, prefix string) string { return strings.ToLower(strings.TrimPrefix(s, prefix)) }
	switch {
	case strings.HasPrefix(st.State, "SAVEPOINTING_"):
		n, _ := child(lower(st.State, "SAVEPOINTING_"))
		return fmt.Sprintf("the operator waits for the savepoint of %s's job (%s keeps running; the operator sets no time limit on this savepoint)", n, n)
	case strings.HasPrefix(st.State, "TRANSITIONING_TO_"):
		t := lower(st.State, "TRANSITIONING_TO_")
		n, ds := child(t)
		old, ods := child(map[string]string{"blue": "green", "green": "blue"}[t])
		if ds == nil {
			return fmt.Sprintf("the operator has not written %s yet", n)
		}
		if w.job() == "SUSPENDED" {
			return fmt.Sprintf("the operator waits for %s to be SUSPENDED (it is %s, its job %s) until %s, when it gives up the "+
				"suspend (abort_grace_period)", n, orNone(ds.LifecycleState), orNone(ds.JobState), orNone(st.AbortAt))
		}
		if ds.LifecycleState == "STABLE" && ds.JobState == "RUNNING" {
			if ods != nil {
				return fmt.Sprintf("%s is ready (STABLE, its job RUNNING since %s); the operator deletes %s once deletion_delay has passed, then the state becomes ACTIVE_%s",
					n, orNone(st.ReadyAt), old, strings.ToUpper(t))
			}
			return fmt.Sprintf("%s is ready (STABLE, its job RUNNING); the state becomes ACTIVE_%s at the operator's next reconciliation", n, strings.ToUpper(t))
		}
		return fmt.Sprintf("the operator waits for %s to be STABLE with its job RUNNING (it is %s, its job %s) until %s, when it aborts the "+
			"transition (abort_grace_period)", n, orNone(ds.LifecycleState), orNone(ds.JobState), orNone(st.AbortAt))
	case strings.HasPrefix(st.State, "ACTIVE_") && st.JobState != "FAILING":
		return "the operator has not acted on the change yet (it checks at every reconciliation, reschedule_interval)"
	case st.JobState == "FAILING" && st.Error == w.SinceError:
		return fmt.Sprintf("the operator still reports the failure it reported before this change (%s) and has not started a transition for it", st.Error)
	}
	return ""
}

// WaitTransitionEnds waits, when both children of the FlinkBlueGreenDeployment
// name exist in a SAVEPOINTING_ or TRANSITIONING_TO_ state (a transition
// whose old child the operator deletes once the new one is ready:
// BlueGreenDeploymentService.shouldWeDelete, or whose new one it suspends on
// an abort: abortDeployment), until the transition has ended (either child
// gone, or an ACTIVE_ state), and returns the object as it is then. Anything
// else returns at once, and so does a transition whose new child failed to
// deploy (childFailed: an image that cannot be pulled): the
// operator deletes the old child only once the new one is ready
// (BlueGreenDeploymentService.shouldWeDelete after isFlinkDeploymentReady),
// so the active child stays, and waiting would only wait for the abort
// after the grace period (10 min by default).
func WaitTransitionEnds(ctx context.Context, dyn dynamic.Interface, namespace, name string, timeout, every time.Duration) (*unstructured.Unstructured, error) {
	deadline := time.Now().Add(timeout)
	for {
		obj, err := GetBlueGreen(ctx, dyn, namespace, name)
		if err != nil {
			return nil, err
		}
		st := ReadBlueGreenStatus(obj)
		moving := strings.HasPrefix(st.State, "SAVEPOINTING_") || strings.HasPrefix(st.State, "TRANSITIONING_TO_")
		both := moving
		for _, c := range []string{"blue", "green"} {
			if both {
				_, err := GetFlinkDeployment(ctx, dyn, namespace, name+"-"+c)
				both = err == nil
			}
		}
		if !both {
			return obj, nil
		}
		if target, ok := strings.CutPrefix(st.State, "TRANSITIONING_TO_"); ok {
			w := BlueGreenWait{Namespace: namespace, Child: name + "-" + strings.ToLower(target)}
			if childFailed(w.child(ctx, dyn)) != "" {
				return obj, nil
			}
		}
		if time.Now().After(deadline) {
			return obj, fmt.Errorf("after %s the transition is still under way: the state is %s, and both %s-blue and %s-green exist",
				timeout, st.State, name, name)
		}
		select {
		case <-ctx.Done():
			return obj, ctx.Err()
		case <-time.After(every):
		}
	}
}

// RemoveBlueGreenOptions removes from the live FlinkBlueGreenDeployment's
// spec.configuration those of keys it holds: keys another manager wrote
// (kubectl edit), which the provider's server-side apply cannot remove by
// leaving them out (Kubernetes docs, "Server-Side Apply": a field is
// removed only when no manager owns it). A JSON patch whose test of the
// resourceVersion makes a concurrent write fail instead of being undone.
func RemoveBlueGreenOptions(ctx context.Context, dyn dynamic.Interface, live *unstructured.Unstructured, keys []string) (*unstructured.Unstructured, error) {
	cfg, _, _ := unstructured.NestedMap(live.Object, "spec", "configuration")
	ops := []map[string]any{{"op": "test", "path": "/metadata/resourceVersion", "value": live.GetResourceVersion()}}
	for _, k := range keys {
		if _, ok := cfg[k]; ok {
			ops = append(ops, map[string]any{"op": "remove", "path": "/spec/configuration/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(k)})
		}
	}
	if len(ops) == 1 {
		return live, nil
	}
	body, err := json.Marshal(ops)
	if err != nil {
		return nil, err
	}
	return dyn.Resource(FlinkBlueGreenDeploymentGVR).Namespace(live.GetNamespace()).Patch(ctx, live.GetName(), ktypes.JSONPatchType, body,
		metav1.PatchOptions{FieldManager: FieldManager})
}

// startProblem is CheckStart's answer for the transition savepoint child
// (w.Child of bg, nil when it is not there) starts from, with its path,
// while the child's job does not run yet; "" when there is nothing to check
// or nothing wrong.
func (w BlueGreenWait) startProblem(ctx context.Context, bg, child *unstructured.Unstructured) (string, string) {
	if child == nil {
		return "", ""
	}
	p := TransitionSavepoint(bg, child)
	if p == "" || ReadDeploymentStatus(child).JobState == "RUNNING" {
		return "", ""
	}
	return p, w.CheckStart(ctx, p)
}

// child reads the FlinkDeployment w.Child; nil when there is none or it
// cannot be read now (the next poll reads it again).
func (w BlueGreenWait) child(ctx context.Context, dyn dynamic.Interface) *unstructured.Unstructured {
	if w.Child == "" {
		return nil
	}
	obj, err := GetFlinkDeployment(ctx, dyn, w.Namespace, w.Child)
	if err != nil {
		return nil
	}
	return obj
}

// childFailed is the child's JobManager failing to deploy, as the operator
// records it on the child (DeploymentFailedException with the JobManager
// ERROR: AbstractFlinkDeploymentObserver.checkContainerErrors), e.g. an
// image that cannot be pulled: the blue/green controller would only abort
// after its grace period (BlueGreenDeploymentService.shouldWeAbort). ""
// for a nil child.
func childFailed(child *unstructured.Unstructured) string {
	if child == nil {
		return ""
	}
	st := ReadDeploymentStatus(child)
	if jobManagerStatus(child) == "ERROR" && strings.Contains(st.Error, "DeploymentFailedException") {
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
