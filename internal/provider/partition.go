package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/awsclient"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/iampolicy"
)

// Partitions (iampolicy.SamePartition, iampolicy.InPartition): the ARNs of
// one resource must share a partition, refused at validate; and each must
// be in the partition of the provider's region, where the provider builds
// its own ARNs, refused at plan (the region is the provider's
// configuration, which validate does not have). Both without API calls.

// arnAt is an ARN attribute of a configuration: its path and value.
type arnAt struct {
	path path.Path
	name string // as messages write it: irsa.oidc_provider_arn, kms_key_arns[1]
	val  types.String
}

// listARNs lists a list attribute's known elements as arnAt.
func listARNs(root string, l types.List) []arnAt {
	if l.IsNull() || l.IsUnknown() {
		return nil
	}
	var out []arnAt
	for i, e := range l.Elements() {
		if s, ok := e.(types.String); ok {
			out = append(out, arnAt{path.Root(root).AtListIndex(i), fmt.Sprintf("%s[%d]", root, i), s})
		}
	}
	return out
}

// checkSamePartition refuses ARNs of one resource in different partitions.
func checkSamePartition(arns []arnAt, diags *diag.Diagnostics) {
	var named []iampolicy.NamedARN
	var at []arnAt
	for _, a := range arns {
		if known(a.val) {
			named = append(named, iampolicy.NamedARN{Attr: a.name, ARN: a.val.ValueString()})
			at = append(at, a)
		}
	}
	if i, ref := iampolicy.SamePartition(named); i >= 0 {
		got, want := iampolicy.ARNPartition(named[i].ARN), iampolicy.ARNPartition(named[ref].ARN)
		diags.AddAttributeError(at[i].path, "ARNs in different AWS partitions", fmt.Sprintf(samePartitionDetail,
			at[i].name, got, at[ref].name, want))
	}
}

// samePartitionDetail: the ARN, its partition, the first ARN, its partition.
const samePartitionDetail = "%s is in the AWS partition %s, but %s is in %s: partitions are separate IAM instances, and credentials " +
	"of one cannot use resources of the other (AWS whitepaper \"AWS Fault Isolation Boundaries\", \"Partitions\"; IAM User Guide, " +
	"\"Amazon Resource Names (ARNs)\": \"Each AWS account is scoped to one partition\"), so the role or policy could not work. Give " +
	"ARNs of the one partition the cluster and the state are in."

// checkARNPartitions refuses, at plan, ARNs outside the partition of the
// provider's region; nothing is checked while the region is not known
// without an API call (meta.providerRegion).
func (m *meta) checkARNPartitions(ctx context.Context, arns []arnAt, diags *diag.Diagnostics) {
	region := m.providerRegion(ctx)
	if region == "" {
		return
	}
	partition := awsclient.Partition(region)
	for _, a := range arns {
		if !known(a.val) {
			continue
		}
		if got, outside := iampolicy.OutsidePartition(a.val.ValueString(), partition); outside {
			diags.AddAttributeError(a.path, "ARN in another AWS partition", fmt.Sprintf(inPartitionDetail,
				a.name, a.val.ValueString(), got, region, partition, partition, partition, got))
		}
	}
}

// inPartitionDetail: the attribute, the ARN, its partition, the region,
// the region's partition (three times), the ARN's partition.
const inPartitionDetail = "%s %s is in the AWS partition %s, but the provider's region %s is in %s, where the provider builds every " +
	"other ARN (the bucket's, the permission policy's) and makes its calls: partitions are separate IAM instances, and credentials " +
	"of one cannot use resources of the other (AWS whitepaper \"AWS Fault Isolation Boundaries\", \"Partitions\"). Give an ARN of " +
	"%s (arn:%s:...), or, when the cluster and the state are in %s, set aws.region to one of its regions."

// roleARNs are the ARNs a flinkstate_iam_role is given.
func (m iamRoleModel) arns() []arnAt {
	var out []arnAt
	if m.IRSA != nil {
		out = append(out, arnAt{path.Root("irsa").AtName("oidc_provider_arn"), "irsa.oidc_provider_arn", m.IRSA.OIDCProviderARN})
	}
	return append(out, listARNs("kms_key_arns", m.KMSKeyARNs)...)
}

// rolePartitions: the OIDC provider and the KMS keys in one partition.
type rolePartitions struct{}

func (rolePartitions) Description(context.Context) string {
	return "irsa.oidc_provider_arn and kms_key_arns are in one AWS partition"
}
func (v rolePartitions) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }
func (rolePartitions) ValidateResource(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m iamRoleModel
	if d := req.Config.Get(ctx, &m); d.HasError() {
		return
	}
	checkSamePartition(m.arns(), &resp.Diagnostics)
	checkIssuerPartition(m, &resp.Diagnostics)
}

// checkIssuerPartition: an EKS OIDC provider's ARN is in the partition of
// the cluster's region, which its issuer names
// (iampolicy.OIDCIssuerRegion): arn:aws:...:oidc-provider/oidc.eks.cn-north-1...
// names no provider that exists.
func checkIssuerPartition(m iamRoleModel, diags *diag.Diagnostics) {
	if m.IRSA == nil || !known(m.IRSA.OIDCProviderARN) {
		return
	}
	a := m.IRSA.OIDCProviderARN.ValueString()
	region := iampolicy.OIDCIssuerRegion(a)
	if region == "" {
		return
	}
	want := awsclient.Partition(region)
	if got, outside := iampolicy.OutsidePartition(a, want); outside {
		diags.AddAttributeError(path.Root("irsa").AtName("oidc_provider_arn"), "OIDC provider ARN in another partition than its cluster",
			fmt.Sprintf("irsa.oidc_provider_arn is in the AWS partition %s, but its issuer is a cluster of %s, which is in %s: IAM "+
				"creates the cluster's OIDC provider in the partition of its region, so this ARN names none. Use arn:%s:iam::ACCOUNT:"+
				"oidc-provider/ISSUER, as the cluster's account shows it.", got, region, want, want))
	}
}

// policyDocumentPartitions: the KMS keys in one partition, the one named
// by partition when it is set.
type policyDocumentPartitions struct{}

func (policyDocumentPartitions) Description(context.Context) string {
	return "kms_key_arns are in one AWS partition, partition's when it is set"
}
func (v policyDocumentPartitions) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}
func (policyDocumentPartitions) ValidateDataSource(ctx context.Context, req datasource.ValidateConfigRequest, resp *datasource.ValidateConfigResponse) {
	var m policyDocumentModel
	if d := req.Config.Get(ctx, &m); d.HasError() {
		return
	}
	arns := listARNs("kms_key_arns", m.KMSKeyARNs)
	if known(m.Partition) {
		// The partition attribute as an ARN of its partition, first: the
		// keys are compared with it.
		arns = append([]arnAt{{path.Root("partition"), "partition", types.StringValue("arn:" + m.Partition.ValueString() + ":iam:::partition")}}, arns...)
	}
	checkSamePartition(arns, &resp.Diagnostics)
}
