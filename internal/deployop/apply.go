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
// out never loses the object: the resource saves it, with the wait-pending
// mark Do sets, before the wait starts, and the status after it. How each
// end of the wait is reported: kube.WaitReportOf.
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

// Marks are what a create or update leaves in the resource's private state
// for the operations after it.
type Marks struct {
	// UID: the object this resource created (or imported): another one of
	// that name (after a delete outside Terraform) is never taken for it.
	UID string
	// WaitPending: why the last create or update did not finish its wait;
	// while set, the next plan is an update whose apply waits again.
	WaitPending string
	// Restoring: that pending wait is a restore wait too, from RestoreFrom
	// ("" for an upgrade: the operator picks the path).
	Restoring   bool
	RestoreFrom string
	// Carried: the carried final savepoint the create wrote to
	// spec.job.initialSavepointPath (Write.CarriedPath).
	Carried string
}

// WaitDone clears the marks of a wait that ended.
func (m *Marks) WaitDone() { m.WaitPending, m.Restoring, m.RestoreFrom = "", false, "" }

// Report is a kube.Report about Object (a problem's object, as the
// resource words it). A *Report returned alone is a problem that stops the
// operation before anything changes ("<Verb> <Object> failed": Detail,
// Advice).
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

// Do creates (w.Create) or server-side applies w.Object. Once written, it
// marks (m) the object a create made as this resource's, and a wait as
// pending until Wait ends it.
func (w Write) Do(ctx context.Context, env Env, m *Marks) Written {
	ns, name := w.Object.GetNamespace(), w.Object.GetName()
	out := Written{At: time.Now()}
	dyn, err := env.Kube()
	if err != nil {
		out.Reports = append(out.Reports, kubeReport(err))
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
		out.Reports = append(out.Reports, Report{"FlinkDeployment", kube.Report{Verb: "Applying",
			Detail: fmt.Sprintf("%s/%s: %s", ns, name, kube.ReadableError(err)), Advice: kube.WriteRefusedAdvice(err)}})
		return Written{At: out.At, Reports: out.Reports}
	}
	if w.Create {
		m.UID = string(out.Live.GetUID())
		if w.CarriedPath != "" {
			m.Carried = w.CarriedPath
		}
	}
	m.WaitPending = ""
	if w.Target != NoWait {
		m.WaitPending = "the apply did not finish waiting"
		if w.Restoring {
			// The next apply's wait (a pending wait) is a restore wait too.
			m.Restoring, m.RestoreFrom = true, w.RestoreFrom
		}
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
	// Checkpoint, when set, waits once the target is reached for a
	// checkpoint of job jobID after the change (wait_for = "checkpoint");
	// false: none completed (the resource reports why).
	Checkpoint func(jobID string) bool
}

// Waited is the end of a wait.
type Waited struct {
	Status kube.DeploymentStatus
	// Done: the deployment reached its target (and a checkpoint completed,
	// with Ends.Checkpoint).
	Done bool
	// Removed: the object of a create of which nothing ran was deleted
	// again, and so goes the resource (its create fails without state).
	Removed bool
	// Report says how the wait ended short of its target (zero when Done,
	// or when Ends.Checkpoint said why).
	Report kube.Report
}

// Wait waits for w.Target since the write (written) and classifies its end
// (kube.ClassifyWait), and marks (m) the wait as ended or why not. A
// create of which nothing ran is deleted again by its UID
// (kube.WaitReport.DeleteAgain).
func (w Write) Wait(ctx context.Context, env Env, written Written, m *Marks, ends Ends) Waited {
	ns, name := w.Object.GetNamespace(), w.Object.GetName()
	dyn, err := env.Kube()
	if err != nil {
		m.WaitPending = err.Error()
		return Waited{Report: kube.Report{Verb: "Waiting for", Detail: "FlinkDeployment not ready: " + err.Error()}}
	}
	wait := kube.DeploymentWait{Namespace: ns, Name: name, Target: w.Target, Restoring: w.Restoring, RestoreFrom: w.RestoreFrom,
		Written: written.At, Timeout: w.Timeout, Every: w.Every}
	st, err := wait.Run(ctx, dyn)
	ends.Waited(st)
	o := kube.ClassifyWait(ctx, dyn, ns, name, st, err, w.Create)
	if o.Kind == kube.WaitDone {
		if ends.Checkpoint != nil && !ends.Checkpoint(st.JobID) {
			m.WaitPending = "no checkpoint completed since the change"
			return Waited{Status: st}
		}
		m.WaitDone()
		return Waited{Status: st, Done: true}
	}
	rep, reason := kube.WaitReportOf(o, w.Create, w.Restoring), ends.Reason(o, err)
	out, gone := Waited{Status: st}, ""
	m.WaitPending = err.Error()
	if rep.DeleteAgain {
		m.WaitPending, gone = "", "it was deleted again"
		if derr := kube.DeleteOwnedAndWait(ctx, dyn, kube.FlinkDeploymentGVR, ns, name, written.Live.GetUID(), time.Minute); derr != nil {
			gone = "deleting it again failed (" + derr.Error() + "); delete it before applying again"
		} else {
			out.Removed = true
		}
	}
	out.Report = rep.Words(kube.WaitFacts{Err: err.Error() + reason, Gone: gone, Namespace: ns, Name: name, Target: w.Target})
	return out
}
