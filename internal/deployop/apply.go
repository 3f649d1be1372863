package deployop

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// Write is one create or update of a FlinkDeployment: the write of its
// rendered object (Do), then the wait for its target (Wait).
//
// A create is a POST that fails on an existing object (it is never
// adopted); an update is a server-side apply. A wait that fails or times
// out never loses the object: the resource saves it (with a wait-pending
// mark, PendingMark) before the wait starts, and the status after it. How
// each end of the wait is reported: kube.WaitReportOf.
type Write struct {
	// Object is the FlinkDeployment to write (flinkdeploy.Want.Render).
	Object *unstructured.Unstructured
	// Create: a create, not an update.
	Create bool
	// CarriedPath is the final savepoint of the deployment this create
	// replaces: once created, it is marked as used (kube.CarryTarget.Consume).
	CarriedPath string
	// Restoring: the change restores state (from RestoreFrom, or, empty, by
	// an upgrade); the wait ends when the job runs from it (kube.DeploymentWait).
	Restoring   bool
	RestoreFrom string
	// Target is what the wait waits for (flinkdeploy.Desired.WaitTarget;
	// NoWait: nothing); Timeout bounds it from the write, Every is its poll.
	Target         string
	Timeout, Every time.Duration
}

// NoWait is the wait target of wait_for = "none".
const NoWait = "none"

// PendingMark is why a wait that has begun did not finish, as the
// resource keeps it until the wait ends (its next plan is an update whose
// apply waits again).
const PendingMark = "the apply did not finish waiting"

// Report is a kube.Report about Object (a problem's object, as the
// resource words it).
type Report struct {
	Object string
	kube.Report
}

// Written is what Do did.
type Written struct {
	// Live is the object as the API server has it; nil when nothing was
	// written.
	Live *unstructured.Unstructured
	// At is when the spec was written: the wait counts from it.
	At time.Time
	// Exists: the create found an object of that name, and wrote nothing.
	Exists bool
	// Reports are warnings, and the problem when nothing was written.
	Reports []Report
}

// Do creates (w.Create) or server-side applies w.Object.
func (w Write) Do(ctx context.Context, env Env) Written {
	ns, name := w.Object.GetNamespace(), w.Object.GetName()
	out := Written{At: time.Now()}
	dyn, err := env.Kube()
	if err != nil {
		out.Reports = append(out.Reports, Report{"the Kubernetes client", kube.Report{Verb: "Setting up", Detail: err.Error()}})
		return out
	}
	if !w.Create {
		out.Live, err = kube.Apply(ctx, dyn, kube.FlinkDeploymentGVR, w.Object)
	} else if out.Live, err = kube.Create(ctx, dyn, kube.FlinkDeploymentGVR, w.Object); apierrors.IsAlreadyExists(err) {
		out.Exists = true
		return out
	} else if out.Live != nil {
		// Created, whatever err says (kube.Create: the next apply converts
		// the ownership again).
		if err != nil {
			out.Reports = append(out.Reports, Report{Report: kube.Report{Warning: "FlinkDeployment ownership not converted", Detail: err.Error()}})
			err = nil
		}
		if w.CarriedPath != "" {
			if rep, failed := (kube.CarryTarget{Namespace: ns, Name: name}).Consume(ctx, dyn, w.CarriedPath); failed {
				out.Reports = append(out.Reports, Report{Report: rep})
			}
		}
	}
	if err != nil {
		out.Live = nil
		out.Reports = append(out.Reports, Report{"FlinkDeployment", kube.Report{Verb: "Applying",
			Detail: fmt.Sprintf("%s/%s: %s", ns, name, kube.ReadableError(err)), Advice: kube.WriteRefusedAdvice(err)}})
	}
	return out
}

// Ends is what the resource does at the end of a wait.
type Ends struct {
	// Waited gets the status the wait read last, before anything else
	// happens (the resource saves it).
	Waited func(kube.DeploymentStatus)
	// Reason is Flink's own reason for an end short of the target (""
	// none), read before a failed create is deleted again (its pods with
	// it).
	Reason func(o kube.WaitOutcome, err error) string
}

// Waited is the end of a wait.
type Waited struct {
	Status kube.DeploymentStatus
	// Done: the deployment reached its target.
	Done bool
	// Pending is why the change is not done (the wait-pending mark; ""
	// after a failed create that was deleted again); Removed: that create's
	// object is gone, and so is the resource (its create fails without
	// state).
	Pending string
	Removed bool
	// Report says how the wait ended short of its target.
	Report kube.Report
}

// Wait waits for w.Target since the write (written) and classifies its end
// (kube.ClassifyWait). A create of which nothing ran is deleted again by
// its UID (kube.WaitReport.DeleteAgain).
func (w Write) Wait(ctx context.Context, env Env, written Written, ends Ends) Waited {
	ns, name := w.Object.GetNamespace(), w.Object.GetName()
	dyn, err := env.Kube()
	if err != nil {
		return Waited{Pending: err.Error(), Report: kube.Report{Verb: "Waiting for", Detail: "FlinkDeployment not ready: " + err.Error()}}
	}
	wait := kube.DeploymentWait{Namespace: ns, Name: name, Target: w.Target, Restoring: w.Restoring, RestoreFrom: w.RestoreFrom,
		Written: written.At, Timeout: w.Timeout, Every: w.Every}
	st, err := wait.Run(ctx, dyn)
	ends.Waited(st)
	o := kube.ClassifyWait(ctx, dyn, ns, name, st, err, w.Create)
	if o.Kind == kube.WaitDone {
		return Waited{Status: st, Done: true}
	}
	rep, reason := kube.WaitReportOf(o, w.Create, w.Restoring), ends.Reason(o, err)
	out := Waited{Status: st, Pending: err.Error()}
	gone := ""
	if rep.DeleteAgain {
		out.Pending = ""
		gone = "it was deleted again"
		if derr := kube.DeleteOwnedAndWait(ctx, dyn, kube.FlinkDeploymentGVR, ns, name, written.Live.GetUID(), time.Minute); derr != nil {
			gone = "deleting it again failed (" + derr.Error() + "); delete it before applying again"
		} else {
			out.Removed = true
		}
	}
	out.Report = rep.Words(kube.WaitFacts{Err: err.Error() + reason, Gone: gone, Namespace: ns, Name: name, Target: w.Target})
	return out
}
