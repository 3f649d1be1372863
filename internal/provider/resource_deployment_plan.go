package provider

import (
	"context"
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

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
	if plan.Identity.ValueString() == "pod_identity" {
		r.podIdentityUser(plan.Namespace, plan.ServiceAccount, "identity = \"pod_identity\" on flinkstate_deployment "+plan.Name.ValueString(),
			path.Root("identity"), diags)
	}
	if !known(plan.Namespace, plan.Name) {
		return
	}
	p := r.meta.planned()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.deployments[plan.Namespace.ValueString()+"/"+plan.Name.ValueString()] = plannedDeployment{savepointDir: in.State.SavepointDir, storeURI: in.State.StoreURI}
}

// checkIdentityAtApply is rule 6 at apply, for a ServiceAccount this
// configuration does not plan: before the FlinkDeployment is written, a
// pod_identity deployment's ServiceAccount must not carry the IRSA
// annotation. A missing account is left to the operator's own error.
func checkIdentityAtApply(ctx context.Context, c *kube.Client, plan deploymentModel, diags *diag.Diagnostics) {
	if plan.Identity.ValueString() != "pod_identity" {
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

// ModifyPlan runs the plan-time checks and shows the derived configuration,
// without any API call.
func (r *deploymentResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		if !req.State.Raw.IsNull() {
			var state deploymentModel
			if resp.Diagnostics.Append(req.State.Get(ctx, &state)...); !resp.Diagnostics.HasError() {
				planDestroy(ctx, &state, &resp.Diagnostics)
			}
		}
		return
	}
	var plan deploymentModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	var state *deploymentModel
	if !req.State.Raw.IsNull() {
		state = &deploymentModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, state)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	plan.Unwritten = unwrittenDefaults(ctx, req.Private, &resp.Diagnostics)
	if state != nil {
		state.Unwritten = plan.Unwritten
	}
	if state == nil || !plan.Namespace.Equal(state.Namespace) || !plan.Name.Equal(state.Name) {
		// A new object (a create, or a replacement's, even of an imported
		// one): the provider writes all its defaults, and owns what it
		// creates.
		plan.Unwritten = nil
		if state == nil {
			setPrivateString(ctx, resp.Private, privateUnwritten, "", &resp.Diagnostics)
			setPrivateString(ctx, resp.Private, privateAdopt, "", &resp.Diagnostics)
		}
	}
	var cfgMode types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("mode"), &cfgMode)...)
	if cfgMode.IsNull() {
		// Unset: native, the operator's default; not written at all on an
		// imported object that did not have it (flinkconf.AbsentMode).
		plan.Mode = types.StringValue("native")
		if slices.Contains(plan.Unwritten, flinkconf.AbsentMode) {
			plan.Mode = types.StringNull()
		}
	} else if state != nil && state.Mode.IsNull() && slices.Contains(plan.Unwritten, flinkconf.AbsentMode) {
		resp.Diagnostics.AddAttributeWarning(path.Root("mode"), "Writing mode restarts the job",
			fmt.Sprintf("The imported FlinkDeployment has no spec.mode (the operator runs it native); mode = %q writes the field, a spec "+
				"change the operator applies as an upgrade (a restart with the job's upgrade mode). Leave mode unset to keep it as it is.",
				cfgMode.ValueString()))
	}
	// namespace and name are the attributes that force a replacement (the
	// framework gives ModifyPlan an empty RequiresReplace, whatever the
	// attributes' plan modifiers said).
	replacing := state != nil && (!plan.Namespace.Equal(state.Namespace) || !plan.Name.Equal(state.Name))
	switch {
	case state == nil:
		planCarry(ctx, &plan, req.Private, resp.Private, &resp.Diagnostics)
	case replacing:
		planReplace(ctx, &plan, state, resp.Private, &resp.Diagnostics)
	}
	in, ok := plan.input(ctx, &resp.Diagnostics)
	if !ok {
		plan.EffectiveConfig = types.MapUnknown(types.StringType)
		plan.EffectivePod = types.StringUnknown()
		planRestore(ctx, &plan, state, &resp.Diagnostics)
		resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
		return
	}
	cfg, fs := flinkconf.Derive(in)
	addFindings(&resp.Diagnostics, fs)
	r.planDeployment(plan, in, &resp.Diagnostics)
	plan.EffectivePod = types.StringUnknown()
	if !plan.PodTemplate.IsUnknown() {
		pod, pfs := flinkconf.PodTemplate(plan.PodTemplate.ValueString(), in)
		addFindings(&resp.Diagnostics, pfs)
		if pod != nil {
			plan.EffectivePod = types.StringValue(canonicalJSON(pod))
		}
	}
	if plan.JobManager != nil && plan.JobManager.Replicas.ValueInt64() > 1 && !in.HAEnabled() {
		resp.Diagnostics.AddAttributeError(path.Root("job_manager").AtName("replicas"), "Standby JobManagers need high availability",
			"more than one JobManager replica needs high_availability (leader election).")
	}
	if resp.Diagnostics.HasError() {
		return
	}
	if state != nil && !replacing {
		// Spelled as the object has it (flinkconf.Respell): an adopted
		// object's deprecated keys and equivalent values are no change.
		// Against what the object holds (the written configuration, not
		// the keys the operator adds), as the apply does.
		cfg = flinkconf.Respell(cfg, state.writtenConfig(ctx, &resp.Diagnostics))
	}
	plan.EffectiveConfig = plan.effectiveConfig(ctx, cfg, in, &resp.Diagnostics)
	if replacing {
		// A replacement plans a new object (Terraform plans it again with a
		// null prior state); the old one's changes are not upgrades.
		planRestore(ctx, &plan, nil, &resp.Diagnostics)
	} else {
		planRestore(ctx, &plan, state, &resp.Diagnostics)
	}
	// An update, or a wait that did not end (wait pending) and makes an
	// update whose apply waits again: the operator decides the status again.
	if state != nil && (!deploymentSpecEqual(ctx, plan, *state) || waitPending(ctx, req.Private, &resp.Diagnostics) != "") {
		plan.LifecycleState, plan.JobState, plan.JobID = types.StringUnknown(), types.StringUnknown(), types.StringUnknown()
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}
