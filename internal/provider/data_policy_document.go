package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/iampolicy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

type policyDocumentDataSource struct{ dataSourceBase }

var (
	_ datasource.DataSourceWithConfigure        = (*policyDocumentDataSource)(nil)
	_ datasource.DataSourceWithConfigValidators = (*policyDocumentDataSource)(nil)
)

func (d *policyDocumentDataSource) ConfigValidators(context.Context) []datasource.ConfigValidator {
	return []datasource.ConfigValidator{policyDocumentPartitions{}}
}

func newPolicyDocumentDataSource() datasource.DataSource { return &policyDocumentDataSource{} }

type policyDocumentModel struct {
	StateStoreIDs types.List   `tfsdk:"state_store_ids"`
	KMSKeyARNs    types.List   `tfsdk:"kms_key_arns"`
	Partition     types.String `tfsdk:"partition"`
	JSON          types.String `tfsdk:"json"`
	Size          types.Int64  `tfsdk:"size"`
}

func (d *policyDocumentDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_policy_document"
}

func (d *policyDocumentDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "The least-privilege permission policy flinkstate_iam_role attaches, for users who attach it with another " +
			"provider (e.g. an aws_iam_role_policy on a role they manage). Computed locally: no API call.",
		Attributes: map[string]schema.Attribute{
			"state_store_ids": schema.ListAttribute{
				Required:    true,
				ElementType: types.StringType,
				Description: "State store IDs (`bucket/prefix`).",
				Validators: []validator.List{
					listvalidator.SizeAtLeast(1),
					listvalidator.UniqueValues(),
					listvalidator.ValueStringsAre(storeIDCheck),
				},
			},
			"kms_key_arns": schema.ListAttribute{
				Optional:    true,
				ElementType: types.StringType,
				Description: "KMS keys of SSE-KMS buckets (kms:GenerateDataKey and kms:Decrypt through S3 only).",
				Validators:  []validator.List{listvalidator.ValueStringsAre(kmsKeyARNCheck)},
			},
			"partition": schema.StringAttribute{
				Optional:    true,
				Description: "AWS partition of the ARNs: aws, aws-cn or aws-us-gov. Defaults to the partition of the provider's AWS region. Every kms_key_arns entry must be in it.",
				Validators:  []validator.String{stringvalidator.OneOf("aws", "aws-cn", "aws-us-gov")},
			},
			"json": schema.StringAttribute{Computed: true, Description: "The policy document."},
			"size": schema.Int64Attribute{Computed: true, Description: "Its size as IAM counts it (characters without white space; a role's inline policies may total 10,240)."},
		},
	}
	markdownDescriptions(&resp.Schema)
}

func (d *policyDocumentDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m policyDocumentModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var ids, keys []string
	resp.Diagnostics.Append(m.StateStoreIDs.ElementsAs(ctx, &ids, false)...)
	if !m.KMSKeyARNs.IsNull() {
		resp.Diagnostics.Append(m.KMSKeyARNs.ElementsAs(ctx, &keys, false)...)
	}
	var stores []store.Store
	for _, id := range ids {
		s, err := store.Parse(id)
		if err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("state_store_ids"), "Invalid state store ID", err.Error())
			return
		}
		stores = append(stores, s)
	}
	partition := m.Partition.ValueString()
	if partition == "" {
		// The keys must then be in the provider's partition, which the
		// document's other ARNs take.
		d.meta.checkARNPartitions(ctx, listARNs("kms_key_arns", m.KMSKeyARNs), &resp.Diagnostics)
		if resp.Diagnostics.HasError() {
			return
		}
	}
	if partition == "" && d.meta != nil {
		partition, _ = d.meta.Partition(ctx)
	}
	doc, err := iampolicy.Permissions(partition, stores, keys)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("state_store_ids"), "Permission policy not possible", err.Error())
		return
	}
	m.JSON = types.StringValue(doc.JSON())
	m.Size = types.Int64Value(int64(iampolicy.Size(doc.JSON())))
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
