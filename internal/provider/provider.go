// Package provider is the Terraform adapter: schemas, and thin resources and
// data sources over the domain packages (awsclient, kube, ...).
package provider

import (
	"context"
	"fmt"
	"net/url"

	"github.com/hashicorp/terraform-plugin-framework-validators/objectvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// New returns the provider factory for the given version.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &flinkstateProvider{version: version} }
}

type flinkstateProvider struct {
	version string
}

type providerModel struct {
	AWS        *awsModel  `tfsdk:"aws"`
	Kubernetes *kubeModel `tfsdk:"kubernetes"`
}

type awsModel struct {
	Region                    types.String `tfsdk:"region"`
	Profile                   types.String `tfsdk:"profile"`
	Endpoint                  types.String `tfsdk:"endpoint"`
	S3UsePathStyle            types.Bool   `tfsdk:"s3_use_path_style"`
	SkipCredentialsValidation types.Bool   `tfsdk:"skip_credentials_validation"`
}

type kubeModel struct {
	ConfigPath           types.String `tfsdk:"config_path"`
	ConfigContext        types.String `tfsdk:"config_context"`
	Host                 types.String `tfsdk:"host"`
	Token                types.String `tfsdk:"token"`
	ClusterCACertificate types.String `tfsdk:"cluster_ca_certificate"`
	Insecure             types.Bool   `tfsdk:"insecure"`
	Exec                 *execModel   `tfsdk:"exec"`
}

type execModel struct {
	APIVersion types.String `tfsdk:"api_version"`
	Command    types.String `tfsdk:"command"`
	Args       types.List   `tfsdk:"args"`
	Env        types.Map    `tfsdk:"env"`
}

func (p *flinkstateProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "flinkstate"
	resp.Version = p.version
}

func (p *flinkstateProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Plans and applies everything an Apache Flink job's state needs on AWS EKS with the Flink Kubernetes Operator: " +
			"S3 bucket and prefix, least-privilege IAM for IRSA or EKS Pod Identity, ServiceAccount and RoleBinding, " +
			"FlinkDeployment and FlinkStateSnapshot, and where the latest checkpoint is. Both blocks are optional; " +
			"values may be unknown at plan time (a cluster created in the same run): planning a create makes no API call.",
		Blocks: map[string]schema.Block{
			"aws": schema.SingleNestedBlock{
				Description: "How to reach AWS (S3, IAM, STS, EKS). Unset values fall back to the AWS SDK's environment and shared configuration.",
				Attributes: map[string]schema.Attribute{
					"region": schema.StringAttribute{
						Optional:    true,
						Description: "AWS region. Defaults to AWS_REGION or the shared configuration.",
					},
					"profile": schema.StringAttribute{
						Optional:    true,
						Description: "Shared configuration profile. Defaults to AWS_PROFILE.",
					},
					"endpoint": schema.StringAttribute{
						Optional: true,
						Description: "One endpoint URL for S3, IAM, STS, EKS and KMS (LocalStack style). " +
							"AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_<SERVICE> are honoured when this is unset.",
						Validators: []validator.String{httpURL{}},
					},
					"s3_use_path_style": schema.BoolAttribute{
						Optional:    true,
						Description: "Address buckets by path instead of virtual host. Defaults to true when a custom endpoint is in use, false otherwise.",
					},
					"skip_credentials_validation": schema.BoolAttribute{
						Optional:    true,
						Description: "Skip the sts:GetCallerIdentity call that checks credentials when the AWS clients are first used. Default false.",
					},
				},
			},
			"kubernetes": schema.SingleNestedBlock{
				Description: "How to reach the cluster: a kubeconfig (config_path, else KUBECONFIG when host is unset), or host with token, exec or a CA certificate.",
				Attributes: map[string]schema.Attribute{
					"config_path": schema.StringAttribute{
						Optional:    true,
						Description: "Path to a kubeconfig file. Defaults to KUBE_CONFIG_PATH or KUBECONFIG when host is not set.",
					},
					"config_context": schema.StringAttribute{
						Optional:    true,
						Description: "Context of the kubeconfig to use. Defaults to its current context.",
					},
					"host": schema.StringAttribute{
						Optional:    true,
						Description: "API server URL, e.g. an EKS cluster's endpoint (may come from a resource in the same configuration).",
						Validators:  []validator.String{httpURL{}},
					},
					"token": schema.StringAttribute{
						Optional:    true,
						Sensitive:   true,
						Description: "Bearer token.",
					},
					"cluster_ca_certificate": schema.StringAttribute{
						Optional:    true,
						Description: "PEM-encoded CA certificate of the API server.",
						Validators: []validator.String{
							stringvalidator.ConflictsWith(path.MatchRelative().AtParent().AtName("insecure")),
						},
					},
					"insecure": schema.BoolAttribute{
						Optional:    true,
						Description: "Skip verification of the API server's certificate. Only for test clusters.",
					},
				},
				Blocks: map[string]schema.Block{
					"exec": schema.SingleNestedBlock{
						Description: "An exec credential plugin, e.g. `aws eks get-token --cluster-name NAME`.",
						Attributes: map[string]schema.Attribute{
							"api_version": schema.StringAttribute{
								Optional:    true,
								Description: "client.authentication.k8s.io version the plugin speaks, e.g. client.authentication.k8s.io/v1beta1.",
								Validators: []validator.String{stringvalidator.OneOf(
									"client.authentication.k8s.io/v1beta1", "client.authentication.k8s.io/v1")},
							},
							"command": schema.StringAttribute{
								Optional:    true,
								Description: "Command to run.",
							},
							"args": schema.ListAttribute{
								Optional:    true,
								ElementType: types.StringType,
								Description: "Arguments of the command.",
							},
							"env": schema.MapAttribute{
								Optional:    true,
								ElementType: types.StringType,
								Description: "Environment variables of the command.",
							},
						},
						Validators: []validator.Object{
							objectvalidator.ConflictsWith(path.MatchRelative().AtParent().AtName("token")),
							objectvalidator.AlsoRequires(
								path.MatchRelative().AtName("api_version"),
								path.MatchRelative().AtName("command"),
							),
						},
					},
				},
			},
		},
	}
}

func (p *flinkstateProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var cfg providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	meta := newMeta(p.version)
	meta.setAWS(cfg.AWS)
	resp.Diagnostics.Append(meta.setKube(ctx, cfg.Kubernetes)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.ResourceData = meta
	resp.DataSourceData = meta
}

func (p *flinkstateProvider) Resources(_ context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		newBucketResource,
		newServiceAccountResource,
		newStateStoreResource,
		newIAMRoleResource,
		newPodIdentityAssociationResource,
		newSnapshotResource,
		newDeploymentResource,
	}
}

func (p *flinkstateProvider) DataSources(_ context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		newPolicyDocumentDataSource,
		newLatestCheckpointDataSource,
		newLatestSavepointDataSource,
		newFlinkConfigurationDataSource,
	}
}

// httpURL validates an absolute http(s) URL.
type httpURL struct{}

func (v httpURL) Description(context.Context) string {
	return "must be an absolute http:// or https:// URL"
}
func (v httpURL) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }
func (v httpURL) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	u, err := url.Parse(req.ConfigValue.ValueString())
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid URL",
			fmt.Sprintf("%s must be an absolute http:// or https:// URL, got %q.", req.Path, req.ConfigValue.ValueString()))
	}
}
