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
	"k8s.io/apimachinery/pkg/runtime/schema"
	ktypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
)

// The Flink operator's resources.
var (
	FlinkDeploymentGVR    = schema.GroupVersionResource{Group: "flink.apache.org", Version: "v1beta1", Resource: "flinkdeployments"}
	FlinkStateSnapshotGVR = schema.GroupVersionResource{Group: "flink.apache.org", Version: "v1beta1", Resource: "flinkstatesnapshots"}
	// FlinkBlueGreenDeploymentGVR: the operator's fourth CRD (1.15.0,
	// api/FlinkBlueGreenDeployment: @Group flink.apache.org @Version v1beta1).
	FlinkBlueGreenDeploymentGVR = schema.GroupVersionResource{Group: "flink.apache.org", Version: "v1beta1", Resource: "flinkbluegreendeployments"}
)

// Snapshot states the operator reports.
const (
	SnapshotCompleted      = "COMPLETED"
	SnapshotFailed         = "FAILED"
	SnapshotAbandoned      = "ABANDONED"
	SnapshotInProgress     = "IN_PROGRESS"
	SnapshotTriggerPending = "TRIGGER_PENDING"
)

// SnapshotSpec is what the provider asks of the operator.
type SnapshotSpec struct {
	DeploymentName  string
	Type            string // "savepoint" or "checkpoint"
	FormatType      string // CANONICAL or NATIVE (savepoints)
	DisposeOnDelete bool
	Path            string // savepoint target dir, or the existing savepoint with AlreadyExists
	AlreadyExists   bool
	BackoffLimit    int64
}

// Object renders the FlinkStateSnapshot. disposeOnDelete is always written:
// the operator's default (true) deletes the savepoint's files with the object.
func (s SnapshotSpec) Object(namespace, name, generateName string) *unstructured.Unstructured {
	spec := map[string]any{"backoffLimit": s.BackoffLimit}
	if s.DeploymentName != "" {
		// An existing savepoint may be recorded without a job: the
		// operator requires jobReference only when it takes the snapshot
		// (release-1.15.0 DefaultValidator.validateStateSnapshot: "Job
		// reference must be supplied for this snapshot" after the
		// alreadyExists return).
		spec["jobReference"] = map[string]any{"kind": "FlinkDeployment", "name": s.DeploymentName}
	}
	if s.Type == "checkpoint" {
		spec["checkpoint"] = map[string]any{}
	} else {
		sp := map[string]any{"formatType": s.FormatType, "disposeOnDelete": s.DisposeOnDelete, "alreadyExists": s.AlreadyExists}
		if s.Path != "" {
			sp["path"] = s.Path
		}
		spec["savepoint"] = sp
	}
	meta := map[string]any{"namespace": namespace}
	if name != "" {
		meta["name"] = name
	} else {
		meta["generateName"] = generateName
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "flink.apache.org/v1beta1",
		"kind":       "FlinkStateSnapshot",
		"metadata":   meta,
		"spec":       spec,
	}}
}

// SnapshotStatus is the operator's view of a snapshot.
type SnapshotStatus struct {
	State           string
	Path            string
	Error           string
	Failures        int64
	ResultTimestamp string
}

// ReadSnapshotStatus reads status from a FlinkStateSnapshot object.
func ReadSnapshotStatus(obj *unstructured.Unstructured) SnapshotStatus {
	st := SnapshotStatus{}
	st.State, _, _ = unstructured.NestedString(obj.Object, "status", "state")
	st.Path, _, _ = unstructured.NestedString(obj.Object, "status", "path")
	st.Error, _, _ = unstructured.NestedString(obj.Object, "status", "error")
	st.ResultTimestamp, _, _ = unstructured.NestedString(obj.Object, "status", "resultTimestamp")
	if f, ok, _ := unstructured.NestedFieldNoCopy(obj.Object, "status", "failures"); ok {
		switch n := f.(type) {
		case int64:
			st.Failures = n
		case float64:
			st.Failures = int64(n)
		}
	}
	return st
}

// OperatorMessage extracts the human message from the operator's
// status.error, a JSON-serialised exception ({"type", "message",
// "throwableList": [...]}); anything else is returned as is.
func OperatorMessage(errField string) string {
	var e struct {
		Type          string `json:"type"`
		Message       string `json:"message"`
		ThrowableList []struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"throwableList"`
	}
	if json.Unmarshal([]byte(errField), &e) != nil || e.Message == "" {
		return strings.TrimSpace(errField)
	}
	msg := e.Message
	for _, c := range e.ThrowableList {
		if c.Message != "" && !strings.Contains(msg, c.Message) {
			msg += "; caused by " + c.Message
		}
	}
	if e.Type != "" {
		msg += " (" + e.Type + ")"
	}
	return msg
}

// ErrSnapshotTimeout is returned when a snapshot has not ended in time.
var ErrSnapshotTimeout = errors.New("snapshot did not complete in time")

// SnapshotEnded tells whether a snapshot reached an end: COMPLETED (done),
// or FAILED / ABANDONED (an error with the operator's message).
func SnapshotEnded(obj *unstructured.Unstructured) (SnapshotStatus, bool, error) {
	st := ReadSnapshotStatus(obj)
	switch st.State {
	case SnapshotCompleted:
		return st, true, nil
	case SnapshotFailed, SnapshotAbandoned:
		msg := OperatorMessage(st.Error)
		if msg == "" {
			msg = "the operator gave no error message"
		}
		return st, false, fmt.Errorf("FlinkStateSnapshot %s/%s is %s after %d failure(s): %s", obj.GetNamespace(), obj.GetName(), st.State, st.Failures, msg)
	}
	return st, false, nil
}

// WaitSnapshot polls a snapshot until it is COMPLETED, FAILED or ABANDONED,
// or until timeout. Transient read failures are retried until the timeout.
// The last status seen is always returned.
func WaitSnapshot(ctx context.Context, dyn dynamic.Interface, namespace, name string, timeout, every time.Duration) (SnapshotStatus, error) {
	var last SnapshotStatus
	var lastObj *unstructured.Unstructured
	err := poll(ctx, every, timeout, func(ctx context.Context) (bool, error) {
		obj, err := dyn.Resource(FlinkStateSnapshotGVR).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, fmt.Errorf("reading FlinkStateSnapshot %s/%s: %w", namespace, name, err)
		}
		lastObj = obj
		var done bool
		last, done, err = SnapshotEnded(obj)
		if err == nil && !done && last.State == "" {
			err = refusedSnapshot(ctx, dyn, obj)
		}
		return done, err
	}, func(readErr error, end waitEnd) error {
		state := last.State
		if state == "" {
			state = "no status yet" + end.hint(" (the operator has written none: is it running, and does it watch this namespace?)")
		}
		return fmt.Errorf("%w: FlinkStateSnapshot %s/%s %s: last state %s, %d failure(s)%s%s", end.err(ErrSnapshotTimeout), namespace, name, end.when(),
			state, last.Failures, eventsSay(ctx, dyn, lastObj), readFailure(readErr))
	})
	return last, err
}

// ErrSnapshotRefused: the operator's validator refused a FlinkStateSnapshot.
// Operator 1.15.0 then writes no status at all, only a ValidationError
// event, said again every reconcile interval (FlinkStateSnapshotController
// .reconcile → validateSnapshot, which returns before the reconciler runs;
// DefaultValidator.validateStateSnapshot, e.g. "Target for snapshot %s/%s
// was not found" when its FlinkDeployment does not exist). Nothing was
// triggered: no savepoint or checkpoint exists for it.
var ErrSnapshotRefused = errors.New("the Flink operator refused the snapshot")

// refusedSnapshot reads the ValidationError events of a snapshot that has
// no status yet. Events are matched by the snapshot's UID, so they are this
// object's own.
func refusedSnapshot(ctx context.Context, dyn dynamic.Interface, obj *unstructured.Unstructured) error {
	// A failed read of the events is read again at the next poll.
	events, _ := ObjectEvents(ctx, dyn, obj)
	if ev := latestEvent(events, ReasonValidationError, time.Time{}); ev != nil {
		return fmt.Errorf("%w: FlinkStateSnapshot %s/%s: %s", ErrSnapshotRefused, obj.GetNamespace(), obj.GetName(), ev.Message)
	}
	return nil
}

// NeverReconciled tells whether the operator never wrote a status on a
// FlinkStateSnapshot: nothing was triggered for it, so it has no savepoint
// to dispose. Operator 1.15.0 cannot clean such an object up: building the
// cleanup's context throws a NullPointerException on the missing status
// (FlinkStateSnapshotController.cleanup → FlinkResourceContextFactory
// .getFlinkStateSnapshotContext: getStatus().toBuilder(); and
// StateSnapshotReconciler.cleanup would read getStatus().getState() next),
// the Java Operator SDK logs it and retries with backoff, and the finalizer
// is never removed. Seen on the real operator (the test bed's
// TestDifferential_snapshotTargetMissing).
func NeverReconciled(obj *unstructured.Unstructured) bool {
	st, ok, _ := unstructured.NestedMap(obj.Object, "status")
	if !ok || len(st) == 0 {
		return true
	}
	state, _, _ := unstructured.NestedString(obj.Object, "status", "state")
	return state == ""
}

// ReleaseNeverReconciled removes the operator's finalizer from a
// FlinkStateSnapshot that is being deleted and never got a status
// (NeverReconciled): the operator would keep it for ever, and there is
// nothing for it to dispose. The update carries the object's
// resourceVersion, so a status the operator writes meanwhile makes it fail
// (409 Conflict) instead of being overwritten; then the operator's own
// cleanup goes on. It reports whether it removed the finalizer.
func ReleaseNeverReconciled(ctx context.Context, dyn dynamic.Interface, obj *unstructured.Unstructured) (bool, error) {
	if obj.GetDeletionTimestamp() == nil || !NeverReconciled(obj) {
		return false, nil
	}
	var keep []string
	found := false
	for _, f := range obj.GetFinalizers() {
		if f == SnapshotFinalizer {
			found = true
			continue
		}
		keep = append(keep, f)
	}
	if !found {
		return false, nil
	}
	cp := obj.DeepCopy()
	cp.SetFinalizers(keep)
	if _, err := dyn.Resource(FlinkStateSnapshotGVR).Namespace(obj.GetNamespace()).Update(ctx, cp, metav1.UpdateOptions{FieldManager: FieldManager}); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("removing the operator's finalizer from FlinkStateSnapshot %s/%s, which it never reconciled: %w", obj.GetNamespace(), obj.GetName(), err)
	}
	return true, nil
}

// SnapshotFinalizer is the finalizer the operator puts on every
// FlinkStateSnapshot: the Java Operator SDK's default "<plural>.<group>/finalizer"
// (ReconcilerUtils.getDefaultFinalizerName; FlinkStateSnapshotController is a Cleaner).
const SnapshotFinalizer = "flinkstatesnapshots.flink.apache.org/finalizer"

// DeleteAndWait deletes an object and waits, within timeout, until it is
// gone (finalizers included). A missing object is not an error.
func DeleteAndWait(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, namespace, name string, timeout time.Duration) error {
	return DeleteOwnedAndWait(ctx, dyn, gvr, namespace, name, "", timeout)
}

// ErrOtherObject is returned by DeleteOwnedAndWait when the object of that
// name has another UID: it is not the one to delete, and was left alone.
var ErrOtherObject = errors.New("another object of that name (another UID) exists")

// DeleteOwnedAndWait deletes the object of that name only if its UID is uid
// ("": any), and waits, within timeout, until it is gone (finalizers
// included) or an object of another UID took the name. A missing object is
// not an error; one with another UID is left alone and ErrOtherObject is
// returned.
//
// The UID is a delete precondition (metav1.Preconditions), checked by the API
// server atomically in the storage layer (k8s.io/apiserver
// pkg/storage/interfaces.go, Preconditions.Check: "Precondition failed: UID
// in precondition"), which answers 409 Conflict (pkg/storage/errors
// InterpretDeleteError). A Conflict is then confirmed by reading the UID, so
// no message text is relied on.
func DeleteOwnedAndWait(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, namespace, name string, uid ktypes.UID, timeout time.Duration) error {
	r := dyn.Resource(gvr).Namespace(namespace)
	what := gvr.Resource + " " + namespace + "/" + name
	// Default (background) propagation: foreground would add a finalizer that
	// only the garbage collector removes.
	opts := metav1.DeleteOptions{}
	if uid != "" {
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	if err := r.Delete(ctx, name, opts); err != nil {
		if notfound.Is(NotFound(what, err)) {
			return nil
		}
		if uid != "" && apierrors.IsConflict(err) {
			obj, gerr := r.Get(ctx, name, metav1.GetOptions{})
			switch {
			case notfound.Is(NotFound(what, gerr)):
				return nil
			case gerr == nil && obj.GetUID() != uid:
				return fmt.Errorf("%w: %s %s/%s has UID %s, not %s", ErrOtherObject, obj.GetKind(), namespace, name, obj.GetUID(), uid)
			}
		}
		return err
	}
	var last *unstructured.Unstructured
	cleanup, polls := &cleanupWatch{since: time.Now().Add(-time.Second), seen: map[string]int64{}}, 0
	return poll(ctx, 500*time.Millisecond, timeout, func(ctx context.Context) (bool, error) {
		obj, err := r.Get(ctx, name, metav1.GetOptions{})
		if notfound.Is(NotFound(what, err)) {
			return true, nil
		}
		if err == nil {
			if uid != "" && obj.GetUID() != uid {
				return true, nil // ours is gone; the name is someone else's now
			}
			last = obj
			if polls++; gvr == FlinkDeploymentGVR && polls%4 == 0 {
				if err := cleanup.refused(ctx, dyn, obj); err != nil {
					return false, err
				}
			}
			if gvr == FlinkStateSnapshotGVR {
				// The operator never removes its finalizer from a snapshot
				// it never gave a status (ReleaseNeverReconciled).
				if _, rerr := ReleaseNeverReconciled(ctx, dyn, obj); rerr != nil {
					return false, rerr
				}
			}
		}
		return false, err
	}, func(readErr error, end waitEnd) error {
		if last == nil {
			return fmt.Errorf("%s/%s: not confirmed gone %s after delete%s", namespace, name, end.when(), readFailure(readErr))
		}
		if end.Interrupted {
			return fmt.Errorf("%w: %s %s/%s was deleted but not yet gone %s (finalizers: %v): the operator finishes the delete on "+
				"its own; the next apply removes it from state once it is gone", ErrInterrupted, last.GetKind(), namespace, name, end.when(), last.GetFinalizers())
		}
		if said := cleanup.said(); said != "" {
			return fmt.Errorf("%s %s/%s still exists %s after delete (finalizers: %v)%s%s",
				last.GetKind(), namespace, name, end.when(), last.GetFinalizers(), said, readFailure(readErr))
		}
		return fmt.Errorf("%s %s/%s still exists %s after delete (finalizers: %v): is the Flink operator running?%s",
			last.GetKind(), namespace, name, end.when(), last.GetFinalizers(), readFailure(readErr))
	})
}

// ErrCleanupRefused: the operator said it will not finish deleting a
// FlinkDeployment now (a CleanupFailed Event).
var ErrCleanupRefused = errors.New("the operator does not finish the delete")

// cleanupWatch reads the CleanupFailed Events the operator writes on a
// FlinkDeployment being deleted: a session cluster with FlinkSessionJobs,
// or with jobs that are not terminated (SessionReconciler.cleanupInternal,
// which then keeps its finalizer and tries again after the reconcile
// interval). Such a delete cannot be undone (the object has a
// deletionTimestamp); the operator finishes it once the jobs are gone.
type cleanupWatch struct {
	since time.Time
	// seen: the count of each message when first seen.
	seen map[string]int64
	last string
}

// refused returns an ErrCleanupRefused error when the wait should end with
// the operator's words instead of its timeout: once the operator has
// refused again at a later reconcile (the Event's count went up since this
// wait first saw it). Not at the first sight: right after session jobs are
// deleted the operator still sees them, and their jobs may still be
// cancelling (measured on the real operator 1.15.0,
// TestAccRealOperator_sessionClusterDestroy).
func (w *cleanupWatch) refused(ctx context.Context, dyn dynamic.Interface, obj *unstructured.Unstructured) error {
	// A failed read of the events only loses the faster answer: the wait
	// goes on.
	events, _ := ObjectEvents(ctx, dyn, obj)
	for _, e := range events {
		if e.Reason != ReasonCleanupFailed || e.Last.Before(w.since) {
			continue
		}
		w.last = e.Message
		prev, ok := w.seen[e.Message]
		if !ok {
			w.seen[e.Message] = e.Count
		}
		if ok && e.Count > prev {
			return fmt.Errorf("%w: %s (%s, SessionReconciler.cleanupInternal). FlinkDeployment %s/%s stays marked for deletion "+
				"and the operator deletes it by itself once that is done; the next apply removes it from state once it is gone",
				ErrCleanupRefused, e.Message, e.Reason, obj.GetNamespace(), obj.GetName())
		}
	}
	return nil
}

// said is the last CleanupFailed message, for a wait that timed out.
func (w *cleanupWatch) said() string {
	if w.last == "" {
		return ""
	}
	return fmt.Sprintf(" (the operator said: %q)", w.last)
}

// SavepointInfo is one completed snapshot found by CompletedSnapshots.
type SavepointInfo struct {
	Name             string
	Path             string
	ResultTimestamp  string
	TriggerTimestamp string
	Type             string
	// AlreadyExists: the snapshot records a savepoint taken before it
	// (spec.savepoint.alreadyExists). The operator then sets both
	// timestamps to when it recorded it (FlinkStateSnapshotUtils.snapshotSuccessful,
	// called by StateSnapshotReconciler.reconcile; flink-kubernetes-operator
	// release-1.15.0), which says nothing about when it was taken.
	AlreadyExists bool
	// Deployment is the FlinkDeployment whose job the snapshot is of (its
	// spec.jobReference; for a transition savepoint, the child that was
	// running: TransitionSavepoint).
	Deployment string
	// Transition: a blue/green transition savepoint (TransitionSavepoint),
	// not a FlinkStateSnapshot: no name, no timestamps, dated by its
	// _metadata as AlreadyExists is.
	Transition bool
}

// TakenAt is when the operator triggered the snapshot (status.triggerTimestamp,
// set by FlinkStateSnapshotUtils.snapshotInProgress), or, without one, when
// it completed (status.resultTimestamp). Meaningless for AlreadyExists.
func (s SavepointInfo) TakenAt() (time.Time, error) {
	ts := s.TriggerTimestamp
	if ts == "" {
		ts = s.ResultTimestamp
	}
	return time.Parse(time.RFC3339Nano, ts)
}

// CompletedSnapshots lists the COMPLETED FlinkStateSnapshots with a path in
// namespace whose spec.jobReference names the FlinkDeployment (the
// operator's labels appear only after it reconciles, so they are not used),
// of one type ("savepoint" or "checkpoint"; "" for both).
func CompletedSnapshots(ctx context.Context, dyn dynamic.Interface, namespace, deployment, typ string) ([]SavepointInfo, error) {
	var found []SavepointInfo
	err := eachDeploymentSnapshot(ctx, dyn, namespace, deployment, func(obj *unstructured.Unstructured) {
		t := "savepoint"
		if _, ok, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "checkpoint"); ok {
			t = "checkpoint"
		}
		if typ != "" && t != typ {
			return
		}
		st := ReadSnapshotStatus(obj)
		if st.State != SnapshotCompleted || st.Path == "" {
			return
		}
		exists, _, _ := unstructured.NestedBool(obj.Object, "spec", "savepoint", "alreadyExists")
		trig, _, _ := unstructured.NestedString(obj.Object, "status", "triggerTimestamp")
		found = append(found, SavepointInfo{Name: obj.GetName(), Path: st.Path, ResultTimestamp: st.ResultTimestamp,
			TriggerTimestamp: trig, Type: t, AlreadyExists: t == "savepoint" && exists, Deployment: deployment})
	})
	return found, err
}

// eachDeploymentSnapshot calls fn with each FlinkStateSnapshot of namespace
// whose spec.jobReference names the FlinkDeployment, a page at a time.
func eachDeploymentSnapshot(ctx context.Context, dyn dynamic.Interface, namespace, deployment string, fn func(*unstructured.Unstructured)) error {
	opts := metav1.ListOptions{Limit: 500}
	for {
		list, err := dyn.Resource(FlinkStateSnapshotGVR).Namespace(namespace).List(ctx, opts)
		if err != nil {
			return fmt.Errorf("listing FlinkStateSnapshots in %s: %w", namespace, err)
		}
		for i := range list.Items {
			obj := &list.Items[i]
			kind, _, _ := unstructured.NestedString(obj.Object, "spec", "jobReference", "kind")
			name, _, _ := unstructured.NestedString(obj.Object, "spec", "jobReference", "name")
			if name == deployment && (kind == "" || kind == "FlinkDeployment") {
				fn(obj)
			}
		}
		if list.GetContinue() == "" {
			return nil
		}
		opts.Continue = list.GetContinue()
	}
}

// Newest is the snapshot PickNewest chose, when it was taken, and the rule
// that dated it.
type Newest struct {
	SavepointInfo
	TakenAt time.Time
	Rule    string
}

// Rules by which PickNewest dates a snapshot.
const (
	RuleTriggered = "taken by the operator: dated by status.triggerTimestamp"
	RuleRecorded  = "recorded with already_exists: dated by its _metadata's last modification in S3 (the operator dates such a snapshot when it recorded it)"
	// RuleTransition dates a blue/green transition savepoint, for which the
	// operator records no time (TransitionSavepoint).
	RuleTransition = "a blue/green transition savepoint: dated by its _metadata's last modification in S3 (the operator records no time for it)"
)

// PickNewest returns the snapshot taken last (nil for none). A snapshot the
// operator took is dated by when it was triggered; one that records an
// existing savepoint (AlreadyExists) by metadataTime(path), when its
// _metadata was written, since its timestamps are when it was recorded:
// recording an old savepoint must not make it "the latest"; a blue/green
// transition savepoint (Transition), which has no timestamps, by
// metadataTime too. A snapshot that cannot be dated is an error naming it,
// never a guess.
func PickNewest(cands []SavepointInfo, metadataTime func(path string) (time.Time, error)) (*Newest, error) {
	var best *Newest
	for _, c := range cands {
		n := Newest{SavepointInfo: c, Rule: RuleTriggered}
		var err error
		switch {
		case c.Transition:
			n.Rule = RuleTransition
			n.TakenAt, err = metadataTime(c.Path)
		case c.AlreadyExists:
			n.Rule = RuleRecorded
			n.TakenAt, err = metadataTime(c.Path)
		default:
			n.TakenAt, err = c.TakenAt()
		}
		if err != nil && c.Transition {
			return nil, fmt.Errorf("cannot tell when the transition savepoint %s (the job.initialSavepointPath the operator gave the "+
				"child that took over from %s) was taken: %w", c.Path, c.Deployment, err)
		}
		if err != nil {
			return nil, fmt.Errorf("cannot tell when FlinkStateSnapshot %s (%s) was taken: %w", c.Name, c.Path, err)
		}
		if best == nil || n.TakenAt.After(best.TakenAt) || (n.TakenAt.Equal(best.TakenAt) && n.Name > best.Name) {
			best = &n
		}
	}
	return best, nil
}

// TriggersAnnotation holds a snapshot's triggers (a JSON object) on the
// FlinkStateSnapshot itself, so an import recovers them and plans no new
// snapshot. The prefix is the provider's name, a valid DNS subdomain as
// annotation key prefixes must be (k8s.io/apimachinery/pkg/api/validation
// ValidateAnnotations).
const TriggersAnnotation = "terraform-provider-flinkstate/triggers"

// SetTriggers stores triggers on obj (nothing when there are none).
func SetTriggers(obj *unstructured.Unstructured, triggers map[string]string) {
	if len(triggers) == 0 {
		return
	}
	b, _ := json.Marshal(triggers)
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[TriggersAnnotation] = string(b)
	obj.SetAnnotations(a)
}

// Triggers reads what SetTriggers stored; nil when absent or unreadable.
func Triggers(obj *unstructured.Unstructured) map[string]string {
	v, ok := obj.GetAnnotations()[TriggersAnnotation]
	if !ok {
		return nil
	}
	var t map[string]string
	if json.Unmarshal([]byte(v), &t) != nil {
		return nil
	}
	return t
}

// DisposalBlocked tells why the operator could not release the
// FlinkStateSnapshot namespace/name if it were deleted now, or "" when
// nothing blocks it (or it is gone). The operator's cleanup
// (StateSnapshotReconciler.cleanup, flink-kubernetes-operator) disposes of a
// COMPLETED savepoint with disposeOnDelete and a jobReference through the
// referenced deployment's running job; when that FlinkDeployment is missing
// or its job is not RUNNING (ReconciliationUtils.isJobRunning), getFlinkDeployment
// throws, FlinkStateSnapshotController.cleanup records CleanupFailed and the
// finalizer stays until the job runs again. Checkpoints, savepoints kept on
// delete or without a job reference or path, and snapshots in any other
// state are released as they are.
func DisposalBlocked(ctx context.Context, dyn dynamic.Interface, namespace, name string) (string, error) {
	snap, err := dyn.Resource(FlinkStateSnapshotGVR).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if notfound.Is(NotFound("FlinkStateSnapshot "+namespace+"/"+name, err)) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading FlinkStateSnapshot %s/%s: %w", namespace, name, err)
	}
	dispose, _, _ := unstructured.NestedBool(snap.Object, "spec", "savepoint", "disposeOnDelete")
	job, _, _ := unstructured.NestedString(snap.Object, "spec", "jobReference", "name")
	_, savepoint, _ := unstructured.NestedMap(snap.Object, "spec", "savepoint")
	st := ReadSnapshotStatus(snap)
	if !savepoint || !dispose || job == "" || st.State != SnapshotCompleted || st.Path == "" {
		return "", nil
	}
	dep, err := dyn.Resource(FlinkDeploymentGVR).Namespace(namespace).Get(ctx, job, metav1.GetOptions{})
	if notfound.Is(NotFound("FlinkDeployment "+namespace+"/"+job, err)) {
		return fmt.Sprintf("FlinkDeployment %s/%s, whose job would dispose of it, does not exist", namespace, job), nil
	}
	if err != nil {
		return "", fmt.Errorf("reading FlinkDeployment %s/%s: %w", namespace, job, err)
	}
	if js := ReadDeploymentStatus(dep).JobState; js != "RUNNING" {
		return fmt.Sprintf("the job of FlinkDeployment %s/%s, which would dispose of it, is %s, not RUNNING", namespace, job, orNone(js)), nil
	}
	return "", nil
}

// The final savepoint a destroy or replacement takes (flinkstate_deployment's
// final_savepoint): a FlinkStateSnapshot named <deployment>-final-<random>,
// labelled with the deployment's name, kept after the FlinkDeployment is gone
// (the provider writes disposeOnDelete false, and the operator sets no owner
// reference on snapshots: FlinkStateSnapshotUtils.createFlinkStateSnapshot,
// flink-kubernetes-operator release-1.15.0). A replacement in the same
// namespace finds it by CarryToAnnotation, "namespace/name" of the new
// deployment, and starts from it.
const (
	// UpgradeSavepointAnnotation on a FlinkDeployment records the savepoint
	// taken before its last upgrade (or the final savepoint it started
	// from), written in the same server-side apply as the new spec, so a
	// Read recovers it when terraform died before saving its state.
	UpgradeSavepointAnnotation = "terraform-provider-flinkstate/upgrade-savepoint"
	// FinalSavepointFailedAnnotation on a FlinkDeployment records the last
	// final savepoint a destroy asked for and did not get ("<RFC 3339
	// time> <snapshot name>: <what the operator reported>"): the next plan
	// of a destroy reads it (refreshed into private state) and says that no
	// final savepoint is possible now.
	FinalSavepointFailedAnnotation = "terraform-provider-flinkstate/final-savepoint-failed"
	FinalSavepointLabel            = "terraform-provider-flinkstate/final-savepoint-of"
	CarryToAnnotation              = "terraform-provider-flinkstate/carry-to"
)

// FinalSavepointObject is the FlinkStateSnapshot of a deployment's final
// savepoint: taken now, or, with existingPath, recording the savepoint a
// suspend already took (alreadyExists). carryTo ("" for none) names the
// replacement that starts from it.
//
// The operator retries a failed trigger up to FinalSavepointRetries times
// (FlinkStateSnapshotSpec.backoffLimit; 10 s × 2^(failures-1) apart,
// FlinkStateSnapshotController.updateErrorStatus): Flink refuses a savepoint
// while the job's tasks are still being deployed ("Not all required tasks
// are currently running"), e.g. right after the job restarted, and a destroy
// should not fail on that.
func FinalSavepointObject(namespace, deployment, format, existingPath, carryTo string) *unstructured.Unstructured {
	spec := SnapshotSpec{DeploymentName: deployment, Type: "savepoint", FormatType: format, DisposeOnDelete: false, BackoffLimit: FinalSavepointRetries}
	if existingPath != "" {
		spec.AlreadyExists, spec.Path = true, existingPath
	}
	obj := spec.Object(namespace, "", deployment+"-final-")
	obj.SetLabels(map[string]string{FinalSavepointLabel: deployment})
	if carryTo != "" {
		obj.SetAnnotations(map[string]string{CarryToAnnotation: carryTo})
	}
	return obj
}

// FinalSavepointRetries is the final savepoint's backoffLimit.
const FinalSavepointRetries = 3

// Carried is the final savepoint a replacement starts from: its
// FlinkStateSnapshot (namespace and name) and the savepoint's path.
type Carried struct{ Namespace, Snapshot, Path string }

// CarriedSavepoint finds the newest COMPLETED final savepoint whose
// CarryToAnnotation names namespace/name: the state a replacement of that
// deployment starts from. It looks in namespace first (a replacement under
// another name), then in every namespace: a final savepoint stays in the
// namespace of the deployment it was taken of (a FlinkStateSnapshot names
// its deployment by name only, in its own namespace: JobReference,
// flink-kubernetes-operator release-1.15.0), so a replacement into another
// namespace finds it there. Listing every namespace needs list on
// flinkstatesnapshots cluster-wide (Kubernetes "Using RBAC Authorization":
// a request across all namespaces is a cluster-scoped request, allowed only
// by a ClusterRole bound with a ClusterRoleBinding; a Role grants within its
// namespace); without it (Forbidden) nothing is found
// there, which SnapshotsListableEverywhere lets the destroy refuse first.
// The zero Carried when there is none.
func CarriedSavepoint(ctx context.Context, dyn dynamic.Interface, namespace, name string) (Carried, error) {
	found, err := carriedIn(ctx, dyn, namespace, namespace+"/"+name)
	if err != nil || found.Path != "" {
		return found, err
	}
	found, err = carriedIn(ctx, dyn, metav1.NamespaceAll, namespace+"/"+name)
	if apierrors.IsForbidden(err) {
		return Carried{}, nil
	}
	return found, err
}

func carriedIn(ctx context.Context, dyn dynamic.Interface, namespace, carryTo string) (Carried, error) {
	list, err := dyn.Resource(FlinkStateSnapshotGVR).Namespace(namespace).List(ctx, metav1.ListOptions{LabelSelector: FinalSavepointLabel})
	if err != nil {
		where := "in " + namespace
		if namespace == metav1.NamespaceAll {
			where = "in all namespaces"
		}
		return Carried{}, fmt.Errorf("listing final savepoints %s: %w", where, err)
	}
	return newestCarried(list.Items, func(to string) bool { return to == carryTo }), nil
}

// newestCarried is the newest COMPLETED final savepoint with a path among
// items whose CarryToAnnotation match accepts.
func newestCarried(items []unstructured.Unstructured, match func(carryTo string) bool) Carried {
	var found Carried
	var newest time.Time
	for i := range items {
		obj := &items[i]
		if !match(obj.GetAnnotations()[CarryToAnnotation]) {
			continue
		}
		st := ReadSnapshotStatus(obj)
		if st.State != SnapshotCompleted || st.Path == "" {
			continue
		}
		if t := obj.GetCreationTimestamp().Time; found.Path == "" || t.After(newest) {
			found, newest = Carried{Namespace: obj.GetNamespace(), Snapshot: obj.GetName(), Path: st.Path}, t
		}
	}
	return found
}

// SnapshotsListableEverywhere tells whether FlinkStateSnapshots can be
// listed in all namespaces, as CarriedSavepoint does for a replacement
// into another namespace: nil when they can.
func SnapshotsListableEverywhere(ctx context.Context, dyn dynamic.Interface) error {
	_, err := dyn.Resource(FlinkStateSnapshotGVR).Namespace(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: FinalSavepointLabel, Limit: 1})
	return err
}

// ConsumeCarry removes CarryToAnnotation from a final savepoint once a
// replacement started from it, so no later create starts from it again.
func ConsumeCarry(ctx context.Context, dyn dynamic.Interface, namespace, snapshot string) error {
	patch := []byte(`{"metadata":{"annotations":{"` + CarryToAnnotation + `":null}}}`)
	_, err := dyn.Resource(FlinkStateSnapshotGVR).Namespace(namespace).Patch(ctx, snapshot, ktypes.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: FieldManager})
	return err
}

// The savepoint a flinkstate_deployment takes before an upgrade is labelled
// with the deployment and annotated with what it precedes: the target spec
// (a hash), the FlinkDeployment object (its UID) and generation, and the
// job it was taken of, when it was taken. An apply interrupted while
// waiting for it leaves it behind; the next apply of the same change to the
// same object, with nothing applied since (same generation) and the same job
// running, waits for that one instead of taking another
// (PendingUpgradeSavepoint).
//
// The name, hash and generation alone do not tell incarnations apart: a
// FlinkDeployment deleted and created again under its name starts at
// generation 1 again (the API server sets it on create: k8s.io/apiextensions-apiserver
// pkg/registry/customresource/strategy.go, PrepareForCreate), and its
// upgrade savepoints are kept
// (disposeOnDelete false). The UID is new for each object; the job id too
// unless the user fixed it ($internal.pipeline.job-id), since the operator
// assigns a fresh one at each deploy that does not restore the last state
// (ApplicationReconciler.setJobIdIfNecessary, flink-kubernetes-operator
// release-1.15.0).
const (
	UpgradeOfLabel          = "terraform-provider-flinkstate/upgrade-of"
	ForSpecAnnotation       = "terraform-provider-flinkstate/for-spec"
	ForGenerationAnnotation = "terraform-provider-flinkstate/for-generation"
	ForUIDAnnotation        = "terraform-provider-flinkstate/for-uid"
	ForJobAnnotation        = "terraform-provider-flinkstate/for-job"
)

// UpgradeTarget is what an upgrade savepoint is taken for: the
// FlinkDeployment object (UID) at generation, its running job, and the spec
// (hash) it is upgraded to.
type UpgradeTarget struct {
	Deployment string
	UID        string
	Generation int64
	JobID      string
	SpecHash   string
}

// UpgradeTargetOf is the upgrade of live (the FlinkDeployment as read just
// before the savepoint) to the spec whose hash is specHash.
func UpgradeTargetOf(live *unstructured.Unstructured, specHash string) UpgradeTarget {
	return UpgradeTarget{Deployment: live.GetName(), UID: string(live.GetUID()), Generation: live.GetGeneration(),
		JobID: ReadDeploymentStatus(live).JobID, SpecHash: specHash}
}

func (u UpgradeTarget) annotations() map[string]string {
	return map[string]string{ForSpecAnnotation: u.SpecHash, ForGenerationAnnotation: fmt.Sprint(u.Generation),
		ForUIDAnnotation: u.UID, ForJobAnnotation: u.JobID}
}

// UpgradeSavepointObject is the savepoint taken before the upgrade u.
func UpgradeSavepointObject(namespace, format string, u UpgradeTarget) *unstructured.Unstructured {
	spec := SnapshotSpec{DeploymentName: u.Deployment, Type: "savepoint", FormatType: format, DisposeOnDelete: false, BackoffLimit: 0}
	obj := spec.Object(namespace, "", u.Deployment+"-upgrade-")
	obj.SetLabels(map[string]string{UpgradeOfLabel: u.Deployment})
	obj.SetAnnotations(u.annotations())
	return obj
}

// PendingUpgradeSavepoint finds the savepoint an earlier, interrupted apply
// started before the same upgrade (every field of u alike: same object,
// generation, job and target spec) and that has not failed: "" when there
// is none. A savepoint of another incarnation of the deployment, or one
// recorded without its object and job, is never taken for this upgrade's
// (and is left alone).
func PendingUpgradeSavepoint(ctx context.Context, dyn dynamic.Interface, namespace string, u UpgradeTarget) (string, error) {
	list, err := dyn.Resource(FlinkStateSnapshotGVR).Namespace(namespace).List(ctx, metav1.ListOptions{LabelSelector: UpgradeOfLabel + "=" + u.Deployment})
	if err != nil {
		return "", fmt.Errorf("listing the upgrade savepoints of %s/%s: %w", namespace, u.Deployment, err)
	}
	want := u.annotations()
	best, newest := "", time.Time{}
	for i := range list.Items {
		obj := &list.Items[i]
		if u.UID == "" || !sameUpgrade(obj.GetAnnotations(), want) || obj.GetDeletionTimestamp() != nil {
			continue
		}
		switch ReadSnapshotStatus(obj).State {
		case SnapshotFailed, SnapshotAbandoned:
			continue
		}
		if t := obj.GetCreationTimestamp().Time; best == "" || t.After(newest) {
			best, newest = obj.GetName(), t
		}
	}
	return best, nil
}

// sameUpgrade: every annotation of want is on the object, with its value.
func sameUpgrade(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// GetSnapshot reads a FlinkStateSnapshot; a *notfound.Error when the API
// server answers that it does not exist.
func GetSnapshot(ctx context.Context, dyn dynamic.Interface, namespace, name string) (*unstructured.Unstructured, error) {
	return get(ctx, dyn, FlinkStateSnapshotGVR, "FlinkStateSnapshot", namespace, name)
}

// CreateSnapshot creates the FlinkStateSnapshot obj in namespace as
// FieldManager (obj may leave the name to the API server: generateName).
func CreateSnapshot(ctx context.Context, dyn dynamic.Interface, namespace string, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return dyn.Resource(FlinkStateSnapshotGVR).Namespace(namespace).Create(ctx, obj, metav1.CreateOptions{FieldManager: FieldManager})
}

// PatchSnapshot merge-patches a FlinkStateSnapshot as FieldManager.
func PatchSnapshot(ctx context.Context, dyn dynamic.Interface, namespace, name string, patch []byte) error {
	_, err := dyn.Resource(FlinkStateSnapshotGVR).Namespace(namespace).Patch(ctx, name, ktypes.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: FieldManager})
	return err
}

// AnnotateDeployment sets one annotation of a FlinkDeployment with a merge
// patch (metadata only; the spec and the field ownership stay).
func AnnotateDeployment(ctx context.Context, dyn dynamic.Interface, namespace, name, key, value string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{key: value}}})
	if err != nil {
		return err
	}
	_, err = dyn.Resource(FlinkDeploymentGVR).Namespace(namespace).Patch(ctx, name, ktypes.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
	return err
}
