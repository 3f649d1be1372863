// Package provider is the Terraform adapter: schemas, and thin resources and
// data sources over the domain packages (awsclient, kube, ...).
package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/awsclient"
)

// New returns the provider factory for the given version.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &flinkstateProvider{version: version} }
}

type flinkstateProvider struct {
	version string
}

var _ provider.Provider = (*flinkstateProvider)(nil)

type providerModel struct {
	AWS        *awsModel  `tfsdk:"aws"`
	Kubernetes *kubeModel `tfsdk:"kubernetes"`
}

type awsModel struct {
	Region                    types.String      `tfsdk:"region"`
	Profile                   types.String      `tfsdk:"profile"`
	Endpoint                  types.String      `tfsdk:"endpoint"`
	S3UsePathStyle            types.Bool        `tfsdk:"s3_use_path_style"`
	SkipCredentialsValidation types.Bool        `tfsdk:"skip_credentials_validation"`
	SharedConfigFiles         types.List        `tfsdk:"shared_config_files"`
	SharedCredentialsFiles    types.List        `tfsdk:"shared_credentials_files"`
	MaxRetries                types.Int64       `tfsdk:"max_retries"`
	RetryMode                 types.String      `tfsdk:"retry_mode"`
	AllowedAccountIDs         types.Set         `tfsdk:"allowed_account_ids"`
	ForbiddenAccountIDs       types.Set         `tfsdk:"forbidden_account_ids"`
	AssumeRole                *assumeRoleModel  `tfsdk:"assume_role"`
	AssumeRoleWithWebIdentity *webIdentityModel `tfsdk:"assume_role_with_web_identity"`
	Endpoints                 *endpointsModel   `tfsdk:"endpoints"`
	DefaultTags               *defaultTagsModel `tfsdk:"default_tags"`
}

type assumeRoleModel struct {
	RoleARN     types.String `tfsdk:"role_arn"`
	SessionName types.String `tfsdk:"session_name"`
	ExternalID  types.String `tfsdk:"external_id"`
	Duration    types.String `tfsdk:"duration"`
	Tags        types.Map    `tfsdk:"tags"`
	Policy      types.String `tfsdk:"policy"`
}

type webIdentityModel struct {
	RoleARN              types.String `tfsdk:"role_arn"`
	WebIdentityTokenFile types.String `tfsdk:"web_identity_token_file"`
	SessionName          types.String `tfsdk:"session_name"`
}

type endpointsModel struct {
	S3  types.String `tfsdk:"s3"`
	IAM types.String `tfsdk:"iam"`
	STS types.String `tfsdk:"sts"`
	EKS types.String `tfsdk:"eks"`
	KMS types.String `tfsdk:"kms"`
}

type defaultTagsModel struct {
	Tags types.Map `tfsdk:"tags"`
}

type kubeModel struct {
	ConfigPath           types.String `tfsdk:"config_path"`
	ConfigPaths          types.List   `tfsdk:"config_paths"`
	ConfigContext        types.String `tfsdk:"config_context"`
	Host                 types.String `tfsdk:"host"`
	Token                types.String `tfsdk:"token"`
	ClusterCACertificate types.String `tfsdk:"cluster_ca_certificate"`
	ClientCertificate    types.String `tfsdk:"client_certificate"`
	ClientKey            types.String `tfsdk:"client_key"`
	ProxyURL             types.String `tfsdk:"proxy_url"`
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
			"FlinkDeployment and FlinkStateSnapshot, and where the latest checkpoint is.",
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
							"AWS_ENDPOINT_URL is honoured when this is unset. A service's own endpoint wins over this one: `endpoints.<service>`, " +
							"else AWS_ENDPOINT_URL_<SERVICE> (or the profile's `services` section), as the AWS SDK for Go v2 resolves it (each client's resolveBaseEndpoint).",
						Validators: []validator.String{endpointCheck},
					},
					"s3_use_path_style": schema.BoolAttribute{
						Optional:    true,
						Description: "Address buckets by path instead of virtual host. Defaults to true when a custom endpoint is in use, false otherwise.",
					},
					"skip_credentials_validation": schema.BoolAttribute{
						Optional:    true,
						Description: "Skip the sts:GetCallerIdentity call that checks credentials when the AWS clients are first used. Default false. The call is made anyway when allowed_account_ids or forbidden_account_ids is set.",
					},
					"shared_config_files": schema.ListAttribute{
						Optional:    true,
						ElementType: types.StringType,
						Description: "Shared configuration files to read instead of ~/.aws/config (AWS_CONFIG_FILE).",
					},
					"shared_credentials_files": schema.ListAttribute{
						Optional:    true,
						ElementType: types.StringType,
						Description: "Shared credentials files to read instead of ~/.aws/credentials (AWS_SHARED_CREDENTIALS_FILE).",
					},
					"max_retries": schema.Int64Attribute{
						Optional: true,
						Description: "Maximum number of attempts of one API call. Defaults to the AWS SDK's: AWS_MAX_ATTEMPTS, the profile's max_attempts, else 3. " +
							"Operations that wait for IAM propagation retry on their own beyond this.",
						Validators: []validator.Int64{int64validator.AtLeast(1)},
					},
					"retry_mode": schema.StringAttribute{
						Optional:    true,
						Description: "`standard` or `adaptive`. Defaults to the AWS SDK's: AWS_RETRY_MODE, the profile's retry_mode, else standard.",
						Validators:  []validator.String{stringvalidator.OneOf(awsclient.RetryModes...)},
					},
					"allowed_account_ids": schema.SetAttribute{
						Optional:    true,
						ElementType: types.StringType,
						Description: accountIDsConflict.doc("Refuse to work, before any change, unless the credentials belong to one of these AWS accounts (checked with sts:GetCallerIdentity when AWS is first used)."),
						Validators: []validator.Set{
							accountIDsConflict.set(),
							setvalidator.ValueStringsAre(accountIDCheck),
						},
					},
					"forbidden_account_ids": schema.SetAttribute{
						Optional:    true,
						ElementType: types.StringType,
						Description: accountIDsConflict.other("allowed_account_ids", "Refuse to work, before any change, when the credentials belong to one of these AWS accounts."),
						Validators: []validator.Set{
							setvalidator.ValueStringsAre(accountIDCheck),
						},
					},
				},
				Blocks: map[string]schema.Block{
					"assume_role": schema.SingleNestedBlock{
						Description: assumeRoleConflict.doc("Assume this IAM role (sts:AssumeRole) with the credentials found otherwise, and use the role's credentials for every call."),
						Attributes: map[string]schema.Attribute{
							"role_arn": schema.StringAttribute{
								Optional:    true,
								Description: assumeRoleRequired.doc("ARN of the role to assume."),
								Validators:  []validator.String{roleARNCheck},
							},
							"session_name": schema.StringAttribute{
								Optional:    true,
								Description: "Session name. Defaults to one the AWS SDK generates.",
							},
							"external_id": schema.StringAttribute{
								Optional:    true,
								Description: "External ID the role's trust policy requires.",
							},
							"duration": schema.StringAttribute{
								Optional:    true,
								Description: "How long the role's credentials last, e.g. `1h` (15m to 12h). Defaults to 15m; they are renewed as needed.",
								Validators:  []validator.String{roleDurationCheck},
							},
							"tags": schema.MapAttribute{
								Optional:    true,
								ElementType: types.StringType,
								Description: "Session tags.",
							},
							"policy": schema.StringAttribute{
								Optional:    true,
								Description: "An IAM policy JSON that further restricts the session.",
							},
						},
						Validators: []validator.Object{assumeRoleConflict.object(), assumeRoleRequired.object()},
					},
					"assume_role_with_web_identity": schema.SingleNestedBlock{
						Description: assumeRoleConflict.other("assume_role", "Assume this IAM role with a web identity token read from a file (sts:AssumeRoleWithWebIdentity), as IRSA does in a pod."),
						Attributes: map[string]schema.Attribute{
							"role_arn": schema.StringAttribute{
								Optional:    true,
								Description: webIdentityRequired.doc("ARN of the role to assume."),
								Validators:  []validator.String{roleARNCheck},
							},
							"web_identity_token_file": schema.StringAttribute{
								Optional:    true,
								Description: webIdentityRequired.doc("File holding the OIDC token, re-read at every renewal."),
							},
							"session_name": schema.StringAttribute{
								Optional:    true,
								Description: "Session name. Defaults to one the AWS SDK generates.",
							},
						},
						Validators: []validator.Object{webIdentityRequired.object()},
					},
					"endpoints": schema.SingleNestedBlock{
						Description: "Endpoint URL per service; each wins over `endpoint` for its service.",
						Attributes: map[string]schema.Attribute{
							"s3":  endpointAttribute("S3"),
							"iam": endpointAttribute("IAM"),
							"sts": endpointAttribute("STS"),
							"eks": endpointAttribute("EKS"),
							"kms": endpointAttribute("KMS"),
						},
					},
					"default_tags": schema.SingleNestedBlock{
						Description: "Tags added to every taggable resource of this provider (flinkstate_bucket, flinkstate_iam_role, flinkstate_pod_identity_association; not the replication role flinkstate_bucket_replication creates), as hashicorp/aws does. " +
							"A resource's own tags win over a default tag with the same key; the resource's tags_all shows the merged set.",
						Attributes: map[string]schema.Attribute{
							"tags": schema.MapAttribute{
								Optional:    true,
								ElementType: types.StringType,
								Description: "The default tags.",
								Validators:  []validator.Map{awsTagsCheck},
							},
						},
					},
				},
			},
			"kubernetes": schema.SingleNestedBlock{
				Description: "How to reach the cluster: a kubeconfig (config_path or config_paths), or host with token, exec or a client certificate; " +
					"unset values fall back to the KUBE_* variables hashicorp/kubernetes reads, then (unlike hashicorp/kubernetes) KUBECONFIG, then the pod's service account when running in a cluster.",
				Attributes: map[string]schema.Attribute{
					"config_path": schema.StringAttribute{
						Optional:    true,
						Description: configPathConflict.doc("Path to a kubeconfig file. Defaults to KUBE_CONFIG_PATH, else KUBECONFIG, when host is not set."),
						Validators:  []validator.String{configPathConflict.string()},
					},
					"config_paths": schema.ListAttribute{
						Optional:    true,
						ElementType: types.StringType,
						Description: configPathConflict.other("config_path", "Kubeconfig files merged in order, as KUBECONFIG does. Defaults to KUBE_CONFIG_PATHS when host is not set."),
					},
					"config_context": schema.StringAttribute{
						Optional:    true,
						Description: "Context of the kubeconfig to use. Defaults to KUBE_CTX, else its current context.",
					},
					"host": schema.StringAttribute{
						Optional:    true,
						Description: "API server URL, e.g. an EKS cluster's endpoint (may come from a resource in the same configuration). Defaults to KUBE_HOST.",
						Validators:  []validator.String{hostCheck},
					},
					"token": schema.StringAttribute{
						Optional:    true,
						Sensitive:   true,
						Description: execConflict.other("exec", "Bearer token. Defaults to KUBE_TOKEN."),
					},
					"cluster_ca_certificate": schema.StringAttribute{
						Optional:    true,
						Description: caConflict.doc("PEM-encoded CA certificate of the API server. Defaults to KUBE_CLUSTER_CA_CERT_DATA."),
						Validators:  []validator.String{caConflict.string()},
					},
					"client_certificate": schema.StringAttribute{
						Optional:    true,
						Sensitive:   true,
						Description: certRequiresKey.doc("PEM-encoded client certificate for TLS client authentication. Defaults to KUBE_CLIENT_CERT_DATA."),
						Validators:  []validator.String{certRequiresKey.string()},
					},
					"client_key": schema.StringAttribute{
						Optional:    true,
						Sensitive:   true,
						Description: keyRequiresCert.doc("PEM-encoded private key of client_certificate. Defaults to KUBE_CLIENT_KEY_DATA."),
						Validators:  []validator.String{keyRequiresCert.string()},
					},
					"proxy_url": schema.StringAttribute{
						Optional:    true,
						Description: "Proxy for requests to the API server (http, https or socks5 URL).",
						Validators:  []validator.String{proxyURLCheck},
					},
					"insecure": schema.BoolAttribute{
						Optional:    true,
						Description: caConflict.other("cluster_ca_certificate", "Skip verification of the API server's certificate. Only for test clusters. Defaults to KUBE_INSECURE."),
					},
				},
				Blocks: map[string]schema.Block{
					"exec": schema.SingleNestedBlock{
						Description: execConflict.doc("An exec credential plugin, e.g. `aws eks get-token --cluster-name NAME`."),
						Attributes: map[string]schema.Attribute{
							"api_version": schema.StringAttribute{
								Optional:    true,
								Description: execRequired.doc("client.authentication.k8s.io version the plugin speaks, e.g. client.authentication.k8s.io/v1beta1."),
								Validators: []validator.String{stringvalidator.OneOf(
									"client.authentication.k8s.io/v1beta1", "client.authentication.k8s.io/v1")},
							},
							"command": schema.StringAttribute{
								Optional:    true,
								Description: execRequired.doc("Command to run."),
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
						Validators: []validator.Object{execConflict.object(), execRequired.object()},
					},
				},
			},
		},
	}
	markdownDescriptions(&resp.Schema)
}

// The provider block's rules between attributes, each said in the
// descriptions of both sides.
var (
	accountIDsConflict = conflictsWith("forbidden_account_ids")
	assumeRoleConflict = conflictsWith("assume_role_with_web_identity")
	configPathConflict = conflictsWith("config_paths")
	caConflict         = conflictsWith("insecure")
	execConflict       = conflictsWith("token")
	certRequiresKey    = requires("client_key")
	keyRequiresCert    = requires("client_certificate")

	assumeRoleRequired  = requiredInBlock("assume_role", "role_arn")
	webIdentityRequired = requiredInBlock("assume_role_with_web_identity", "role_arn", "web_identity_token_file")
	execRequired        = requiredInBlock("exec", "api_version", "command")
)

func (p *flinkstateProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var cfg providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	meta := newMeta(p.version)
	resp.Diagnostics.Append(meta.setAWS(ctx, cfg.AWS)...)
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
		newBucketReplicationResource,
		newServiceAccountResource,
		newStateStoreResource,
		newIAMRoleResource,
		newPodIdentityAssociationResource,
		newSnapshotResource,
		newDeploymentResource,
		newBlueGreenResource,
	}
}

func (p *flinkstateProvider) DataSources(_ context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		newPolicyDocumentDataSource,
		newLatestCheckpointDataSource,
		newLatestSavepointDataSource,
		newRestorableSnapshotDataSource,
		newOrphanedStateFilesDataSource,
		newFlinkConfigurationDataSource,
	}
}

func endpointAttribute(service string) schema.StringAttribute {
	return schema.StringAttribute{
		Optional:    true,
		Description: "Endpoint URL of " + service + ".",
		Validators:  []validator.String{endpointCheck},
	}
}
