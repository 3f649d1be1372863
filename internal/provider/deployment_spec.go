package provider

import (
	"context"
	"encoding/json"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
)

// The one mapping between deploymentModel and flinkdeploy.Spec. Adding a
// spec field means: the model, the schema, the Spec (with its entry in
// flinkdeploy.SpecFields: whether a change restarts the job), and a line in
// each function here. A flinkConfiguration key set by one attribute is a
// flinkconf.Settings entry instead: its attribute and conversion come from
// the table (settings.go). A spec.job field passed through as it is is a
// flinkdeploy.JobFields entry and a jobModel field (jobfields.go).

// spec maps the model to the typed spec; ok is false while anything it needs
// is unknown. The flinkConfiguration and the pod template come from
// effective_flink_configuration and effective_pod_template: derived at plan
// and apply, what the live object holds after a read. unwritten: the
// provider defaults an imported object lacked (deploymentOp.Unwritten). The
// live object's shape (LiveConfiguration) is the caller's, which renders.
func (m *deploymentModel) spec(ctx context.Context, unwritten []string, diags *diag.Diagnostics) (flinkdeploy.Spec, bool) {
	if anyUnknown(m.EffectiveConfig, m.EffectivePod) { // a map's elements too
		return flinkdeploy.Spec{}, false
	}
	s, ok := m.specFields(ctx, diags)
	if !ok {
		return s, false
	}
	s.FlinkConfiguration = m.written(ctx, unwritten, diags)
	if pod := m.EffectivePod.ValueString(); pod != "" {
		if err := json.Unmarshal([]byte(pod), &s.PodTemplate); err != nil {
			addProblem(diags, "Rendering", "the effective pod template", err.Error(), "Check pod_template.")
			return s, false
		}
	}
	return s, true
}

// specFields maps the model to the spec's fields the provider writes as
// they are (all but flinkConfiguration and podTemplate); ok is false while
// one is unknown.
func (m *deploymentModel) specFields(ctx context.Context, diags *diag.Diagnostics) (flinkdeploy.Spec, bool) {
	if anyUnknown(m.Image, m.FlinkVersion, m.Mode, m.ServiceAccount, m.RedeployNonce) {
		return flinkdeploy.Spec{}, false
	}
	s := flinkdeploy.Spec{
		Image:          m.Image.ValueString(),
		FlinkVersion:   m.FlinkVersion.ValueString(),
		Mode:           m.Mode.ValueString(),
		ServiceAccount: m.ServiceAccount.ValueString(),
	}
	if jm := m.JobManager; jm != nil {
		if anyUnknown(jm.Memory, jm.CPU, jm.Replicas) {
			return s, false
		}
		s.JobManager = &flinkdeploy.JobManager{Memory: jm.Memory.ValueString(), CPU: jm.CPU.ValueFloat64(), Replicas: jm.Replicas.ValueInt64Pointer()}
	}
	if tm := m.TaskManager; tm != nil {
		if anyUnknown(tm.Memory, tm.CPU) {
			return s, false
		}
		s.TaskManager = &flinkdeploy.TaskManager{Memory: tm.Memory.ValueString(), CPU: tm.CPU.ValueFloat64()}
	}
	if j := m.Job; j != nil {
		if anyUnknown(j.JarURI, j.UpgradeMode, j.State, j.InitialSavepointPath, j.ClaimMode) || j.jobFieldsUnknown() {
			return s, false
		}
		s.Job = &flinkdeploy.Job{
			JarURI:               j.JarURI.ValueString(),
			UpgradeMode:          j.UpgradeMode.ValueString(),
			State:                j.State.ValueString(),
			InitialSavepointPath: j.InitialSavepointPath.ValueString(),
			// Set by the provider, not the configuration (planRestore).
			SavepointRedeployNonce: m.RedeployNonce.ValueInt64Pointer(),
		}
		if !j.jobFieldsTo(ctx, s.Job, diags) {
			return s, false
		}
	}
	return s, true
}

// fromSpec copies a live object's spec into the model: the domain's
// reading of it (flinkdeploy.ReadLive, which decides what is read and what
// an imported object stands for) flattened into the attributes, its
// problems turned into diagnostics. Attributes it does not read keep their
// state. unwritten: the provider defaults an imported object lacked.
func (m *deploymentModel) fromSpec(ctx context.Context, live *unstructured.Unstructured, imported bool, unwritten []string, diags *diag.Diagnostics) {
	o := flinkdeploy.ReadLive(live, m.recorded(ctx, diags), imported, unwritten)
	for _, p := range o.Problems {
		if p.Error {
			addProblem(diags, "Importing", o.What(), p.Detail, p.Advice)
		} else {
			diags.AddAttributeWarning(path.Root(p.Attr), p.Summary, p.Detail)
		}
	}
	if o.Failed() {
		return
	}
	s := o.Spec
	m.ID = types.StringValue(o.Namespace + "/" + o.Name)
	m.Image = types.StringValue(s.Image)
	m.FlinkVersion = types.StringValue(s.FlinkVersion)
	m.Mode = optionalString(s.Mode)
	m.ServiceAccount = optionalString(s.ServiceAccount)
	if jm := s.JobManager; jm != nil {
		m.JobManager = &jobManagerModel{Memory: types.StringValue(jm.Memory), CPU: types.Float64Value(jm.CPU), Replicas: types.Int64PointerValue(jm.Replicas)}
	}
	if tm := s.TaskManager; tm != nil {
		out := &taskMgrModel{Memory: types.StringValue(tm.Memory), CPU: types.Float64Value(tm.CPU), TaskSlots: types.Int64Null()}
		if m.TaskManager != nil {
			out.TaskSlots = m.TaskManager.TaskSlots
		}
		m.TaskManager = out
	}
	m.RedeployNonce = types.Int64Null()
	if j := s.Job; j != nil {
		out := &jobModel{
			JarURI:               types.StringValue(j.JarURI),
			UpgradeMode:          optionalString(j.UpgradeMode),
			State:                optionalString(j.State),
			InitialSavepointPath: optionalString(j.InitialSavepointPath),
			ClaimMode:            types.StringNull(),
		}
		if m.Job != nil {
			// claim_mode acts only through flinkConfiguration, compared there.
			out.ClaimMode = m.Job.ClaimMode
		}
		out.jobFieldsFrom(ctx, *j, m.Job, diags)
		m.Job = out
		m.RedeployNonce = types.Int64PointerValue(j.SavepointRedeployNonce)
	}
	m.EffectivePod = types.StringValue(o.EffectivePod)
	if imp := o.Import; imp != nil {
		m.fromImported(ctx, imp, diags)
	} else if o.Sensitive != nil {
		m.SensitiveConfig = mapFrom(ctx, o.Sensitive, diags)
	}
	// What the operator adds is not in the object: shown as the plan
	// shows it (flinkdeploy.Want.Shown).
	var d diag.Diagnostics
	if in, ok := m.input(ctx, unwritten, &d); ok && !d.HasError() {
		m.shown(ctx, o.Written, in, diags)
		return
	}
	m.EffectiveConfig = mapFrom(ctx, o.Written, diags)
}

// recorded is what the state holds of the object, for ReadLive.
func (m *deploymentModel) recorded(ctx context.Context, diags *diag.Diagnostics) flinkdeploy.Recorded {
	return flinkdeploy.Recorded{
		FlinkVersion: m.FlinkVersion.ValueString(),
		JobManager:   m.JobManager != nil,
		Replicas:     m.JobManager != nil && !m.JobManager.Replicas.IsNull(),
		TaskManager:  m.TaskManager != nil,
		Job:          m.Job != nil,
		Effective:    stringMap(ctx, m.EffectiveConfig, diags),
		Sensitive:    stringMap(ctx, m.SensitiveConfig, diags),
	}
}

// fromImported sets the attributes an imported object's configuration and
// pod template stand for.
func (m *deploymentModel) fromImported(ctx context.Context, imp *flinkdeploy.Imported, diags *diag.Diagnostics) {
	m.Identity = optionalString(imp.Identity)
	m.HighAvailability = types.BoolPointerValue(imp.HighAvailability)
	m.State = stateObject(imp.StoreID, imp.State, imp.Values, diags)
	if m.Job != nil {
		m.Job.ClaimMode = optionalString(imp.ClaimMode)
	}
	m.FlinkConfiguration, m.SensitiveConfig = types.MapNull(types.StringType), types.MapNull(types.StringType)
	if len(imp.Plain) > 0 {
		m.FlinkConfiguration = mapFrom(ctx, imp.Plain, diags)
	}
	if len(imp.Secret) > 0 {
		m.SensitiveConfig = mapFrom(ctx, imp.Secret, diags)
	}
	if imp.TaskSlots != nil && m.TaskManager != nil {
		m.TaskManager.TaskSlots = types.Int64Value(*imp.TaskSlots)
	}
	m.S3Plugin = optionalString(imp.S3Plugin)
	m.PodTemplate = types.StringPointerValue(imp.PodTemplate)
}
