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

// JobNotFound is status.error when the operator finds no job on a running
// JobManager (JobStatusObserver.JOB_NOT_FOUND_ERR, onTargetJobNotFound;
// flink-kubernetes-operator release-1.15.0), with a Warning event Missing.
const JobNotFound = "Job Not Found"

// ErrDeploymentTimeout is returned when a deployment is not ready in time.
var ErrDeploymentTimeout = errors.New("FlinkDeployment not ready in time")

// WaitSuspended is the wait target of a spec with job.state suspended:
// lifecycleState SUSPENDED. The operator's CommonStatus.getLifecycleState
// (flink-kubernetes-operator-api, lifecycle/ResourceLifecycleState) returns
// SUSPENDED once the last reconciled spec's job.state is suspended, and a
// suspended job never becomes DEPLOYED, STABLE or RUNNING, so "deployed" and
// "running" cannot be waited for.
const WaitSuspended = "suspended"

// ErrSpecRejected: the operator's validator refused the spec. On a create
// the operator records the ValidationException in status.error and the
// lifecycle is FAILED, and it never deploys that spec
// (ReconciliationUtils.applyValidationErrorAndResetSpec, CommonStatus.getLifecycleState:
// FAILED before the first deployment with an error; flink-kubernetes-operator
// release-1.15.0).
var ErrSpecRejected = errors.New("the Flink operator rejected the spec")

const validationException = "org.apache.flink.kubernetes.operator.exception.ValidationException"

// RejectedBeforeFirstDeployment tells whether the operator's validator
// refused the spec of a FlinkDeployment that was never deployed. Operator
// 1.15.0 then records the ValidationException in status.error and returns
// before anything else is recorded: no observedGeneration, no
// lastReconciledSpec (FlinkDeploymentController.validateDeployment →
// ReconciliationUtils.applyValidationErrorAndResetSpec, "Validation failed
// before anything was deployed, nothing to do"), and the lifecycle is
// FAILED (CommonStatus.getLifecycleState: FAILED before the first
// deployment when status.error is set).
func RejectedBeforeFirstDeployment(obj *unstructured.Unstructured) bool {
	st := ReadDeploymentStatus(obj)
	return st.LifecycleState == "FAILED" && !DeployedOnce(obj) && strings.Contains(st.Error, validationException)
}

// DeployedOnce tells whether the operator ever deployed (or is deploying)
// a spec of this FlinkDeployment: it records the spec it deploys in
// status.reconciliationStatus.lastReconciledSpec, and clears it again when
// the first deployment did not go through (AbstractFlinkResourceObserver
// .isResourceReadyToBeObserved → ReconciliationUtils
// .clearLastReconciledSpecIfFirstDeploy, "Clearing last reconciled spec
// after initial deploy failure"). Without it no JobManager of this object
// ever ran, so no job, checkpoint or HA metadata of it exists. (A job id
// alone says nothing: the operator picks it before it deploys,
// ApplicationReconciler.setJobIdIfNecessary.)
func DeployedOnce(obj *unstructured.Unstructured) bool {
	last, _, _ := unstructured.NestedString(obj.Object, "status", "reconciliationStatus", "lastReconciledSpec")
	return last != ""
}

// FailedBeforeItRan tells whether the first deployment of a FlinkDeployment
// failed before its JobManager ever started, so that no job ran and no
// state of it exists: the operator reports the JobManager's container
// error (DeploymentFailedException, e.g. "[flink-main-container] Back-off
// pulling image …": AbstractFlinkDeploymentObserver.checkContainerErrors,
// recorded by FlinkDeploymentController.reconcile with the JobManager
// ERROR and the job RECONCILING), the spec it deployed is still the first
// one (lastReconciledSpec's resource_metadata.firstDeployment:
// ReconciliationMetadata.from), the job never started (no
// jobStatus.startTime, which the observer takes from the running job's
// details), and no HA metadata exists (HAMetadataAvailable). A failed read
// counts as "it may have run".
func FailedBeforeItRan(ctx context.Context, dyn dynamic.Interface, obj *unstructured.Unstructured) bool {
	st := ReadDeploymentStatus(obj)
	if !strings.Contains(st.Error, "org.apache.flink.kubernetes.operator.exception.DeploymentFailedException") ||
		jobManagerStatus(obj) != "ERROR" || st.JobState == "RUNNING" {
		return false
	}
	if start, _, _ := unstructured.NestedString(obj.Object, "status", "jobStatus", "startTime"); start != "" {
		return false
	}
	if DeployedOnce(obj) {
		if last, ok := lastReconciled(obj); !ok || !last.Meta || !last.FirstDeployment {
			return false
		}
	}
	ha, err := HAMetadataAvailable(ctx, dyn, obj.GetNamespace(), obj.GetName())
	return err == nil && !ha
}

// retriedError tells whether status.error is an exception the operator
// retries by itself: a ReconciliationException thrown by a reconciliation
// (FlinkDeploymentController.reconcile wraps what its reconcilers throw;
// updateErrorStatus records it, and the Java Operator SDK reschedules the
// reconciliation with backoff, GenericRetry). Its lifecycle then stays what
// it was unless the error is terminal (CommonStatus.getLifecycleState).
func retriedError(statusError string) bool {
	return strings.Contains(statusError, `"type":"org.apache.flink.kubernetes.operator.exception.ReconciliationException"`)
}

// DeploymentReady tells whether a FlinkDeployment has reached waitFor
// ("deployed": lifecycleState DEPLOYED or STABLE; "running":
// jobStatus.state RUNNING; WaitSuspended: lifecycleState SUSPENDED) for its
// current generation. A FAILED lifecycle
// or an error in status is an error with the operator's message. current
// is false while the operator has not observed this generation: until then
// the status describes the previous spec.
func DeploymentReady(obj *unstructured.Unstructured, waitFor string) (st DeploymentStatus, current, ready bool, err error) {
	st = ReadDeploymentStatus(obj)
	observed, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	current = observed >= obj.GetGeneration()
	switch {
	case !current && RejectedBeforeFirstDeployment(obj):
		// No observedGeneration is recorded for a spec refused before
		// anything was deployed, but every spec written so far is
		// unreconciled: the refusal is this spec's.
		return st, current, false, fmt.Errorf("%w: FlinkDeployment %s/%s was refused by the operator's validator before anything was deployed: %s",
			ErrSpecRejected, obj.GetNamespace(), obj.GetName(), OperatorMessage(st.Error))
	case !current:
	case retriedError(st.Error) && (st.LifecycleState != "FAILED" || !DeployedOnce(obj)):
		// Progress, not the end: the operator retries it and may recover
		// (the wait's end reports it: operatorActivity). A first
		// deployment that failed so shows FAILED for a moment on each
		// retry: the observer clears its lastReconciledSpec
		// (AbstractFlinkResourceObserver.isResourceReadyToBeObserved →
		// ReconciliationUtils.clearLastReconciledSpecIfFirstDeploy) and
		// FlinkDeploymentController.reconcile writes that status, error
		// still set, before the reconciler records the spec again and
		// clears the error (updateStatusBeforeFirstDeployment), and
		// CommonStatus.getLifecycleState says FAILED for an error before
		// the first deployment. That FAILED is the retry, not an end.
	case st.LifecycleState == "FAILED" || st.Error != "":
		msg := OperatorMessage(st.Error)
		if msg == "" {
			msg = "the operator gave no error message"
		}
		err := fmt.Errorf("FlinkDeployment %s/%s failed (lifecycle %s, job %s): %s", obj.GetNamespace(), obj.GetName(),
			orNone(st.LifecycleState), orNone(st.JobState), msg)
		if st.LifecycleState == "FAILED" && strings.Contains(st.Error, validationException) {
			err = fmt.Errorf("%w: %w", ErrSpecRejected, err)
		}
		return st, current, false, err
	case waitFor == "deployed" && (st.LifecycleState == "DEPLOYED" || st.LifecycleState == "STABLE"):
		return st, current, true, nil
	case waitFor == "running" && st.JobState == "RUNNING":
		return st, current, true, nil
	case waitFor == WaitSuspended && st.LifecycleState == "SUSPENDED":
		return st, current, true, nil
	}
	return st, current, false, nil
}

// WaitDeployment polls until the deployment is ready as waitFor says
// (DeploymentReady), fails, or timeout passes. Transient read failures
// (the API server restarting, a network blip) are retried until the
// timeout. The last status seen is always returned.
func WaitDeployment(ctx context.Context, dyn dynamic.Interface, namespace, name, waitFor string, timeout, every time.Duration) (DeploymentStatus, error) {
	return WaitDeploymentSince(ctx, dyn, namespace, name, waitFor, time.Now(), timeout, every)
}

// WaitDeploymentSince is WaitDeployment for a spec written at written: a
// refusal the operator said at or after that time is this spec's
// (refusedUpdate), even when it came before the wait began.
func WaitDeploymentSince(ctx context.Context, dyn dynamic.Interface, namespace, name, waitFor string, written time.Time, timeout, every time.Duration) (DeploymentStatus, error) {
	var last DeploymentStatus
	var lastObj *unstructured.Unstructured
	var current bool
	start := written
	err := poll(ctx, every, timeout, func(ctx context.Context) (bool, error) {
		obj, err := dyn.Resource(FlinkDeploymentGVR).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, fmt.Errorf("reading FlinkDeployment %s/%s: %w", namespace, name, err)
		}
		lastObj = obj
		var ready bool
		last, current, ready, err = DeploymentReady(obj, waitFor)
		if err == nil && !current {
			err = refusedUpdate(ctx, dyn, obj, last, start)
		}
		if err == nil && !current {
			err = upgradeRefused(ctx, dyn, obj, last, start)
		}
		return ready, err
	}, func(readErr error, end waitEnd) error {
		switch {
		case lastObj == nil:
			return fmt.Errorf("%w: %s/%s %s waiting for %s: could not read it%s", end.err(ErrDeploymentTimeout), namespace, name, end.when(), waitFor, readFailure(readErr))
		case !current:
			observed, _, _ := unstructured.NestedInt64(lastObj.Object, "status", "observedGeneration")
			says, waiting := unobservedSince(ctx, dyn, lastObj, last, start, end)
			return fmt.Errorf("%w: %s/%s %s waiting for %s: the operator has not observed generation %d yet (observed %d)%s%s%s",
				waitingErr(end.err(ErrDeploymentTimeout), waiting), namespace, name, end.when(), waitFor, lastObj.GetGeneration(), observed,
				says, eventsSay(ctx, dyn, lastObj), readFailure(readErr))
		}
		return fmt.Errorf("%w: %s/%s %s waiting for %s: lifecycle state %s, job state %s%s%s%s",
			end.err(ErrDeploymentTimeout), namespace, name, end.when(), waitFor, orNone(last.LifecycleState), orNone(last.JobState),
			end.hint(operatorActivity(last)), eventsSay(ctx, dyn, lastObj), readFailure(readErr))
	})
	return last, err
}

// refusedUpdate tells whether the spec written just before a wait that
// began at start was refused by the operator's validator. For a FlinkDeployment
// deployed before, the operator keeps the last reconciled spec in force,
// leaves observedGeneration at the generation it last reconciled, puts the
// ValidationException in status.error and writes a ValidationError event
// (FlinkDeploymentController.validateDeployment,
// ReconciliationUtils.applyValidationErrorAndResetSpec). status.error
// alone may still be an older refusal; the event, said again (same name,
// count+1, new lastTimestamp: EventUtils.createOrUpdateEventWithLabels)
// each time the operator validates the spec, at or after start, is this
// one's.
func refusedUpdate(ctx context.Context, dyn dynamic.Interface, obj *unstructured.Unstructured, st DeploymentStatus, start time.Time) error {
	if !strings.Contains(st.Error, validationException) {
		return nil
	}
	// A failed read of the events is not the wait's end: the status and
	// the events are read again at the next poll.
	events, _ := ObjectEvents(ctx, dyn, obj)
	if ev := latestEvent(events, ReasonValidationError, start); ev != nil {
		return fmt.Errorf("%w: FlinkDeployment %s/%s: the operator's validator refused generation %d (the job keeps running with the spec it last reconciled): %s",
			ErrSpecRejected, obj.GetNamespace(), obj.GetName(), obj.GetGeneration(), ev.Message)
	}
	return nil
}

// ErrUpgradeFailed: the operator will not apply a spec change by itself.
// ApplicationReconciler.getJobUpgrade (flink-kubernetes-operator
// release-1.15.0) throws UpgradeFailureException when no stateful upgrade
// can be made — a JobManager that is MISSING or in ERROR with no HA
// metadata ("JobManager deployment is missing and HA metadata is not
// available to make stateful upgrades. … Manual restore required."), or a
// job in a terminal state whose last checkpoint is unknown
// (AbstractJobReconciler.getJobUpgrade, "… Manual restore required.");
// FlinkDeploymentController.reconcile records it in status.error
// (updateForReconciliationError) and writes a Warning event of reason
// "UpgradeFailed" (triggerErrorEvent), without observing the new
// generation, and says it again at every reconciliation, for ever.
var ErrUpgradeFailed = errors.New("the Flink operator will not apply the change by itself")

const upgradeFailureException = "org.apache.flink.kubernetes.operator.exception.UpgradeFailureException"

// ReasonUpgradeFailed is the reason of the event the operator writes for an
// UpgradeFailureException (its getReason(), "UpgradeFailed" wherever
// getJobUpgrade throws it).
const ReasonUpgradeFailed = "UpgradeFailed"

// ReasonSpecChanged: the operator saw a spec change and starts reconciling
// it (AbstractFlinkResourceReconciler.triggerSpecChangeEvent, a Normal
// event written once per generation: triggerEventOnce with the key
// "SpecChange: <generation>"), whether or not it can then apply it.
const ReasonSpecChanged = "SpecChanged"

// upgradeRefused tells whether the operator gave up on the spec change
// written at start (ErrUpgradeFailed): an UpgradeFailureException in
// status.error and its UpgradeFailed event said at or after start (the
// event, said again at each reconciliation, is this spec's once said after
// it was written; status.error alone may be an older one's).
func upgradeRefused(ctx context.Context, dyn dynamic.Interface, obj *unstructured.Unstructured, st DeploymentStatus, start time.Time) error {
	if !strings.Contains(st.Error, upgradeFailureException) {
		return nil
	}
	// A failed read of the events is read again at the next poll.
	events, _ := ObjectEvents(ctx, dyn, obj)
	ev := latestEvent(events, ReasonUpgradeFailed, start)
	if ev == nil {
		return nil
	}
	observed, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	return fmt.Errorf("%w: FlinkDeployment %s/%s: the operator refused to upgrade to generation %d and will not retry it by itself "+
		"(UpgradeFailed: %s). Its job is %s and its JobManager %s; the spec it last reconciled (generation %d) stays in force",
		ErrUpgradeFailed, obj.GetNamespace(), obj.GetName(), obj.GetGeneration(), ev.Message, orNone(st.JobState),
		orNone(jobManagerStatus(obj)), observed)
}

func jobManagerStatus(obj *unstructured.Unstructured) string {
	s, _, _ := unstructured.NestedString(obj.Object, "status", "jobManagerDeploymentStatus")
	return s
}

// WaitingForUpgradeableState tells whether the operator saw the spec
// change written at start and waits before applying it: its SpecChanged
// event at or after start, no error, the new generation not observed.
// AbstractJobReconciler.reconcileSpecChange then found no stateful upgrade
// available (getJobUpgrade: the job is not running, its state is not
// terminal, and it cannot be cancelled — e.g. a JobManager that never
// became ready, job RECONCILING) and only logs "Job is not running and
// checkpoint information is not available for executing the upgrade,
// waiting for upgradeable state", every reconcile interval, until the job
// runs (seen on the real operator 1.15.0: TestDifferential_upgradeNeverReady).
func WaitingForUpgradeableState(ctx context.Context, dyn dynamic.Interface, obj *unstructured.Unstructured, st DeploymentStatus, start time.Time) (*OperatorEvent, bool) {
	if st.Error != "" {
		return nil, false
	}
	observed, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	if observed >= obj.GetGeneration() {
		return nil, false
	}
	events, err := ObjectEvents(ctx, dyn, obj)
	if err != nil {
		return nil, false
	}
	ev := latestEvent(events, ReasonSpecChanged, start)
	return ev, ev != nil
}

// unobservedSince words the status of a wait that ended before the
// operator observed the generation written at start: that it saw the
// change and waits for an upgradeable state (WaitingForUpgradeableState),
// else its error (which may be this spec's or the previous one's), else
// the question whether it runs at all.
func unobservedSince(ctx context.Context, dyn dynamic.Interface, obj *unstructured.Unstructured, st DeploymentStatus, start time.Time, end waitEnd) (string, bool) {
	if ev, ok := WaitingForUpgradeableState(ctx, dyn, obj, st, start); ok {
		return fmt.Sprintf("; the operator saw the change at %s (%s: %s) and waits for an upgradeable state: its job is %s and its "+
			"JobManager %s, so it can neither take the job's state with it nor cancel it, and it applies the change only once the job "+
			"runs (AbstractJobReconciler.reconcileSpecChange, \"waiting for upgradeable state\"). A job that cannot run with the "+
			"spec it last reconciled never gets there",
			ev.Last.UTC().Format(time.RFC3339), ev.Reason, ev.Message, orNone(st.JobState), orNone(jobManagerStatus(obj))), true
	}
	if msg := operatorSays(st); msg != "" {
		return msg, false
	}
	return end.hint(operatorActivity(st)), false
}

// ErrWaitingForUpgradeableState: a wait ended while the operator waited
// for an upgradeable state (WaitingForUpgradeableState); it wraps the
// wait's own end (ErrDeploymentTimeout or ErrInterrupted).
var ErrWaitingForUpgradeableState = errors.New("the Flink operator waits for an upgradeable state")

func waitingErr(end error, waiting bool) error {
	if !waiting {
		return end
	}
	return fmt.Errorf("%w (%w)", end, ErrWaitingForUpgradeableState)
}

// operatorActivity words what the operator is doing when a wait ends: an
// error it retries (the Java Operator SDK retries a reconciliation that
// threw, with backoff, and the operator reschedules it every reconcile
// interval: FlinkDeploymentController.updateErrorStatus →
// ReconciliationUtils.toErrorStatusUpdateControl), or nothing said at all.
func operatorActivity(st DeploymentStatus) string {
	if msg := OperatorMessage(st.Error); msg != "" {
		return "; the operator reports an error and retries the reconciliation: " + msg
	}
	return " (the operator has written no error; is it running, and does it watch this namespace?)"
}

// eventsSay words the warning events on obj for a wait that ended.
func eventsSay(ctx context.Context, dyn dynamic.Interface, obj *unstructured.Unstructured) string {
	if obj == nil {
		return ""
	}
	events, err := ObjectEvents(ctx, dyn, obj)
	if err != nil {
		return ""
	}
	return describeEvents(events)
}

// WaitRestored polls until the job of the deployment's current generation
// is RUNNING and, when path is not empty, the operator records that it
// deployed it from path (status.jobStatus.upgradeSavepointPath, set to
// initialSavepointPath on first deployment by
// AbstractFlinkResourceReconciler.updateStatusBeforeFirstDeployment and to
// the restore path on a redeploy or upgrade; flink-kubernetes-operator
// release-1.15.0). The operator marks a deployment DEPLOYED as soon as the
// JobManager is submitted, before Flink has restored anything
// (ReconciliationUtils.updateStatusForDeployedSpec), so a restoring change
// waits for this instead. A job that fails (a restore Flink refuses) ends
// the wait with the operator's message (DeploymentReady).
func WaitRestored(ctx context.Context, dyn dynamic.Interface, namespace, name, path string, timeout, every time.Duration) (DeploymentStatus, error) {
	return WaitRestoredSince(ctx, dyn, namespace, name, path, time.Now(), timeout, every)
}

// WaitRestoredSince is WaitRestored for a spec written at written (see
// WaitDeploymentSince).
func WaitRestoredSince(ctx context.Context, dyn dynamic.Interface, namespace, name, path string, written time.Time, timeout, every time.Duration) (DeploymentStatus, error) {
	var last DeploymentStatus
	var lastObj *unstructured.Unstructured
	var recorded string
	var current bool
	err := poll(ctx, every, timeout, func(ctx context.Context) (bool, error) {
		obj, err := dyn.Resource(FlinkDeploymentGVR).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, fmt.Errorf("reading FlinkDeployment %s/%s: %w", namespace, name, err)
		}
		lastObj = obj
		var running bool
		last, current, running, err = DeploymentReady(obj, "running")
		if err == nil && !current {
			err = refusedUpdate(ctx, dyn, obj, last, written)
		}
		if err == nil && !current {
			err = upgradeRefused(ctx, dyn, obj, last, written)
		}
		recorded, _, _ = unstructured.NestedString(obj.Object, "status", "jobStatus", "upgradeSavepointPath")
		samePath := strings.TrimSuffix(recorded, "/") == strings.TrimSuffix(path, "/")
		if err != nil && path != "" && samePath && last.Error == JobNotFound {
			err = fmt.Errorf("%w. The operator handed Flink %s to restore from and finds no job: Flink could not start the job from it. "+
				"Its reason is in the JobManager's log only (on a path Flink cannot resolve or read, the JobManager exits; restarted, "+
				"with Kubernetes HA, it runs no job: seen on the real operator 1.15.0 with Flink 2.2.1)", err, path)
		}
		return running && (path == "" || samePath), err
	}, func(readErr error, end waitEnd) error {
		what := "its job running"
		if path != "" {
			what = "its job running from " + path
		}
		detail := fmt.Sprintf("lifecycle state %s, job state %s", orNone(last.LifecycleState), orNone(last.JobState))
		if path != "" && last.JobState == "RUNNING" {
			detail += fmt.Sprintf(", restored from %s", orNone(recorded))
		}
		hint := end.hint(" (is the Flink operator running?)")
		waiting := false
		if !current && lastObj != nil {
			observed, _, _ := unstructured.NestedInt64(lastObj.Object, "status", "observedGeneration")
			var says string
			says, waiting = unobservedSince(ctx, dyn, lastObj, last, written, end)
			detail = fmt.Sprintf("the operator has not observed generation %d yet (observed %d)%s%s", lastObj.GetGeneration(), observed,
				says, eventsSay(ctx, dyn, lastObj))
			hint = ""
		}
		return fmt.Errorf("%w: %s/%s %s waiting for %s: %s%s%s",
			waitingErr(end.err(ErrDeploymentTimeout), waiting), namespace, name, end.when(), what, detail, hint, readFailure(readErr))
	})
	return last, err
}

// operatorSays is status.error for a wait that ended before the operator
// observed the new generation. The operator records an exception thrown while
// reconciling a spec change (e.g. UpgradeFailureException from
// ApplicationReconciler.getJobUpgrade, "Manual restore required.") without
// advancing observedGeneration, so the error may be this change's refusal
// or still the previous generation's: it is reported, never acted on.
func operatorSays(st DeploymentStatus) string {
	if msg := OperatorMessage(st.Error); msg != "" {
		return ". The operator's status.error (it may still describe the previous generation): " + msg
	}
	return ""
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

// GetFlinkDeployment reads a FlinkDeployment; a *notfound.Error when the
// API server answers that it does not exist.
func GetFlinkDeployment(ctx context.Context, dyn dynamic.Interface, namespace, name string) (*unstructured.Unstructured, error) {
	return get(ctx, dyn, FlinkDeploymentGVR, "FlinkDeployment", namespace, name)
}
