package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ktypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// DrainOnSavepointKey is the operator setting its stop-with-savepoint
// passes as Flink's "drain" (AbstractFlinkService.savepointJobOrError:
// clusterClient.stopWithSavepoint(jobID, conf.getBoolean(
// KubernetesOperatorConfigOptions.DRAIN_ON_SAVEPOINT_DELETION), ...);
// flink-kubernetes-operator release-1.15.0). Drain emits MAX_WATERMARK
// before the savepoint: every event-time timer and window fires.
const DrainOnSavepointKey = "kubernetes.operator.job.drain-on-savepoint-deletion"

// ReasonSavepointError is the reason of the operator's event when its
// stop-with-savepoint fails (AbstractFlinkService.savepointJobOrError throws
// UpgradeFailureException("Savepoint Error" / "Timed out stopping the job
// ...", EventRecorder.Reason.SavepointError)).
const ReasonSavepointError = "SavepointError"

// ErrStopFailed: the operator's stop-with-savepoint did not complete.
var ErrStopFailed = errors.New("the operator could not stop the job with a savepoint")

// SavepointFormatKey is the operator setting whose value is the format of
// the savepoints it takes, its stop-with-savepoint's among them
// (KubernetesOperatorConfigOptions.OPERATOR_SAVEPOINT_FORMAT_TYPE, read in
// AbstractFlinkService.savepointJobOrError; default CANONICAL).
const SavepointFormatKey = "kubernetes.operator.savepoint.format.type"

// StopOptions are what the stop asks of Flink beyond the savepoint itself.
type StopOptions struct {
	// Drain: Flink emits MAX_WATERMARK before the savepoint (DrainOnSavepointKey).
	Drain bool
	// FormatType is the savepoint's format, CANONICAL or NATIVE; "" leaves
	// the deployment's own (SavepointFormatKey).
	FormatType string
	// Retries is how many failed stops the operator may retry before the
	// stop is given up: the operator tries again at each reconciliation
	// while the spec asks for a suspended job (an UpgradeFailureException
	// leaves the last reconciled spec as it was:
	// FlinkDeploymentController.reconcile), and Flink refuses a savepoint
	// while the job's tasks are still being deployed.
	Retries int
}

// conf is the operator settings the stop writes into the spec's
// flinkConfiguration. The operator reads them there: its observe config,
// with which it stops the job (ApplicationReconciler.cancelJob), takes
// every kubernetes.operator.* key of the current spec
// (FlinkConfigManager.getObserveConfig → applyConfigsFromCurrentSpec →
// addOperatorConfigsFromSpec).
func (o StopOptions) conf() map[string]string {
	c := map[string]string{}
	if o.Drain {
		c[DrainOnSavepointKey] = "true"
	}
	if o.FormatType != "" {
		c[SavepointFormatKey] = o.FormatType
	}
	return c
}

// StopPatch is the merge patch that makes the operator stop the job with a
// savepoint: job.state suspended in savepoint upgrade mode
// (AbstractJobReconciler.reconcileSpecChange → getJobUpgrade: a
// suspended desired state in SAVEPOINT mode → SuspendMode.SAVEPOINT →
// ApplicationReconciler.cancelJob → AbstractFlinkService.cancelJob →
// savepointJobOrError → stopWithSavepoint), and the options' settings in
// the spec's flinkConfiguration.
func StopPatch(o StopOptions) []byte {
	spec := map[string]any{"job": map[string]any{"state": "suspended", "upgradeMode": "savepoint"}}
	if c := o.conf(); len(c) > 0 {
		fc := map[string]any{}
		for k, v := range c {
			fc[k] = v
		}
		spec["flinkConfiguration"] = fc
	}
	b, _ := json.Marshal(map[string]any{"spec": spec})
	return b
}

// undoStopPatch puts back the fields StopPatch changed, as obj had them.
func undoStopPatch(obj *unstructured.Unstructured, o StopOptions) []byte {
	job := map[string]any{}
	for _, f := range []string{"state", "upgradeMode"} {
		v, found, _ := unstructured.NestedString(obj.Object, "spec", "job", f)
		if found {
			job[f] = v
		} else {
			job[f] = nil
		}
	}
	spec := map[string]any{"job": job}
	if c := o.conf(); len(c) > 0 {
		fc := map[string]any{}
		for k := range c {
			v, found, _ := unstructured.NestedString(obj.Object, "spec", "flinkConfiguration", k)
			if found {
				fc[k] = v
			} else {
				fc[k] = nil
			}
		}
		spec["flinkConfiguration"] = fc
	}
	b, _ := json.Marshal(map[string]any{"spec": spec})
	return b
}

// StopResult is what the operator recorded once the job stopped.
type StopResult struct {
	Path string
	DeploymentStatus
}

// stoppedPath tells whether the operator finished the stop of obj's
// job with a savepoint: the last reconciled spec is the suspended one
// (lifecycle SUSPENDED: CommonStatus.getLifecycleState) and the savepoint
// is recorded in status.jobStatus.upgradeSavepointPath
// (AbstractJobReconciler.setUpgradeSavepointPath; with snapshot resources
// on, it also creates an UPGRADE FlinkStateSnapshot of that path:
// FlinkStateSnapshotUtils.createUpgradeSnapshotResource). A
// StopWithSavepointStoppingException (the savepoint completed, the job then
// failed) keeps the path (savepointJobOrError), so it ends here too.
func stoppedPath(obj *unstructured.Unstructured) (string, bool) {
	st := ReadDeploymentStatus(obj)
	p, _, _ := unstructured.NestedString(obj.Object, "status", "jobStatus", "upgradeSavepointPath")
	if st.LifecycleState != "SUSPENDED" || p == "" || p == LastStateDummyPath {
		return "", false
	}
	observed, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	return p, observed >= obj.GetGeneration()
}

// StopWithSavepoint stops the job of FlinkDeployment namespace/name with a
// savepoint through the operator and returns the savepoint's path. It
// deletes nothing. When the stop does not complete (the operator's
// SavepointError, a JobManager that does not answer, the timeout), it puts
// back job.state and job.upgradeMode as they were, so the operator does not
// retry the stop behind the caller's back, and returns ErrStopFailed with
// the operator's words.
func StopWithSavepoint(ctx context.Context, dyn dynamic.Interface, namespace, name string, o StopOptions, timeout, every time.Duration) (StopResult, error) {
	r := dyn.Resource(FlinkDeploymentGVR).Namespace(namespace)
	before, err := r.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return StopResult{}, fmt.Errorf("reading FlinkDeployment %s/%s: %w", namespace, name, err)
	}
	start := time.Now()
	if _, err := r.Patch(ctx, name, ktypes.MergePatchType, StopPatch(o), metav1.PatchOptions{FieldManager: FieldManager}); err != nil {
		return StopResult{}, fmt.Errorf("%w: FlinkDeployment %s/%s: setting job.state suspended in savepoint mode: %w", ErrStopFailed, namespace, name, err)
	}
	var res StopResult
	var last *unstructured.Unstructured
	failures, seen := 0, ""
	err = poll(ctx, every, timeout, func(ctx context.Context) (bool, error) {
		obj, err := r.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, fmt.Errorf("reading FlinkDeployment %s/%s: %w", namespace, name, err)
		}
		last = obj
		res.DeploymentStatus = ReadDeploymentStatus(obj)
		if p, done := stoppedPath(obj); done {
			res.Path = p
			return true, nil
		}
		if strings.Contains(res.Error, upgradeFailureException) {
			// A failed read of the events is read again at the next poll.
			events, _ := ObjectEvents(ctx, dyn, obj)
			if ev := latestEvent(events, ReasonSavepointError, start); ev != nil {
				// Each new saying (a new event, or the same one again) is a
				// failed attempt.
				if key := fmt.Sprintf("%s|%d|%s", ev.Message, ev.Count, ev.Last); key != seen {
					seen, failures = key, failures+1
				}
				if failures <= o.Retries {
					return false, nil
				}
				return false, fmt.Errorf("%w: FlinkDeployment %s/%s: %s: %s", ErrStopFailed, namespace, name, ReasonSavepointError, stopWords(ev.Message, res.Error))
			}
		}
		return false, nil
	}, func(readErr error, end waitEnd) error {
		says := ""
		if last != nil {
			says = fmt.Sprintf(": lifecycle state %s, job state %s, JobManager %s%s%s", orNone(res.LifecycleState), orNone(res.JobState),
				orNone(jobManagerStatus(last)), end.hint(operatorActivity(res.DeploymentStatus)), eventsSay(ctx, dyn, last))
		}
		return fmt.Errorf("%w: FlinkDeployment %s/%s %s waiting for the job to stop with a savepoint%s%s",
			ErrStopFailed, namespace, name, end.when(), says, readFailure(readErr))
	})
	if err == nil {
		return res, nil
	}
	if !errors.Is(err, ErrStopFailed) {
		err = fmt.Errorf("%w: %w", ErrStopFailed, err)
	}
	// Put back what the patch changed; the caller reports the stop's
	// failure whatever the undo's outcome, and says so if it failed.
	if _, uerr := r.Patch(context.WithoutCancel(ctx), name, ktypes.MergePatchType, undoStopPatch(before, o),
		metav1.PatchOptions{FieldManager: FieldManager}); uerr != nil {
		err = fmt.Errorf("%w (putting back job.state and job.upgradeMode failed too: %v; the spec still asks for a suspended job)", err, uerr)
	}
	return res, err
}

// stopWords is the operator's message, with status.error's when the
// event is the bare "Savepoint Error" (the cause is in status.error).
func stopWords(event, statusError string) string {
	if event == "Savepoint Error" && statusError != "" {
		return event + " (" + statusError + ")"
	}
	return event
}
