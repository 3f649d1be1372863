package kube

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/client-go/dynamic"
)

// RefuseSessionDelete tells, before anything is deleted, whether the
// destroy of session cluster ns/name (a deployment without a job, whose
// flinkConfiguration is conf) must be refused because FlinkSessionJobs
// still run on it: the operator would keep its finalizer and never finish
// the delete (SessionReconciler.cleanupInternal,
// flink-kubernetes-operator release-1.15.0), so the destroy would wait out
// its timeout with the object marked for deletion, which cannot be undone.
// Session jobs already being deleted (e.g. by an earlier step of the same
// destroy) are waited for. The refusal is worded as a "Deleting" problem.
func RefuseSessionDelete(ctx context.Context, dyn dynamic.Interface, ns, name string, conf map[string]string, timeout time.Duration) (Report, bool) {
	if !SessionJobsBlock(conf) {
		return Report{}, false
	}
	live, terminating, err := SessionJobs(ctx, dyn, ns, name)
	if err == nil && len(live) == 0 && len(terminating) > 0 {
		live, err = WaitSessionJobsGone(ctx, dyn, ns, name, timeout)
	}
	switch {
	case err != nil:
		return Report{Verb: "Deleting", Detail: err.Error(), Advice: "Nothing was deleted. Apply again once the session jobs can be read."}, true
	case len(live) > 0:
		return Report{Verb: "Deleting",
			Detail: fmt.Sprintf("It is a session cluster, and the Flink operator does not delete a session cluster with session jobs on it: "+
				"%q (SessionReconciler.cleanupInternal, %s = true by default)", SessionJobsMessage(live), SessionBlockKey),
			Advice: fmt.Sprintf("Nothing was deleted. Delete the FlinkSessionJobs %s first (their jobs are cancelled, or stopped with a savepoint "+
				"as each one's upgrade mode says), then destroy again; or set %s = \"false\" in flink_configuration (and apply) to "+
				"let the operator delete the cluster and cancel their jobs with it.", strings.Join(live, ", "), SessionBlockKey)}, true
	}
	return Report{}, false
}
