package kube

import (
	"context"
	"errors"
	"time"

	"k8s.io/client-go/dynamic"
)

// DeploymentWait is one wait for a FlinkDeployment after its spec was
// written: what to wait for, since when, for how long.
type DeploymentWait struct {
	Namespace, Name string
	// Target is wait_for (deployed, running) or WaitSuspended.
	Target string
	// Restoring: the change restores state, from RestoreFrom ("": the
	// path the operator picks); the wait then ends when the job runs from
	// it (WaitRestoredSince), except for a suspend, which restores nothing.
	Restoring   bool
	RestoreFrom string
	// Written is when the spec was written (see WaitDeploymentSince).
	Written        time.Time
	Timeout, Every time.Duration
}

// Run waits as w says: WaitRestoredSince for a change that restores state
// and runs, WaitDeploymentSince otherwise.
func (w DeploymentWait) Run(ctx context.Context, dyn dynamic.Interface) (DeploymentStatus, error) {
	if w.Restoring && w.Target != WaitSuspended {
		return WaitRestoredSince(ctx, dyn, w.Namespace, w.Name, w.RestoreFrom, w.Written, w.Timeout, w.Every)
	}
	return WaitDeploymentSince(ctx, dyn, w.Namespace, w.Name, w.Target, w.Written, w.Timeout, w.Every)
}

// WaitKind is what a wait for a FlinkDeployment ended with, in the terms
// the provider acts on.
type WaitKind int

const (
	// WaitDone: the deployment reached its target.
	WaitDone WaitKind = iota
	// WaitNeverRan: its first deployment failed before the JobManager
	// started (FailedBeforeItRan): no job ran, no state of it exists.
	WaitNeverRan
	// WaitNeverDeployed: the operator deployed nothing of it and recorded
	// only its refusal (DeployedOnce is false).
	WaitNeverDeployed
	// WaitRejected: the operator's validator refused the spec
	// (ErrSpecRejected) after something was deployed.
	WaitRejected
	// WaitUpgradeFailed: the operator will not apply the change by itself
	// (ErrUpgradeFailed).
	WaitUpgradeFailed
	// WaitUpgradeable: the operator waits for an upgradeable state
	// (ErrWaitingForUpgradeableState).
	WaitUpgradeable
	// WaitNotReady: any other end (a timeout, an interrupted run, a job
	// that failed).
	WaitNotReady
)

// WaitOutcome is a wait's end, classified (ClassifyWait).
type WaitOutcome struct {
	Kind WaitKind
	// TimedOut: the wait ran out of time (ErrDeploymentTimeout), whatever
	// else it says.
	TimedOut bool
}

// ClassifyWait classifies the end of a wait that returned st and err.
// first: the wait followed the object's first write (a create); only then
// is the object read again to tell whether anything of it ran
// (WaitNeverRan, WaitNeverDeployed; a failed read counts as "it ran", so
// nothing is deleted on a guess).
func ClassifyWait(ctx context.Context, dyn dynamic.Interface, ns, name string, st DeploymentStatus, err error, first bool) WaitOutcome {
	o := WaitOutcome{TimedOut: errors.Is(err, ErrDeploymentTimeout)}
	rejected := errors.Is(err, ErrSpecRejected)
	switch {
	case err == nil:
		o.Kind = WaitDone
	case first && st.Error != "" && failedBeforeItRan(ctx, dyn, ns, name):
		o.Kind = WaitNeverRan
	case first && (rejected || st.Error != "") && neverDeployed(ctx, dyn, ns, name):
		o.Kind = WaitNeverDeployed
	case rejected:
		o.Kind = WaitRejected
	case errors.Is(err, ErrUpgradeFailed):
		o.Kind = WaitUpgradeFailed
	case errors.Is(err, ErrWaitingForUpgradeableState):
		o.Kind = WaitUpgradeable
	default:
		o.Kind = WaitNotReady
	}
	return o
}

// failedBeforeItRan reads the FlinkDeployment again and tells whether its
// first deployment failed before the JobManager started
// (FailedBeforeItRan); a failed read counts as "it may have run".
func failedBeforeItRan(ctx context.Context, dyn dynamic.Interface, ns, name string) bool {
	obj, err := GetFlinkDeployment(ctx, dyn, ns, name)
	return err == nil && FailedBeforeItRan(ctx, dyn, obj)
}

// neverDeployed reads the FlinkDeployment again and tells whether the
// operator never deployed anything of it (DeployedOnce); a failed read
// counts as deployed.
func neverDeployed(ctx context.Context, dyn dynamic.Interface, ns, name string) bool {
	obj, err := GetFlinkDeployment(ctx, dyn, ns, name)
	return err == nil && !DeployedOnce(obj)
}
