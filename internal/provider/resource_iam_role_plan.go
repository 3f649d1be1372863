package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
)

// rolePlanChecks: a Pod Identity trust without cluster_name admits the
// namespace and ServiceAccount of every cluster in the account.
func rolePlanChecks(plan iamRoleModel, diags *diag.Diagnostics) {
	if pi := plan.PodIdentity; pi != nil && pi.ClusterName.IsNull() {
		diags.AddAttributeWarning(path.Root("pod_identity").AtName("cluster_name"), "Pod Identity trust for any cluster",
			"Without cluster_name the trust policy admits this namespace and ServiceAccount in every EKS cluster of the account: "+
				"any cluster with a matching association could assume the role. Set cluster_name to the cluster the job runs in.")
	}
}
