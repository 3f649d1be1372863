package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

// rolePlanChecks: the OIDC provider and the KMS keys must be in the
// partition of the provider's region, where the permission policy's ARNs
// are built (checkARNPartitions); a Pod Identity trust without
// cluster_name admits the namespace and ServiceAccount of every cluster in
// the account.
func (r *iamRoleResource) rolePlanChecks(ctx context.Context, plan iamRoleModel, diags *diag.Diagnostics) {
	r.meta.checkARNPartitions(ctx, plan.arns(), diags)
	r.recordRole(ctx, plan)
	if pi := plan.PodIdentity; pi != nil && pi.ClusterName.IsNull() {
		diags.AddAttributeWarning(path.Root("pod_identity").AtName("cluster_name"), "Pod Identity trust for any cluster",
			"Without cluster_name the trust policy admits this namespace and ServiceAccount in every EKS cluster of the account: "+
				"any cluster with a matching association could assume the role. Set cluster_name to the cluster the job runs in.")
	}
}

// recordRole records which ServiceAccount the role trusts and the state
// stores it grants, for the snapshots planned after it
// (checkSnapshotPlan). It reports nothing: what it cannot read is left
// unrecorded, and the role's own checks report it.
func (r *iamRoleResource) recordRole(ctx context.Context, plan iamRoleModel) {
	var ns, sa types.String
	switch {
	case plan.IRSA != nil:
		ns, sa = plan.IRSA.Namespace, plan.IRSA.ServiceAccount
	case plan.PodIdentity != nil:
		ns, sa = plan.PodIdentity.Namespace, plan.PodIdentity.ServiceAccount
	}
	var d diag.Diagnostics
	ids, ok := knownStrings(ctx, plan.StateStoreIDs, &d)
	if !known(ns, sa) || !ok || d.HasError() {
		return
	}
	var stores []store.Store
	for _, id := range ids {
		s, err := store.Parse(id)
		if err != nil {
			return
		}
		stores = append(stores, s)
	}
	p := r.meta.planned()
	p.mu.Lock()
	defer p.mu.Unlock()
	key := ns.ValueString() + "/" + sa.ValueString()
	p.roles[key] = append(p.roles[key], stores...)
}
