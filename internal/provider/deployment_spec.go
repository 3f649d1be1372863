package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
)

// The one mapping between deploymentModel and flinkdeploy.Spec. Adding a
// field means: the model, the schema, the Spec, and a line in each function
// here.

// spec maps the model to the typed spec; ok is false while anything it needs
// is unknown. The flinkConfiguration and the pod template come from
// effective_flink_configuration and effective_pod_template: derived at plan
// and apply, what the live object holds after a read.
func (m *deploymentModel) spec(ctx context.Context, diags *diag.Diagnostics) (flinkdeploy.Spec, bool) {
	if anyUnknown(m.Image, m.FlinkVersion, m.Mode, m.ServiceAccount, m.EffectiveConfig, m.EffectivePod, m.RedeployNonce) {
		return flinkdeploy.Spec{}, false
	}
	s := flinkdeploy.Spec{
		Image:              m.Image.ValueString(),
		FlinkVersion:       m.FlinkVersion.ValueString(),
		Mode:               m.Mode.ValueString(),
		ServiceAccount:     m.ServiceAccount.ValueString(),
		FlinkConfiguration: m.writtenConfig(ctx, diags),
	}
	for _, e := range m.EffectiveConfig.Elements() {
		if e.IsUnknown() {
			return s, false
		}
	}
	if pod := m.EffectivePod.ValueString(); pod != "" {
		if err := json.Unmarshal([]byte(pod), &s.PodTemplate); err != nil {
			addProblem(diags, "Rendering", "the effective pod template", err.Error(), "Check pod_template.")
			return s, false
		}
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
		if anyUnknown(j.JarURI, j.EntryClass, j.Args, j.Parallelism, j.UpgradeMode, j.State, j.AllowNonRestoredState, j.InitialSavepointPath, j.ClaimMode) {
			return s, false
		}
		args, ok := knownStrings(ctx, j.Args, diags)
		if !ok {
			return s, false
		}
		s.Job = &flinkdeploy.Job{
			JarURI:                j.JarURI.ValueString(),
			EntryClass:            j.EntryClass.ValueString(),
			Args:                  args,
			Parallelism:           j.Parallelism.ValueInt64Pointer(),
			UpgradeMode:           j.UpgradeMode.ValueString(),
			State:                 j.State.ValueString(),
			AllowNonRestoredState: j.AllowNonRestoredState.ValueBoolPointer(),
			InitialSavepointPath:  j.InitialSavepointPath.ValueString(),
			// Set by the provider, not the configuration (planRestore).
			SavepointRedeployNonce: m.RedeployNonce.ValueInt64Pointer(),
		}
	}
	return s, true
}

// fromSpec copies a live object's spec into the model: the fields the
// provider writes, and of flinkConfiguration only the keys it wrote (or,
// after an import, all of them, turned back into the inputs they stand for).
// Status, defaults and fields of other managers are never read, so they never
// show as a diff. Blocks the configuration leaves out stay out unless imported.
func (m *deploymentModel) fromSpec(ctx context.Context, live *unstructured.Unstructured, imported bool, diags *diag.Diagnostics) {
	s := flinkdeploy.Parse(live, m.FlinkVersion.ValueString())
	if imported && len(s.UnreadableConfig) > 0 {
		addProblem(diags, "Importing", "FlinkDeployment "+live.GetNamespace()+"/"+live.GetName(),
			fmt.Sprintf("spec.flinkConfiguration holds values a flat Flink configuration cannot hold for %s (a list or null): the "+
				"provider writes flinkConfiguration as key: string pairs and would drop them", strings.Join(s.UnreadableConfig, ", ")),
			"Write each as the string Flink parses (a list as \"a;b\"), e.g. with kubectl edit, then import again.")
		return
	}
	m.ID = types.StringValue(live.GetNamespace() + "/" + live.GetName())
	m.Image = types.StringValue(s.Image)
	m.FlinkVersion = types.StringValue(s.FlinkVersion)
	m.Mode = types.StringValue(s.Mode)
	m.ServiceAccount = optionalString(s.ServiceAccount)

	if jm := s.JobManager; jm != nil && (m.JobManager != nil || imported) {
		out := &jobManagerModel{Memory: types.StringValue(jm.Memory), CPU: types.Float64Value(jm.CPU), Replicas: types.Int64Null()}
		// The operator may default replicas: read them only when configured.
		if jm.Replicas != nil && (m.JobManager == nil || !m.JobManager.Replicas.IsNull()) {
			out.Replicas = types.Int64Value(*jm.Replicas)
		}
		m.JobManager = out
	}
	if tm := s.TaskManager; tm != nil && (m.TaskManager != nil || imported) {
		out := &taskMgrModel{Memory: types.StringValue(tm.Memory), CPU: types.Float64Value(tm.CPU), TaskSlots: types.Int64Null()}
		if m.TaskManager != nil {
			out.TaskSlots = m.TaskManager.TaskSlots
		}
		m.TaskManager = out
	}
	m.RedeployNonce = types.Int64Null()
	if j := s.Job; j != nil && (m.Job != nil || imported) {
		out := &jobModel{
			JarURI:                types.StringValue(j.JarURI),
			EntryClass:            optionalString(j.EntryClass),
			UpgradeMode:           optionalString(j.UpgradeMode),
			State:                 optionalString(j.State),
			InitialSavepointPath:  optionalString(j.InitialSavepointPath),
			Parallelism:           types.Int64PointerValue(j.Parallelism),
			AllowNonRestoredState: types.BoolPointerValue(j.AllowNonRestoredState),
			Args:                  types.ListNull(types.StringType),
			ClaimMode:             types.StringNull(),
		}
		if m.Job != nil {
			// claim_mode acts only through flinkConfiguration, compared there.
			out.ClaimMode = m.Job.ClaimMode
		}
		if len(j.Args) > 0 {
			l, d := types.ListValueFrom(ctx, types.StringType, j.Args)
			diags.Append(d...)
			out.Args = l
		} else if m.Job != nil && !m.Job.Args.IsNull() && len(m.Job.Args.Elements()) == 0 {
			out.Args = m.Job.Args
		}
		m.Job = out
		m.RedeployNonce = types.Int64PointerValue(j.SavepointRedeployNonce)
	}

	if s.PodTemplate != nil {
		m.EffectivePod = types.StringValue(flinkdeploy.CanonicalJSON(s.PodTemplate))
	} else {
		m.EffectivePod = types.StringValue("")
	}

	effective := map[string]string{}
	if imported {
		effective = s.FlinkConfiguration
		m.fromConfiguration(ctx, s.FlinkConfiguration, diags)
	} else {
		for k := range m.EffectiveConfig.Elements() {
			if v, ok := s.FlinkConfiguration[k]; ok {
				effective[k] = v
			}
		}
	}
	// What the operator adds is not in the object: shown as the plan
	// shows it (effectiveConfig).
	var d diag.Diagnostics
	if in, ok := m.input(ctx, &d); ok && !d.HasError() {
		m.EffectiveConfig = m.effectiveConfig(ctx, effective, in, diags)
		return
	}
	m.EffectiveConfig = mapFrom(ctx, effective, diags)
}

// fromConfiguration sets identity, high_availability, task slots, the state
// block and the extra keys from an imported object's configuration.
func (m *deploymentModel) fromConfiguration(ctx context.Context, cfg map[string]string, diags *diag.Diagnostics) {
	upgradeMode := ""
	if m.Job != nil {
		upgradeMode = m.Job.UpgradeMode.ValueString()
	}
	set := flinkdeploy.ParseConfiguration(cfg, upgradeMode)
	m.Identity = optionalString(set.Identity)
	m.HighAvailability = types.BoolPointerValue(set.HighAvailability)
	st := set.State
	m.State = &stateBlockModel{
		StoreID:               optionalString(set.StoreID),
		CheckpointDir:         optionalString(st.CheckpointDir),
		SavepointDir:          optionalString(st.SavepointDir),
		HADir:                 optionalString(st.HADir),
		Backend:               optionalString(st.Backend),
		CheckpointInterval:    optionalString(st.CheckpointInterval),
		MinPause:              optionalString(st.MinPause),
		Timeout:               optionalString(st.Timeout),
		Mode:                  optionalString(st.Mode),
		ExternalizedRetention: optionalString(st.ExternalizedRetention),
		Incremental:           types.BoolPointerValue(st.Incremental),
		NumRetained:           types.Int64PointerValue(st.NumRetained),
		LocalDir:              optionalString(st.LocalDir),
	}
	if m.Job != nil {
		m.Job.ClaimMode = optionalString(set.ClaimMode)
	}
	if len(set.Extra) > 0 {
		m.FlinkConfiguration = mapFrom(ctx, set.Extra, diags)
	} else {
		m.FlinkConfiguration = types.MapNull(types.StringType)
	}
	if set.TaskSlots != nil && m.TaskManager != nil {
		m.TaskManager.TaskSlots = types.Int64Value(*set.TaskSlots)
	}
}
