package provider

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// refuseSessionDelete refuses, before anything is deleted, the destroy of a
// session cluster (a deployment without a job) that FlinkSessionJobs still
// run on (kube.RefuseSessionDelete). It reports whether it refused.
func refuseSessionDelete(ctx context.Context, c *kube.Client, state *deploymentModel, timeout time.Duration, diags *diag.Diagnostics) bool {
	if state.Job != nil {
		return false
	}
	ns, name := state.Namespace.ValueString(), state.Name.ValueString()
	rep, refused := kube.RefuseSessionDelete(ctx, c.Dynamic, ns, name, stringMap(ctx, state.FlinkConfiguration, diags), timeout)
	if refused {
		addReport(diags, "FlinkDeployment "+ns+"/"+name, rep)
	}
	return refused
}
