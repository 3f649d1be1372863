package provider

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// refuseSessionDelete refuses, before anything is deleted, the destroy of a
// session cluster (a deployment without a job) that FlinkSessionJobs still
// run on: the operator would keep its finalizer and never finish the delete
// (SessionReconciler.cleanupInternal), so the destroy would wait out its
// timeout with the object marked for deletion, which cannot be undone.
// Session jobs already being deleted (e.g. by an earlier step of the same
// destroy) are waited for. It reports whether it refused.
func refuseSessionDelete(ctx context.Context, c *kube.Client, state *deploymentModel, timeout time.Duration, diags *diag.Diagnostics) bool {
	if state.Job != nil || !kube.SessionJobsBlock(stringMap(ctx, state.FlinkConfiguration, diags)) {
		return false
	}
	ns, name := state.Namespace.ValueString(), state.Name.ValueString()
	live, terminating, err := kube.SessionJobs(ctx, c.Dynamic, ns, name)
	if err == nil && len(live) == 0 && len(terminating) > 0 {
		live, err = kube.WaitSessionJobsGone(ctx, c.Dynamic, ns, name, timeout)
	}
	switch {
	case err != nil:
		addProblem(diags, "Deleting", "FlinkDeployment "+ns+"/"+name, err.Error(), "Nothing was deleted. Apply again once the session jobs can be read.")
	case len(live) > 0:
		addProblem(diags, "Deleting", "FlinkDeployment "+ns+"/"+name,
			fmt.Sprintf("It is a session cluster, and the Flink operator does not delete a session cluster with session jobs on it: "+
				"%q (SessionReconciler.cleanupInternal, %s = true by default)", kube.SessionJobsMessage(live), kube.SessionBlockKey),
			fmt.Sprintf("Nothing was deleted. Delete the FlinkSessionJobs %s first (their jobs are cancelled, or stopped with a savepoint "+
				"as each one's upgrade mode says), then destroy again; or set %s = \"false\" in flink_configuration (and apply) to "+
				"let the operator delete the cluster and cancel their jobs with it.", strings.Join(live, ", "), kube.SessionBlockKey))
	default:
		return false
	}
	return true
}
