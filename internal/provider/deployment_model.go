package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/deployop"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// deploymentModel is the data of flinkstate_deployment: its attributes, and
// nothing else (what one create or update carries is a deploymentOp).
type deploymentModel struct {
	deploymentSpecModel
	ID                  types.String    `tfsdk:"id"`
	WaitFor             types.String    `tfsdk:"wait_for"`
	JobID               types.String    `tfsdk:"job_id"`
	LifecycleState      types.String    `tfsdk:"lifecycle_state"`
	JobState            types.String    `tfsdk:"job_state"`
	EffectiveConfig     types.Map       `tfsdk:"effective_flink_configuration"`
	OperatorAddedConfig types.Map       `tfsdk:"operator_added_flink_configuration"`
	EffectivePod        types.String    `tfsdk:"effective_pod_template"`
	RedeployNonce       types.Int64     `tfsdk:"savepoint_redeploy_nonce"`
	SavepointFirst      *upgradeSPModel `tfsdk:"savepoint_before_upgrade"`
	FinalSavepoint      types.Bool      `tfsdk:"final_savepoint"`
	DrainOnDestroy      types.Bool      `tfsdk:"drain_on_destroy"`
	UpgradeSavepoint    types.String    `tfsdk:"upgrade_savepoint_path"`
	Timeouts            timeouts.Value  `tfsdk:"timeouts"`
}

// deploymentSpecModel is the FlinkDeployment spec's attributes, shared by
// flinkstate_deployment and flinkstate_blue_green_deployment (whose
// template is a FlinkDeployment spec): one declaration (the deployment's Schema, whose spec attributes
// the blue/green template takes).
type deploymentSpecModel struct {
	Namespace          types.String     `tfsdk:"namespace"`
	Name               types.String     `tfsdk:"name"`
	Image              types.String     `tfsdk:"image"`
	FlinkVersion       types.String     `tfsdk:"flink_version"`
	Mode               types.String     `tfsdk:"mode"`
	ServiceAccount     types.String     `tfsdk:"service_account"`
	Identity           types.String     `tfsdk:"identity"`
	S3Plugin           types.String     `tfsdk:"s3_plugin"`
	HighAvailability   types.Bool       `tfsdk:"high_availability"`
	FlinkConfiguration types.Map        `tfsdk:"flink_configuration"`
	SensitiveConfig    types.Map        `tfsdk:"sensitive_flink_configuration"`
	PodTemplate        types.String     `tfsdk:"pod_template"`
	JobManager         *jobManagerModel `tfsdk:"job_manager"`
	TaskManager        *taskMgrModel    `tfsdk:"task_manager"`
	Job                *jobModel        `tfsdk:"job"`
	State              types.Object     `tfsdk:"state"` // stateBlockAttributes
}

// deploymentOp is what one create or update carries besides its plan and
// prior state, from the moment Create or Update starts to the end of apply.
type deploymentOp struct {
	// Write: a create or not, the carried final savepoint (found at apply:
	// findCarried) and what the change restores from; apply adds the
	// object and the wait.
	deployop.Write
	// Unwritten are the provider defaults an imported object lacked
	// (flinkconf.Input.Unwritten, kept in private state); Live is the live
	// object an update writes over (its flinkConfiguration's shape is kept:
	// flinkdeploy.ShapeConfiguration).
	Unwritten []string
	Live      *unstructured.Unstructured
	// derived is what this operation expanded and derived (deriveWant),
	// once: render writes it without deriving again.
	derived *derivedWant
}

// derivedWant is a Want with what its Derive gave.
type derivedWant struct {
	w flinkdeploy.Want
	d flinkdeploy.Derived
}

// upgradeSPModel is the savepoint_before_upgrade block.
type upgradeSPModel struct {
	FormatType types.String `tfsdk:"format_type"`
	Timeout    types.String `tfsdk:"timeout"`
}

type jobManagerModel struct {
	Memory   types.String  `tfsdk:"memory"`
	CPU      types.Float64 `tfsdk:"cpu"`
	Replicas types.Int64   `tfsdk:"replicas"`
}

type taskMgrModel struct {
	Memory    types.String  `tfsdk:"memory"`
	CPU       types.Float64 `tfsdk:"cpu"`
	TaskSlots types.Int64   `tfsdk:"task_slots"`
}

// jobModel is the job block. The fields tagged with a
// flinkdeploy.JobFields attribute get their schema and conversion from the
// table, by that tag (jobfields.go); the others have logic of their own.
type jobModel struct {
	JarURI                types.String `tfsdk:"jar_uri"`
	EntryClass            types.String `tfsdk:"entry_class"`
	Args                  types.List   `tfsdk:"args"`
	Parallelism           types.Int64  `tfsdk:"parallelism"`
	UpgradeMode           types.String `tfsdk:"upgrade_mode"`
	State                 types.String `tfsdk:"state"`
	AllowNonRestoredState types.Bool   `tfsdk:"allow_non_restored_state"`
	InitialSavepointPath  types.String `tfsdk:"initial_savepoint_path"`
	ClaimMode             types.String `tfsdk:"claim_mode"`
}

// input converts the spec for flinkconf, with the provider defaults an
// imported object lacked (unwritten); ok is false while something it needs
// is unknown. Both resources' (a blue/green template's too).
func (m *deploymentSpecModel) input(ctx context.Context, unwritten []string, diags *diag.Diagnostics) (flinkconf.Input, bool) {
	if anyUnknown(m.FlinkVersion, m.Identity, m.S3Plugin, m.HighAvailability, m.FlinkConfiguration, m.Image, m.SensitiveConfig) || stateUnknown(m.State) ||
		(m.Job != nil && anyUnknown(m.Job.UpgradeMode, m.Job.JarURI, m.Job.ClaimMode, m.Job.Parallelism)) || (m.TaskManager != nil && m.TaskManager.TaskSlots.IsUnknown()) {
		return flinkconf.Input{}, false
	}
	in := flinkconf.Input{
		FlinkVersion: m.FlinkVersion.ValueString(),
		Identity:     m.Identity.ValueString(),
		S3Plugin:     m.S3Plugin.ValueString(),
		Image:        m.Image.ValueString(),
		Values:       map[string]string{},
		Extra:        stringMap(ctx, m.FlinkConfiguration, diags),
	}
	in.State = flinkState(m.State, in.Values, diags, path.Root("state"))
	for k, v := range stringMap(ctx, m.SensitiveConfig, diags) {
		if in.Extra == nil {
			in.Extra = map[string]string{}
		}
		in.Extra[k] = v
	}
	if len(unwritten) > 0 {
		in.Unwritten = map[string]bool{}
		for _, k := range unwritten {
			in.Unwritten[k] = true
		}
		if in.Unwritten[flinkconf.AbsentBackend] && newStateBlock(m.State).str("backend").IsNull() {
			in.State.Backend = "" // Flink's default, as the object had it
		}
	}
	if m.Job != nil {
		in.HasJob, in.Parallelism = true, m.Job.Parallelism.ValueInt64Pointer()
		in.UpgradeMode = m.Job.UpgradeMode.ValueString()
		// Unknown or null strings read "" (ValueString): no restore path,
		// no memory to check yet.
		in.JarURI, in.RestorePath = m.Job.JarURI.ValueString(), m.Job.InitialSavepointPath.ValueString()
		setValue(in.Values, flinkconf.AttrClaimMode, m.Job.ClaimMode)
	}
	in.HighAvailability = m.HighAvailability.ValueBoolPointer() // known here; nil: unset
	if m.TaskManager != nil {
		setValue(in.Values, flinkconf.AttrTaskSlots, m.TaskManager.TaskSlots)
		in.TaskManagerMemory = m.TaskManager.Memory.ValueString()
	}
	if m.JobManager != nil {
		in.JobManagerMemory = m.JobManager.Memory.ValueString()
	}
	return in, true
}

// expand is the one conversion of the model to the deployment it asks for
// (flinkdeploy.Want); ok is false while the configuration's inputs are
// unknown (input). unwritten: the provider defaults an imported object
// lacked.
func (m *deploymentModel) expand(ctx context.Context, unwritten []string, diags *diag.Diagnostics) (flinkdeploy.Want, bool) {
	in, ok := m.input(ctx, unwritten, diags)
	if !ok {
		return flinkdeploy.Want{}, false
	}
	w := flinkdeploy.Want{
		Namespace: m.Namespace.ValueString(), Name: m.Name.ValueString(), NameUnknown: m.Namespace.IsUnknown() || m.Name.IsUnknown(),
		Input: in, PodTemplate: m.PodTemplate.ValueString(), PodUnknown: m.PodTemplate.IsUnknown(),
		Sensitive: stringMap(ctx, m.SensitiveConfig, diags), Desired: m.shape(),
	}
	if s, ok := m.specFields(ctx, diags); ok {
		w.Spec = &s
	}
	return w, true
}

// flatten sets what d derived: effective_flink_configuration and
// operator_added_flink_configuration (unknown while the name is),
// effective_pod_template (unknown while pod_template is).
func (m *deploymentModel) flatten(ctx context.Context, w flinkdeploy.Want, d flinkdeploy.Derived, diags *diag.Diagnostics) {
	m.EffectiveConfig, m.OperatorAddedConfig = types.MapUnknown(types.StringType), types.MapUnknown(types.StringType)
	if d.Effective != nil {
		m.EffectiveConfig, m.OperatorAddedConfig = mapFrom(ctx, d.Effective, diags), mapFrom(ctx, d.Added, diags)
	}
	m.EffectivePod = types.StringUnknown()
	if !w.PodUnknown {
		m.EffectivePod = types.StringValue(d.PodJSON)
	}
}

// shown sets effective_flink_configuration and
// operator_added_flink_configuration to what the job runs with, given the
// configuration written (flinkdeploy.Want.Shown); unknown while the
// namespace or name is.
func (m *deploymentModel) shown(ctx context.Context, written map[string]string, in flinkconf.Input, diags *diag.Diagnostics) {
	if m.Namespace.IsUnknown() || m.Name.IsUnknown() {
		m.EffectiveConfig, m.OperatorAddedConfig = types.MapUnknown(types.StringType), types.MapUnknown(types.StringType)
		return
	}
	w := flinkdeploy.Want{Namespace: m.Namespace.ValueString(), Name: m.Name.ValueString(), Input: in, Sensitive: stringMap(ctx, m.SensitiveConfig, diags)}
	eff, added := w.Shown(written)
	m.EffectiveConfig, m.OperatorAddedConfig = mapFrom(ctx, eff, diags), mapFrom(ctx, added, diags)
}

// written is effective_flink_configuration without what the operator adds:
// the flinkConfiguration the provider wrote (flinkdeploy.WrittenConfig).
func (m *deploymentModel) written(ctx context.Context, unwritten []string, diags *diag.Diagnostics) map[string]string {
	var added map[string]string
	var d diag.Diagnostics
	if in, ok := m.input(ctx, unwritten, &d); ok && !d.HasError() {
		added = flinkconf.OperatorAdded(in, m.Namespace.ValueString(), m.Name.ValueString())
	}
	return flinkdeploy.WrittenConfig(stringMap(ctx, m.EffectiveConfig, diags), stringMap(ctx, m.SensitiveConfig, diags), added)
}

// deriveWant sets effective_flink_configuration and effective_pod_template
// from the inputs, as the plan did, and returns what it expanded and
// derived; false when they cannot be applied. The configuration is spelled
// as the plan spelled it (against the plan's written configuration): the
// apply writes exactly what the plan showed. Unknown at plan (inputs known
// only now): spelled as the live object has it.
func (m *deploymentModel) deriveWant(ctx context.Context, op *deploymentOp, diags *diag.Diagnostics) (flinkdeploy.Want, flinkdeploy.Derived, bool) {
	if op.derived != nil {
		// Derived earlier in this operation (Update, before its checks):
		// the model already holds the flattened values.
		return op.derived.w, op.derived.d, true
	}
	w, ok := m.expand(ctx, op.Unwritten, diags)
	if !ok {
		addProblem(diags, "Applying", "FlinkDeployment", "the deployment's configuration still holds unknown values at apply time",
			"Apply again once the values it depends on are known.")
		return w, flinkdeploy.Derived{}, false
	}
	var prior map[string]string
	if !m.EffectiveConfig.IsUnknown() && !m.EffectiveConfig.IsNull() {
		prior = m.written(ctx, op.Unwritten, diags)
	}
	d := w.Derive(prior, flinkdeploy.LiveConfiguration(op.Live))
	addFindings(diags, append(d.ConfigFindings, d.PodFindings...))
	if diags.HasError() {
		return w, d, false
	}
	if m.flatten(ctx, w, d, diags); diags.HasError() {
		return w, d, false
	}
	op.derived = &derivedWant{w, d}
	return w, d, true
}

// shape is the model as the operator's rules read it (flinkdeploy.Desired),
// without the spec; desired adds it. Unknown values read as unset, except
// mode's (ModeUnknown).
func (m *deploymentModel) shape() flinkdeploy.Desired {
	d := flinkdeploy.Desired{
		Mode:           m.Mode.ValueString(),
		ModeUnknown:    m.Mode.IsUnknown(),
		FlinkVersion:   m.FlinkVersion.ValueString(),
		FinalSavepoint: m.FinalSavepoint.ValueBool() || m.FinalSavepoint.IsNull(),
		SavepointFirst: m.SavepointFirst != nil,
		DrainOnDestroy: m.DrainOnDestroy.ValueBool(),
		WaitFor:        m.WaitFor.ValueString(),
	}
	if j := m.Job; j != nil {
		d.HasJob = true
		d.JobState, d.UpgradeMode, d.RestorePath = j.State.ValueString(), j.UpgradeMode.ValueString(), j.InitialSavepointPath.ValueString()
	}
	return d
}

// desired is shape with the spec the provider writes (nil while part of
// it is unknown); unwritten: the provider defaults an imported object
// lacked. A spec that cannot be converted without error is nil too.
func (m *deploymentModel) desired(ctx context.Context, unwritten []string) flinkdeploy.Desired {
	d := m.shape()
	var diags diag.Diagnostics
	if s, ok := m.spec(ctx, unwritten, &diags); ok && !diags.HasError() {
		d.Spec = &s
	}
	return d
}

func (m *deploymentModel) setStatus(st kube.DeploymentStatus) {
	m.JobID = types.StringValue(st.JobID)
	m.LifecycleState = types.StringValue(st.LifecycleState)
	m.JobState = types.StringValue(st.JobState)
}
