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
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
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
const SavepointFormatKey = flinkconf.SavepointFormatKey

// LastStateFallbackKey is the operator setting that lets it suspend a
// savepoint-mode job that is not running in last-state mode instead
// (KubernetesOperatorConfigOptions.OPERATOR_JOB_UPGRADE_LAST_STATE_FALLBACK_ENABLED,
// default true; AbstractJobReconciler.getJobUpgrade): that suspend takes no
// savepoint and leaves status.jobStatus.upgradeSavepointPath as it was (an
// older savepoint's path, or none), so the stop writes it false and the
// operator waits for a running job instead.
const LastStateFallbackKey = "kubernetes.operator.job.upgrade.last-state-fallback.enabled"

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
	// NotRunningFor is how long the job may be seen not RUNNING after the
	// stop was written before the stop is given up: the operator stops
	// only a running job (AbstractFlinkService.savepointJobOrError), and
	// otherwise waits (getJobUpgrade: pendingUpgrade), e.g. for a
	// JobManager that stopped answering. Zero waits to the timeout.
	NotRunningFor time.Duration
}

// conf is the operator settings the stop writes into the spec's
// flinkConfiguration. The operator reads them there: its observe config,
// with which it stops the job (ApplicationReconciler.cancelJob), takes
// every kubernetes.operator.* key of the current spec
// (FlinkConfigManager.getObserveConfig → applyConfigsFromCurrentSpec →
// addOperatorConfigsFromSpec).
func (o StopOptions) conf() map[string]string {
	c := map[string]string{LastStateFallbackKey: "false"}
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
//
// The path must be a new one, not the one before held: a suspend that took
// no savepoint leaves it as it was (ApplicationReconciler.cancelJob sets it
// only from the CancelResult's savepoint).
func stoppedPath(obj *unstructured.Unstructured, before string) (string, bool) {
	st := ReadDeploymentStatus(obj)
	p, _, _ := unstructured.NestedString(obj.Object, "status", "jobStatus", "upgradeSavepointPath")
	if st.LifecycleState != "SUSPENDED" || p == "" || p == LastStateDummyPath || p == before {
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
	rebased, err := writeStop(ctx, r, before, o)
	if err != nil {
		return StopResult{}, fmt.Errorf("%w: FlinkDeployment %s/%s: setting job.state suspended in savepoint mode: %w", ErrStopFailed, namespace, name, err)
	}
	var res StopResult
	var last *unstructured.Unstructured
	failures, seen := 0, ""
	oldPath, _, _ := unstructured.NestedString(before.Object, "status", "jobStatus", "upgradeSavepointPath")
	var notRunningSince time.Time
	err = poll(ctx, every, timeout, func(ctx context.Context) (bool, error) {
		obj, err := r.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, fmt.Errorf("reading FlinkDeployment %s/%s: %w", namespace, name, err)
		}
		last = obj
		res.DeploymentStatus = ReadDeploymentStatus(obj)
		if p, done := stoppedPath(obj, oldPath); done {
			res.Path = p
			return true, nil
		}
		if res.JobState == "RUNNING" || res.LifecycleState == "SUSPENDED" {
			notRunningSince = time.Time{}
		} else if notRunningSince.IsZero() {
			notRunningSince = time.Now()
		} else if o.NotRunningFor > 0 && time.Since(notRunningSince) >= o.NotRunningFor {
			return false, fmt.Errorf("%w: FlinkDeployment %s/%s: the job is not running (job state %s, JobManager %s for %s): the operator stops only a running job with a savepoint, and waits",
				ErrStopFailed, namespace, name, orNone(res.JobState), orNone(jobManagerStatus(obj)), o.NotRunningFor)
		}
		if err := validatorRefused(ctx, dyn, obj, start); err != nil {
			// The operator acts on the spec it last reconciled and will
			// refuse this one again at each reconciliation.
			return false, fmt.Errorf("%w: the stop was refused: %w", ErrStopFailed, err)
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
	if uerr := undoStop(context.WithoutCancel(ctx), r, before, o, rebased); uerr != nil {
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

// specIfRefused is the spec the operator acts on while its validator
// refuses obj's current spec: the one it last reconciled. A refused spec
// is not acted on at all (FlinkDeploymentController.validateDeployment →
// ReconciliationUtils.applyValidationErrorAndResetSpec: "We need to
// observe/reconcile using the last version of the deployment spec",
// deployment.setSpec(lastReconciledSpec); flink-kubernetes-operator
// release-1.15.0), so a stop written onto it would never happen. ok is
// false when obj's current spec is not the refused one.
func specIfRefused(obj *unstructured.Unstructured) (map[string]any, bool) {
	st := ReadDeploymentStatus(obj)
	observed, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	if !strings.Contains(st.Error, validationException) || observed >= obj.GetGeneration() {
		return nil, false
	}
	text, _, _ := unstructured.NestedString(obj.Object, "status", "reconciliationStatus", "lastReconciledSpec")
	var w map[string]any
	if text == "" || json.Unmarshal([]byte(text), &w) != nil {
		return nil, false
	}
	// {"spec": …, "resource_metadata": …}, or the spec itself in the older
	// format (SpecUtils.deserializeSpecWithMeta).
	spec := w
	if _, meta := w["resource_metadata"]; meta {
		spec, _ = w["spec"].(map[string]any)
	}
	if spec == nil {
		return nil, false
	}
	return dropNulls(spec), true
}

// dropNulls removes the null fields the operator's serializer writes
// (unset optional fields): the API server would prune them anyway.
func dropNulls(m map[string]any) map[string]any {
	for k, v := range m {
		switch t := v.(type) {
		case nil:
			delete(m, k)
		case map[string]any:
			m[k] = dropNulls(t)
		}
	}
	return m
}

// writeStop asks the operator to stop the job: a merge patch of StopPatch
// onto the live spec, or, when the operator's validator refused the live
// spec, a merge patch that makes the spec the one it last reconciled with
// the stop on it (a stop of the job that runs; rebased is then true),
// conditional on the resourceVersion it was computed from and retried on
// conflicts with the operator's status writes.
func writeStop(ctx context.Context, r dynamic.ResourceInterface, before *unstructured.Unstructured, o StopOptions) (rebased bool, err error) {
	if _, refused := specIfRefused(before); !refused {
		_, err := r.Patch(ctx, before.GetName(), ktypes.MergePatchType, StopPatch(o), metav1.PatchOptions{FieldManager: FieldManager})
		return false, err
	}
	var stop struct {
		Spec map[string]any `json:"spec"`
	}
	_ = json.Unmarshal(StopPatch(o), &stop)
	return true, patchSpecTo(ctx, r, before.GetName(), func(cur *unstructured.Unstructured) (map[string]any, error) {
		spec, refused := specIfRefused(cur)
		if !refused {
			return nil, errors.New("the operator's validation error went away while the stop was written: apply again")
		}
		return spec, mergeInto(spec, stop.Spec)
	})
}

// patchSpecTo makes the spec of the FlinkDeployment name the one want
// computes from the live object, by a merge patch conditional on the live
// object's resourceVersion (retried on conflicts).
func patchSpecTo(ctx context.Context, r dynamic.ResourceInterface, name string, want func(*unstructured.Unstructured) (map[string]any, error)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := r.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		spec, err := want(cur)
		if err != nil {
			return err
		}
		live, _, _ := unstructured.NestedMap(cur.Object, "spec")
		from, err := json.Marshal(map[string]any{"spec": live})
		if err != nil {
			return err
		}
		to, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": cur.GetResourceVersion()}, "spec": spec})
		if err != nil {
			return err
		}
		// The JSON merge patch (RFC 7396) from the live spec to spec: a
		// removed field is null, anything else changed is written.
		b, err := jsonmergepatch.CreateThreeWayJSONMergePatch(from, to, from)
		if err != nil {
			return err
		}
		_, err = r.Patch(ctx, name, ktypes.MergePatchType, b, metav1.PatchOptions{FieldManager: FieldManager})
		return err
	})
}

// mergeInto applies the nested map patch onto m.
func mergeInto(m, patch map[string]any) error {
	for k, v := range patch {
		pv, isMap := v.(map[string]any)
		if !isMap {
			m[k] = v
			continue
		}
		sub, ok := m[k].(map[string]any)
		if !ok {
			if m[k] != nil {
				return fmt.Errorf("spec.%s is not an object", k)
			}
			sub = map[string]any{}
			m[k] = sub
		}
		if err := mergeInto(sub, pv); err != nil {
			return err
		}
	}
	return nil
}

// undoStop puts back what writeStop changed: the fields StopPatch set, or,
// when the stop was written onto the last reconciled spec, the whole spec
// as before had it.
func undoStop(ctx context.Context, r dynamic.ResourceInterface, before *unstructured.Unstructured, o StopOptions, rebased bool) error {
	if !rebased {
		_, err := r.Patch(ctx, before.GetName(), ktypes.MergePatchType, undoStopPatch(before, o), metav1.PatchOptions{FieldManager: FieldManager})
		return err
	}
	spec, _, _ := unstructured.NestedMap(before.Object, "spec")
	return patchSpecTo(ctx, r, before.GetName(), func(*unstructured.Unstructured) (map[string]any, error) { return spec, nil })
}

// validatorRefused is the operator validator's refusal of the spec with
// the stop (refusedUpdate), said after the stop was written and while the
// stop's generation is not observed (a refused spec never is:
// applyValidationErrorAndResetSpec sets the generation back to the
// observed one). An event stamped in the second the stop was written may
// be the refusal of the spec before it (an event's time has whole
// seconds), so only later ones count; the operator says it again at its
// next reconciliation.
func validatorRefused(ctx context.Context, dyn dynamic.Interface, obj *unstructured.Unstructured, since time.Time) error {
	observed, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	if observed >= obj.GetGeneration() {
		return nil
	}
	return refusedUpdate(ctx, dyn, obj, ReadDeploymentStatus(obj), since.Truncate(time.Second).Add(time.Second))
}
