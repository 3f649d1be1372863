package kube

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
)

// The final savepoint of a destroy or replacement, taken before the
// FlinkDeployment is deleted. Deleting a FlinkDeployment makes the operator
// cancel a running job without a savepoint
// (kubernetes.operator.job.savepoint-on-deletion defaults to false) and
// delete its HA metadata (ApplicationReconciler.cleanupInternal,
// AbstractFlinkService.deleteClusterDeployment; flink-kubernetes-operator
// release-1.15.0), so the provider takes the savepoint itself first.

// FinalStopRequest is one final stop: of which FlinkDeployment, how, and
// for which replacement.
type FinalStopRequest struct {
	Namespace, Name string
	// UID is the object the caller owns ("" for any): another object of
	// that name is left alone (FinalStopGone).
	UID string
	// Format is the savepoint's format ("" leaves the deployment's own).
	Format string
	// Drain: the stop drains the job (flinkdeploy.Desired.FinalDrain).
	Drain bool
	// CarryTo is the replacement (namespace/name) that starts from the
	// savepoint, "" for none (CarryToAnnotation).
	CarryTo string
	// NotRunningFor is StopOptions.NotRunningFor.
	NotRunningFor  time.Duration
	Timeout, Every time.Duration
}

// FinalStopKind is what a final stop ended with, in the terms the caller
// reports.
type FinalStopKind int

const (
	// FinalStopGone: there is nothing to stop: the FlinkDeployment does
	// not exist, or another object of its name does (not UID).
	FinalStopGone FinalStopKind = iota
	// FinalStopUnreadable: reading the FlinkDeployment before the stop
	// failed (Err); nothing was changed.
	FinalStopUnreadable
	// FinalStopNotRunning: the job is not running (Before) and no suspend
	// took a savepoint of it: none can be taken now.
	FinalStopNotRunning
	// FinalStopCarryUnlistable: the replacement is in another namespace
	// and FlinkStateSnapshots cannot be listed in all namespaces (Err), so
	// it would not find the savepoint; nothing was changed.
	FinalStopCarryUnlistable
	// FinalStopFailed: the operator's stop, or the FlinkStateSnapshot that
	// records its savepoint, did not complete (Step, Err); the failure is
	// recorded on the FlinkDeployment (FinalSavepointFailedAnnotation),
	// and After is its status read again.
	FinalStopFailed
	// FinalStopUnrecorded: the job is stopped with its savepoint (Path),
	// but creating the FlinkStateSnapshot that records it failed (Err).
	FinalStopUnrecorded
	// FinalStopTaken: the final savepoint (Path) is recorded in
	// FlinkStateSnapshot Snapshot.
	FinalStopTaken
)

// FinalStopResult is a final stop's end, classified.
type FinalStopResult struct {
	Kind FinalStopKind
	Err  error
	// Before is the status read before the stop.
	Before DeploymentStatus
	// Path is the savepoint's path, Snapshot the FlinkStateSnapshot that
	// records it; Drained: this stop drained the job.
	Path, Snapshot string
	Drained        bool
	// Step is what did not complete (FinalStopFailed).
	Step string
	// After is the status read again after a failure, AfterJobManager its
	// JobManager's; AfterRead is false when that read failed.
	After           DeploymentStatus
	AfterJobManager string
	AfterRead       bool
	// AnnotateErr: recording the failure on the FlinkDeployment failed.
	AnnotateErr error
}

// StepStop is the step of a final stop that asks the operator to stop the
// job with a savepoint (FinalStopResult.Step).
const StepStop = "the operator's stop of the job with a savepoint (job.state suspended, upgrade_mode savepoint)"

// FinalStop takes the final savepoint of FlinkDeployment q.Namespace/q.Name
// before it is deleted: the operator stops the running job with a
// savepoint (StopWithSavepoint), or a suspend already took one; a
// FlinkStateSnapshot records it (FinalSavepointObject, annotated with
// q.CarryTo). It deletes nothing; any end but FinalStopGone,
// FinalStopNotRunning and FinalStopTaken means the delete must not happen.
func FinalStop(ctx context.Context, dyn dynamic.Interface, q FinalStopRequest) FinalStopResult {
	live, err := GetFlinkDeployment(ctx, dyn, q.Namespace, q.Name)
	if notfound.Is(err) || (err == nil && q.UID != "" && string(live.GetUID()) != q.UID) {
		return FinalStopResult{Kind: FinalStopGone}
	}
	if err != nil {
		return FinalStopResult{Kind: FinalStopUnreadable, Err: err}
	}
	res := FinalStopResult{Before: ReadDeploymentStatus(live)}
	existing, ok := suspendedWithSavepoint(live)
	if !ok {
		res.Kind = FinalStopNotRunning
		return res
	}
	if to, _, _ := strings.Cut(q.CarryTo, "/"); q.CarryTo != "" && to != q.Namespace {
		// The final savepoint stays in q.Namespace; the replacement in
		// another namespace finds it by listing every namespace
		// (CarriedSavepoint). Without that permission it would start
		// from nothing: refuse before any savepoint or delete.
		if err := SnapshotsListableEverywhere(ctx, dyn); err != nil {
			res.Kind, res.Err = FinalStopCarryUnlistable, err
			return res
		}
	}
	if existing == "" {
		// Stop, don't cancel: the operator stops the running job with a
		// savepoint (StopWithSavepoint), so nothing is processed after the
		// state the next job starts from. A savepoint taken while the job
		// runs on, then a cancel, would have the next job process again
		// what the old one processed in between, and an exactly-once sink
		// commit it twice: an intermediate savepoint commits no side
		// effects (FLINK-25191, Flink 1.15), the old job's later
		// checkpoints do.
		stopped, err := StopWithSavepoint(ctx, dyn, q.Namespace, q.Name, StopOptions{Drain: q.Drain, FormatType: q.Format,
			Retries: FinalSavepointRetries, NotRunningFor: q.NotRunningFor}, q.Timeout, q.Every)
		if err != nil {
			return finalStopFailed(ctx, dyn, q, res, StepStop, err)
		}
		existing, res.Drained = stopped.Path, q.Drain
	}
	res.Path = existing
	created, err := CreateSnapshot(ctx, dyn, q.Namespace, FinalSavepointObject(q.Namespace, q.Name, q.Format, existing, q.CarryTo))
	if err != nil {
		res.Kind, res.Err = FinalStopUnrecorded, err
		return res
	}
	res.Snapshot = created.GetName()
	sp, err := WaitSnapshot(ctx, dyn, q.Namespace, res.Snapshot, q.Timeout, q.Every)
	if err != nil || sp.Path == "" {
		if err == nil {
			err = errors.New("the operator reported no path")
		}
		return finalStopFailed(ctx, dyn, q, res, "FlinkStateSnapshot "+q.Namespace+"/"+res.Snapshot, err)
	}
	res.Kind, res.Path = FinalStopTaken, sp.Path
	return res
}

// suspendedWithSavepoint tells whether a final savepoint can be had of
// obj's job (ok), and which one a suspend took already ("": the running
// job is to be stopped with one). The operator stops only a running job
// with a savepoint (AbstractJobReconciler.getJobUpgrade: SAVEPOINT mode
// needs ReconciliationUtils.isJobRunning). A suspend in savepoint mode took
// one, and the operator recorded it
// (AbstractJobReconciler.setUpgradeSavepointPath); a last-state suspend
// records the HA dummy (LastStateDummyPath), which is no savepoint.
func suspendedWithSavepoint(obj *unstructured.Unstructured) (existing string, ok bool) {
	st := ReadDeploymentStatus(obj)
	if st.JobState == "RUNNING" {
		return "", true
	}
	p, _, _ := unstructured.NestedString(obj.Object, "status", "jobStatus", "upgradeSavepointPath")
	if st.LifecycleState != "SUSPENDED" || p == "" || p == LastStateDummyPath {
		return "", false
	}
	return p, true
}

// finalStopFailed ends a final stop whose step did not complete with
// cause: it reads the FlinkDeployment's status again (a JobManager that
// stopped answering makes the operator abandon the savepoint after its
// trigger timed out, and move the job from RUNNING to RECONCILING —
// JobStatusObserver.ifRunningMoveToReconciling, FlinkStateSnapshotUtils
// .abandonSnapshotIfJobNotRunning), and records the failure on it
// (FinalSavepointFailedAnnotation), so the next destroy's plan says that
// no final savepoint is possible now.
func finalStopFailed(ctx context.Context, dyn dynamic.Interface, q FinalStopRequest, res FinalStopResult, step string, cause error) FinalStopResult {
	res.Kind, res.Step, res.Err = FinalStopFailed, step, cause
	if live, err := GetFlinkDeployment(ctx, dyn, q.Namespace, q.Name); err == nil {
		res.After, res.AfterJobManager, res.AfterRead = ReadDeploymentStatus(live), jobManagerStatus(live), true
	}
	note := fmt.Sprintf("%s %s: %s", time.Now().UTC().Format(time.RFC3339), step, cause)
	res.AnnotateErr = AnnotateDeployment(ctx, dyn, q.Namespace, q.Name, FinalSavepointFailedAnnotation, note)
	return res
}
