package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// ModifyPlan refuses a role ARN outside the partition of the provider's
// region, records an IRSA ServiceAccount and refuses it when this run
// already gives the same account Pod Identity.
func (r *serviceAccountResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan serviceAccountModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	r.meta.checkARNPartitions(ctx, []arnAt{{path.Root("irsa_role_arn"), "irsa_role_arn", plan.IRSARoleARN}}, &resp.Diagnostics)
	if resp.Diagnostics.HasError() || !known(plan.Namespace, plan.Name) || plan.IRSARoleARN.IsNull() {
		return
	}
	key := plan.Namespace.ValueString() + "/" + plan.Name.ValueString()
	p := r.meta.planned()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.irsa[key] = true
	if by, ok := p.podIdentity[key]; ok {
		resp.Diagnostics.AddAttributeError(path.Root("irsa_role_arn"), "IRSA and Pod Identity on the same ServiceAccount",
			fmt.Sprintf(irsaConflictDetail, key, by))
	}
}
