package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
)

// deploymentChecks runs flinkconf's checks on a whole deployment at
// validate time (errors only: warnings come once, from ModifyPlan).
type deploymentChecks struct{}

func (deploymentChecks) Description(context.Context) string {
	return "the combination of attributes can run (flinkconf's checks)"
}

func (v deploymentChecks) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (deploymentChecks) ValidateResource(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m deploymentModel
	if d := req.Config.Get(ctx, &m); d.HasError() {
		return
	}
	checkSensitiveKeys(m, &resp.Diagnostics)
	var diags diag.Diagnostics
	in, ok := m.input(ctx, &diags)
	if !ok || diags.HasError() || m.PodTemplate.IsUnknown() {
		return
	}
	_, fs := flinkconf.Derive(in)
	_, pfs := flinkconf.PodTemplate(m.PodTemplate.ValueString(), in)
	addFindings(&resp.Diagnostics, errorsOnly(append(fs, pfs...)))
}

// checkSensitiveKeys: a secret in flink_configuration is shown in plans
// (a warning); a key in both maps is an error.
func checkSensitiveKeys(m deploymentModel, diags *diag.Diagnostics) {
	sens := m.SensitiveConfig.Elements()
	for k := range m.FlinkConfiguration.Elements() {
		if _, both := sens[k]; both {
			diags.AddAttributeError(path.Root("flink_configuration").AtMapKey(k), "Key set twice",
				fmt.Sprintf("%q is in both flink_configuration and sensitive_flink_configuration: keep it in one (a secret in "+
					"sensitive_flink_configuration).", k))
		} else if flinkconf.IsSensitiveKey(k) {
			diags.AddAttributeWarning(path.Root("flink_configuration").AtMapKey(k), "Secret shown in plans",
				fmt.Sprintf("Flink treats %q as a secret (GlobalConfiguration.isSensitive), but flink_configuration shows it in "+
					"plans and in effective_flink_configuration: move it to sensitive_flink_configuration.", k))
		}
	}
}

// planDeployment records a deployment for the checks of later resources
// and runs its own cross-resource checks.
func (r *deploymentResource) planDeployment(plan deploymentModel, in flinkconf.Input, diags *diag.Diagnostics) {
	if plan.Identity.ValueString() == flinkconf.IdentityPodIdentity {
		r.podIdentityUser(plan.Namespace, plan.ServiceAccount, "identity = \"pod_identity\" on flinkstate_deployment "+plan.Name.ValueString(),
			path.Root("identity"), diags)
	}
	if !known(plan.Namespace, plan.Name) {
		return
	}
	p := r.meta.planned()
	p.mu.Lock()
	defer p.mu.Unlock()
	d := plannedDeployment{savepointDir: in.State.SavepointDir, checkpointDir: in.State.CheckpointDir, storeURI: in.State.StoreURI}
	if known(plan.ServiceAccount) {
		d.serviceAccount = plan.Namespace.ValueString() + "/" + plan.ServiceAccount.ValueString()
	}
	p.deployments[plan.Namespace.ValueString()+"/"+plan.Name.ValueString()] = d
}

// checkIdentityAtApply is rule 6 at apply, for a ServiceAccount this
// configuration does not plan: before the FlinkDeployment is written, a
// pod_identity deployment's ServiceAccount must not carry the IRSA
// annotation. A missing account is left to the operator's own error.
func checkIdentityAtApply(ctx context.Context, c *kube.Client, plan deploymentModel, diags *diag.Diagnostics) {
	if plan.Identity.ValueString() != flinkconf.IdentityPodIdentity {
		return
	}
	ns, sa := plan.Namespace.ValueString(), plan.ServiceAccount.ValueString()
	live, err := kube.GetServiceAccount(ctx, c.Dynamic, ns, sa)
	if err != nil {
		if !notfound.Is(err) {
			addProblem(diags, "Reading", "ServiceAccount "+ns+"/"+sa, readableAPIError(err), "Nothing was written.")
		}
		return
	}
	if _, ok := live.GetAnnotations()[kube.IRSAAnnotation]; ok {
		diags.AddAttributeError(path.Root("identity"), "IRSA and Pod Identity on the same ServiceAccount",
			fmt.Sprintf(irsaConflictDetail, ns+"/"+sa, "identity = \"pod_identity\"")+" Nothing was written.")
	}
}
