package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"sigs.k8s.io/yaml"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
)

type flinkConfigurationDataSource struct{}

var _ datasource.DataSourceWithConfigValidators = (*flinkConfigurationDataSource)(nil)

func newFlinkConfigurationDataSource() datasource.DataSource { return &flinkConfigurationDataSource{} }

type flinkConfigurationModel struct {
	FlinkVersion        types.String `tfsdk:"flink_version"`
	Identity            types.String `tfsdk:"identity"`
	UpgradeMode         types.String `tfsdk:"upgrade_mode"`
	HighAvailability    types.Bool   `tfsdk:"high_availability"`
	TaskSlots           types.Int64  `tfsdk:"task_slots"`
	FlinkConfiguration  types.Map    `tfsdk:"flink_configuration"`
	PodTemplate         types.String `tfsdk:"pod_template"`
	State               types.Object `tfsdk:"state"` // stateDataAttributes
	Configuration       types.Map    `tfsdk:"configuration"`
	OperatorVersion     types.String `tfsdk:"operator_flink_version"`
	S3PluginJar         types.String `tfsdk:"s3_plugin_jar"`
	CredentialsProvider types.String `tfsdk:"credentials_provider"`
	PodTemplateYAML     types.String `tfsdk:"pod_template_yaml"`
}

func (d *flinkConfigurationDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_flink_configuration"
}

func (d *flinkConfigurationDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "The flinkConfiguration, pod template additions, operator flinkVersion and S3 plugin jar that flinkstate_deployment " +
			"would write, for users who deploy with Helm or kubernetes_manifest. Computed locally with the same code; no API call. " +
			"The plan-time checks are the resource's checks of these inputs (version, identity, state, upgrade_mode, high_availability, " +
			"task_slots, flink_configuration, pod_template). The resource's checks of inputs this data source does not have are not made: " +
			"image against flink_version, the job block (jar_uri, parallelism, claim_mode, the restore path and its completeness), and " +
			"the checks across resources (a ServiceAccount given both IRSA and Pod Identity).",
		Attributes: map[string]schema.Attribute{
			"flink_version": schema.StringAttribute{Required: true, Description: "Full Flink version, e.g. 2.2.1.",
				Validators: []validator.String{flinkVersionCheck}},
			"identity": schema.StringAttribute{Optional: true, Description: "`irsa` or `pod_identity`: the credentials class, as " +
				"flinkstate_deployment writes it. Unset, the configuration has no fs.s3a.aws.credentials.provider (the job gets " +
				"credentials another way, e.g. Hadoop S3A's default chain) and credentials_provider is null.",
				Validators: []validator.String{stringvalidator.OneOf(flinkconf.Identities...)}},
			"upgrade_mode": schema.StringAttribute{Optional: true, Description: "`last-state`, `savepoint` or `stateless`.",
				Validators: []validator.String{stringvalidator.OneOf(flinkconf.UpgradeModes...)}},
			"high_availability": schema.BoolAttribute{Optional: true, Description: "Kubernetes HA; default on with last-state."},
			"task_slots":        settingDataAttribute(setting(flinkconf.AttrTaskSlots)),
			"flink_configuration": schema.MapAttribute{Optional: true, ElementType: types.StringType, Description: "Extra keys (not the ones the provider manages, under any alias; no static AWS credentials; no empty or white-space-only key). A state bucket whose name has dots needs `fs.s3a.path.style.access = \"true\"` here.",
				Validators: []validator.Map{flinkConfigurationCheck}},
			"pod_template": schema.StringAttribute{Optional: true, Description: "Your pod template YAML, to merge the additions into.",
				Validators: []validator.String{podTemplateCheck}},
			"configuration":          schema.MapAttribute{Computed: true, ElementType: types.StringType, Description: "The flinkConfiguration map."},
			"operator_flink_version": schema.StringAttribute{Computed: true, Description: "spec.flinkVersion, e.g. v2_2."},
			"s3_plugin_jar":          schema.StringAttribute{Computed: true, Description: "Value for ENABLE_BUILT_IN_PLUGINS, e.g. flink-s3-fs-hadoop-2.2.1.jar."},
			"credentials_provider":   schema.StringAttribute{Computed: true, Description: "fs.s3a.aws.credentials.provider for the identity (null without one)."},
			"pod_template_yaml":      schema.StringAttribute{Computed: true, Description: "spec.podTemplate with the provider's additions, as YAML."},
		},
		Blocks: map[string]schema.Block{
			"state": schema.SingleNestedBlock{
				Description: "Where and how the job keeps state (as in flinkstate_deployment).",
				Attributes:  stateDataAttributes(),
			},
		},
	}
	markdownDescriptions(&resp.Schema)
}

func (d *flinkConfigurationDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m flinkConfigurationModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	in := m.input(ctx, &resp.Diagnostics)
	cfg, fs := flinkconf.Derive(in)
	pod, pfs := flinkconf.PodTemplate(m.PodTemplate.ValueString(), in)
	addFindings(&resp.Diagnostics, append(fs, pfs...))
	if resp.Diagnostics.HasError() {
		return
	}
	v, _ := flinkconf.ParseVersion(in.FlinkVersion)
	podYAML, err := yaml.Marshal(pod)
	if err != nil {
		addProblem(&resp.Diagnostics, "Encoding", "the pod template", err.Error(), "")
		return
	}
	m.Configuration = mapFrom(ctx, cfg, &resp.Diagnostics)
	m.OperatorVersion = types.StringValue(v.OperatorEnum())
	m.S3PluginJar = types.StringValue(v.S3PluginJar())
	m.CredentialsProvider = optionalString(cfg[flinkconf.CredentialsProviderKey])
	m.PodTemplateYAML = types.StringValue(string(podYAML))
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// ConfigValidators: the deployment's rules, at validate time (one rule, one place).
func (d *flinkConfigurationDataSource) ConfigValidators(context.Context) []datasource.ConfigValidator {
	return []datasource.ConfigValidator{flinkConfigurationChecks{}}
}

// input converts the model for flinkconf.
func (m *flinkConfigurationModel) input(ctx context.Context, diags *diag.Diagnostics) flinkconf.Input {
	in := flinkconf.Input{
		FlinkVersion: m.FlinkVersion.ValueString(),
		Identity:     m.Identity.ValueString(),
		UpgradeMode:  m.UpgradeMode.ValueString(),
		Values:       map[string]string{},
		Extra:        stringMap(ctx, m.FlinkConfiguration, diags),
	}
	in.State = flinkState(m.State, in.Values, diags, path.Root("state"))
	if !m.HighAvailability.IsNull() {
		v := m.HighAvailability.ValueBool()
		in.HighAvailability = &v
	}
	setValue(in.Values, flinkconf.AttrTaskSlots, m.TaskSlots)
	return in
}

// flinkConfigurationChecks is deploymentChecks for the data source.
type flinkConfigurationChecks struct{}

func (flinkConfigurationChecks) Description(context.Context) string {
	return "the combination of attributes can run (flinkconf's checks)"
}

func (v flinkConfigurationChecks) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (flinkConfigurationChecks) ValidateDataSource(ctx context.Context, req datasource.ValidateConfigRequest, resp *datasource.ValidateConfigResponse) {
	var m flinkConfigurationModel
	if d := req.Config.Get(ctx, &m); d.HasError() {
		return
	}
	if anyUnknown(m.FlinkVersion, m.Identity, m.UpgradeMode, m.HighAvailability, m.TaskSlots, m.FlinkConfiguration, m.PodTemplate) || stateUnknown(m.State) {
		return
	}
	var diags diag.Diagnostics
	in := m.input(ctx, &diags)
	if diags.HasError() {
		return
	}
	_, fs := flinkconf.Derive(in)
	_, pfs := flinkconf.PodTemplate(m.PodTemplate.ValueString(), in)
	addFindings(&resp.Diagnostics, errorsOnly(append(fs, pfs...)))
}
