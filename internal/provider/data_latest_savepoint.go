package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

type latestSavepointDataSource struct{ dataSourceBase }

func newLatestSavepointDataSource() datasource.DataSource { return &latestSavepointDataSource{} }

type latestSavepointModel struct {
	Namespace       types.String `tfsdk:"namespace"`
	DeploymentName  types.String `tfsdk:"deployment_name"`
	Type            types.String `tfsdk:"type"`
	Found           types.Bool   `tfsdk:"found"`
	Name            types.String `tfsdk:"name"`
	Path            types.String `tfsdk:"path"`
	ResultTimestamp types.String `tfsdk:"result_timestamp"`
}

func (d *latestSavepointDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_latest_savepoint"
}

func (d *latestSavepointDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "The newest COMPLETED FlinkStateSnapshot of a FlinkDeployment (by spec.jobReference, newest by status.resultTimestamp), " +
			"from the Kubernetes API.",
		Attributes: map[string]schema.Attribute{
			"namespace":       schema.StringAttribute{Required: true, Description: "Namespace of the deployment.", Validators: namespaceValidators()},
			"deployment_name": schema.StringAttribute{Required: true, Description: "Name of the FlinkDeployment.", Validators: objectNameValidators()},
			"type": schema.StringAttribute{Optional: true, Description: "Only `savepoint` or only `checkpoint` snapshots (default: both).",
				Validators: []validator.String{stringvalidator.OneOf("savepoint", "checkpoint")}},
			"found":            schema.BoolAttribute{Computed: true, Description: "Whether a completed snapshot was found."},
			"name":             schema.StringAttribute{Computed: true, Description: "Name of the FlinkStateSnapshot."},
			"path":             schema.StringAttribute{Computed: true, Description: "status.path: what job.initial_savepoint_path takes."},
			"result_timestamp": schema.StringAttribute{Computed: true, Description: "status.resultTimestamp."},
		},
	}
}

func (d *latestSavepointDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m latestSavepointModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c := d.meta.kubeOrDiag(&resp.Diagnostics)
	if c == nil {
		return
	}
	sp, err := kube.LatestSnapshot(ctx, c.Dynamic, m.Namespace.ValueString(), m.DeploymentName.ValueString(), m.Type.ValueString())
	if err != nil {
		addProblem(&resp.Diagnostics, "Finding", "the latest savepoint of "+m.Namespace.ValueString()+"/"+m.DeploymentName.ValueString(), err.Error(), "")
		return
	}
	m.Found = types.BoolValue(sp != nil)
	m.Name, m.Path, m.ResultTimestamp = types.StringNull(), types.StringNull(), types.StringNull()
	if sp != nil {
		m.Name, m.Path, m.ResultTimestamp = types.StringValue(sp.Name), types.StringValue(sp.Path), optionalString(sp.ResultTimestamp)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
