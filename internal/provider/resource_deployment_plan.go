package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/deployop"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/preflight"
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
	in, ok := specChecks(ctx, &m.deploymentSpecModel, &resp.Diagnostics)
	addNotices(&resp.Diagnostics, flinkdeploy.NoJobToCheckpoint(m.WaitFor.ValueString(), m.Job != nil)...)
	if ok && m.SavepointFirst != nil && !m.SavepointFirst.FormatType.IsUnknown() {
		addNotices(&resp.Diagnostics, flinkdeploy.SavepointFormatRefusal(in.State.Backend, m.SavepointFirst.FormatType.ValueString())...)
	}
}

// specChecks are the validate-time checks of a FlinkDeployment spec (both resources'):
// flinkconf's, errors only (warnings come once, from ModifyPlan). ok is false while an input is unknown.
func specChecks(ctx context.Context, m *deploymentSpecModel, diags *diag.Diagnostics) (flinkconf.Input, bool) {
	addNotices(diags, flinkconf.SensitiveKeys(m.FlinkConfiguration.Elements(), m.SensitiveConfig.Elements())...)
	var d diag.Diagnostics
	in, ok := m.input(ctx, nil, &d)
	if !ok || d.HasError() || m.PodTemplate.IsUnknown() {
		return in, false
	}
	_, fs := flinkconf.Derive(in)
	_, pfs := flinkconf.PodTemplate(m.PodTemplate.ValueString(), in)
	addFindings(diags, errorsOnly(append(fs, pfs...)))
	return in, true
}

// planSpecChecks are the plan-time checks of a spec both resources make besides
// flinkconf's, planIdentity and the pod template's; state is nil for a new object.
func planSpecChecks(plan, state *deploymentModel, in flinkconf.Input, diags *diag.Diagnostics) {
	if plan.JobManager != nil {
		addNotices(diags, flinkdeploy.StandbyWithoutHA(plan.JobManager.Replicas.ValueInt64(), in.HAEnabled())...)
	}
	if state != nil {
		addNotices(diags, preflight.CrossingNotice(state.FlinkVersion.ValueString(), plan.FlinkVersion.ValueString(), state.keepsState())...)
	}
}

// planDeployment records a deployment for the checks of later resources
// and runs its own cross-resource checks.
func (r *deploymentResource) planDeployment(plan deploymentModel, in flinkconf.Input, diags *diag.Diagnostics) {
	r.planCredentials(&plan.deploymentSpecModel, "flinkstate_deployment "+plan.Name.ValueString(), diags)
	if !known(plan.Namespace, plan.Name) {
		return
	}
	d := plannedDeployment{savepointDir: in.State.SavepointDir, checkpointDir: in.State.CheckpointDir, storeURI: in.State.StoreURI, backend: in.State.Backend}
	if known(plan.ServiceAccount) {
		d.serviceAccount = plan.Namespace.ValueString() + "/" + plan.ServiceAccount.ValueString()
	}
	p := r.meta.planned()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.deployments[plan.Namespace.ValueString()+"/"+plan.Name.ValueString()] = d
}

// planCredentials relates a spec's identity to the ServiceAccounts this run planned (what
// names the resource): Pod Identity on an IRSA account, an IRSA role no class uses.
func (r *resourceBase) planCredentials(plan *deploymentSpecModel, what string, diags *diag.Diagnostics) {
	if plan.Identity.ValueString() == flinkconf.IdentityPodIdentity {
		r.podIdentityUser(plan.Namespace, plan.ServiceAccount, "identity = \"pod_identity\" on "+what, path.Root("identity"), diags)
	}
	if !known(plan.Namespace, plan.ServiceAccount) || !plan.Identity.IsNull() {
		return
	}
	p := r.meta.planned()
	p.mu.Lock()
	defer p.mu.Unlock()
	if sa := plan.Namespace.ValueString() + "/" + plan.ServiceAccount.ValueString(); p.irsa[sa] {
		addNotices(diags, flinkdeploy.UnusedIRSARole(sa))
	}
}

// checkIdentityAtApply is rule 6 at apply, for a ServiceAccount this
// configuration does not plan (deployop.IRSAOnPodIdentity).
func checkIdentityAtApply(ctx context.Context, c *kube.Client, plan deploymentModel, diags *diag.Diagnostics) {
	ns, sa := plan.Namespace.ValueString(), plan.ServiceAccount.ValueString()
	conflict, rep := deployop.IRSAOnPodIdentity(ctx, c.Dynamic, plan.Identity.ValueString(), ns, sa)
	if rep != nil {
		addReport(diags, "ServiceAccount "+ns+"/"+sa, *rep)
	} else if conflict {
		diags.AddAttributeError(path.Root("identity"), "IRSA and Pod Identity on the same ServiceAccount",
			fmt.Sprintf(irsaConflictDetail, ns+"/"+sa, "identity = \"pod_identity\"")+" Nothing was written.")
	}
}

// planIdentity says at plan what identity does to the credentials class
// (flinkdeploy.IdentityNotice); state is nil for a new object.
func planIdentity(plan deploymentModel, state *deploymentModel, diags *diag.Diagnostics) {
	if plan.Identity.IsUnknown() || (state != nil && state.Identity.IsUnknown()) {
		return
	}
	had := ""
	if state != nil {
		had = state.Identity.ValueString()
	}
	addNotices(diags, flinkdeploy.IdentityNotice(had, plan.Identity.ValueString(), state == nil)...)
}
