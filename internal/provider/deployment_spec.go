package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
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
	if anyUnknown(m.Image, m.FlinkVersion, m.Mode, m.ServiceAccount, m.EffectiveConfig, m.EffectivePod, m.RedeployNonce) {
		return flinkdeploy.Spec{}, false
	}
	s := flinkdeploy.Spec{
		Image:              m.Image.ValueString(),
		FlinkVersion:       m.FlinkVersion.ValueString(),
		Mode:               m.Mode.ValueString(),
		ServiceAccount:     m.ServiceAccount.ValueString(),
		FlinkConfiguration: m.writtenConfig(ctx, unwritten, diags),
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

// fromSpec copies a live object's spec into the model: the fields the
// provider writes, and of flinkConfiguration only the keys it wrote (or,
// after an import, all of them, turned back into the inputs they stand for).
// Status, defaults and fields of other managers are never read, so they never
// show as a diff. Blocks the configuration leaves out stay out unless imported.
// unwritten: the provider defaults an imported object lacked.
func (m *deploymentModel) fromSpec(ctx context.Context, live *unstructured.Unstructured, imported bool, unwritten []string, diags *diag.Diagnostics) {
	s := flinkdeploy.Parse(live, m.FlinkVersion.ValueString())
	what := "FlinkDeployment " + live.GetNamespace() + "/" + live.GetName()
	if imported && len(s.UnreadableConfig) > 0 {
		addProblem(diags, "Importing", what,
			fmt.Sprintf("spec.flinkConfiguration holds values a flat Flink configuration cannot hold for %s (null, or a list of maps): the "+
				"provider writes flinkConfiguration as key: string pairs and would drop them", strings.Join(s.UnreadableConfig, ", ")),
			"Write each as the string Flink parses (a list as \"a;b\"), e.g. with kubectl edit, then import again.")
		return
	}
	if imported {
		v, ok := importFlinkVersion(live, s.Image, what, diags)
		if !ok {
			return
		}
		s.FlinkVersion = v
	}
	m.ID = types.StringValue(live.GetNamespace() + "/" + live.GetName())
	m.Image = types.StringValue(s.Image)
	m.FlinkVersion = types.StringValue(s.FlinkVersion)
	m.Mode = optionalString(s.Mode)
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

	if s.PodTemplate != nil {
		m.EffectivePod = types.StringValue(flinkdeploy.CanonicalJSON(s.PodTemplate))
	} else {
		m.EffectivePod = types.StringValue("")
	}

	var effective map[string]string
	if imported {
		// The whole pod template: the provider writes spec.podTemplate as
		// one value, and the API server replaces its lists whole (the CRD
		// declares no list keys), so a part left out would be deleted.
		effective = s.FlinkConfiguration
		if !m.fromConfiguration(ctx, s.FlinkConfiguration, what, diags) {
			return
		}
		m.S3Plugin = optionalString(flinkdeploy.ImportS3Plugin(live, s.FlinkVersion))
		if m.S3Plugin.ValueString() == flinkconf.S3PluginImage {
			diags.AddAttributeWarning(path.Root("s3_plugin"), "The object does not enable the S3 plugin",
				what+" has no "+flinkconf.PluginsEnv+" naming the S3 plugin on "+flinkconf.MainContainer+": its image brings "+
					"the plugin. s3_plugin was imported as \"image\", and while it stays so the provider writes no variable, so "+
					"adopting the job changes nothing. Removing it (or s3_plugin = \"provider\") adds the variable, a pod template "+
					"change the operator applies as an upgrade (a restart with the job's upgrade mode); the plan says so.")
		}
		m.PodTemplate = importedPodTemplate(ctx, m, unwritten, s.PodTemplate)
		if !m.checkCarriedOver(ctx, s.FlinkConfiguration, unwritten, what, diags) {
			return
		}
	} else {
		effective = m.readConfiguration(ctx, s.FlinkConfiguration, diags)
	}
	// What the operator adds is not in the object: shown as the plan
	// shows it (effectiveConfig).
	var d diag.Diagnostics
	if in, ok := m.input(ctx, unwritten, &d); ok && !d.HasError() {
		m.EffectiveConfig = m.effectiveConfig(ctx, effective, in, diags)
		return
	}
	m.EffectiveConfig = mapFrom(ctx, effective, diags)
}

// readConfiguration reads a managed object's flinkConfiguration (live)
// back: the sensitive values as the object has them, and of the keys the
// state recorded (effective_flink_configuration) those the object holds,
// which it returns.
func (m *deploymentModel) readConfiguration(ctx context.Context, live map[string]string, diags *diag.Diagnostics) map[string]string {
	effective := map[string]string{}
	prior := stringMap(ctx, m.EffectiveConfig, diags)
	sens := stringMap(ctx, m.SensitiveConfig, diags)
	changed := false
	for k, want := range sens {
		// A secret changed outside Terraform shows as a change of the
		// sensitive value (effectiveConfig masks it either way).
		if v, _, ok := flinkconf.Lookup(live, k); ok && v != want {
			sens[k], changed = v, true
		}
	}
	if changed {
		m.SensitiveConfig = mapFrom(ctx, sens, diags)
	}
	for k, was := range prior {
		// Under the key or a deprecated one; a value Flink reads the
		// same as the recorded one is no drift (flinkconf.Equivalent).
		if v, _, ok := flinkconf.Lookup(live, k); ok {
			if flinkconf.Equivalent(k, v, was) {
				v = was
			}
			effective[k] = v
		}
	}
	return effective
}

// importFlinkVersion is flink_version of an imported object
// (flinkdeploy.ImportVersion), with a warning when its patch is assumed;
// false (an error) for a version the provider does not support.
func importFlinkVersion(live *unstructured.Unstructured, image, what string, diags *diag.Diagnostics) (string, bool) {
	v, guessed, err := flinkdeploy.ImportVersion(live)
	if err != nil {
		addProblem(diags, "Importing", what, err.Error(), "Upgrade the job to a supported Flink version before importing it.")
		return "", false
	}
	if guessed {
		diags.AddAttributeWarning(path.Root("flink_version"), "Flink patch version assumed",
			fmt.Sprintf("%s says flinkVersion %s and image %q, neither of which names the Flink patch version; flink_version "+
				"was imported as %s, the newest release of that minor the provider knows. The patch names the S3 plugin jar the "+
				"provider enables (flink-s3-fs-hadoop-<version>.jar, in the image's /opt/flink/opt): set flink_version to the "+
				"image's version before the first apply.", what, liveFlinkVersion(live), image, v))
	}
	return v, true
}

// fromConfiguration sets identity, high_availability, task slots, the state
// block and the extra keys from an imported object's configuration; false
// (an error) when the object holds settings the provider cannot manage.
func (m *deploymentModel) fromConfiguration(ctx context.Context, cfg map[string]string, what string, diags *diag.Diagnostics) bool {
	upgradeMode := ""
	if m.Job != nil {
		upgradeMode = m.Job.UpgradeMode.ValueString()
	}
	set := flinkdeploy.ParseConfiguration(cfg, upgradeMode)
	if len(set.Unrepresentable) > 0 {
		addProblem(diags, "Importing", what, "spec.flinkConfiguration: "+strings.Join(set.Unrepresentable, "; "),
			"Change these settings on the object (or keep managing it with the tool that wrote it); nothing was imported.")
		return false
	}
	if set.Identity == "" {
		diags.AddAttributeWarning(path.Root("identity"), "No S3 credentials class on the object",
			what+" sets no fs.s3a.aws.credentials.provider: its pods get AWS credentials another way (a class configured "+
				"outside the object, or Hadoop S3A's default chain: environment variables, container credentials such as EKS Pod "+
				"Identity's, the node's instance role). identity was imported unset, and while it stays unset the provider "+
				"writes no credentials class, so adopting the job changes nothing. Setting identity (\"irsa\" or "+
				"\"pod_identity\") later writes the class, a spec change the operator applies as an upgrade (a restart with "+
				"the job's upgrade mode); the plan says so.")
	}
	m.Identity = optionalString(set.Identity)
	m.HighAvailability = types.BoolPointerValue(set.HighAvailability)
	m.State = stateObject(set.StoreID, set.State, set.Values, diags)
	if m.Job != nil {
		m.Job.ClaimMode = optionalString(set.Values[flinkconf.AttrClaimMode])
	}
	// Secrets (GlobalConfiguration.isSensitive) go to the sensitive map.
	plain, secret := map[string]string{}, map[string]string{}
	for k, v := range set.Extra {
		if flinkconf.IsSensitiveKey(k) {
			secret[k] = v
		} else {
			plain[k] = v
		}
	}
	m.FlinkConfiguration, m.SensitiveConfig = types.MapNull(types.StringType), types.MapNull(types.StringType)
	if len(plain) > 0 {
		m.FlinkConfiguration = mapFrom(ctx, plain, diags)
	}
	if len(secret) > 0 {
		m.SensitiveConfig = mapFrom(ctx, secret, diags)
		keys := make([]string, 0, len(secret))
		for k := range secret {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		diags.AddAttributeWarning(path.Root("sensitive_flink_configuration"), "Secrets imported as sensitive",
			what+" holds values Flink treats as secrets ("+strings.Join(keys, ", ")+"): they were imported into "+
				"sensitive_flink_configuration, which plans never show. Generated configuration writes it as null: set it "+
				"(e.g. from a variable marked sensitive) before applying, or the apply removes these keys.")
	}
	if n, err := strconv.ParseInt(set.Values[flinkconf.AttrTaskSlots], 10, 64); err == nil && m.TaskManager != nil {
		m.TaskManager.TaskSlots = types.Int64Value(n)
	}
	return true
}

// importedPodTemplate is pod_template for an imported object: its pod
// template without what the provider adds itself (flinkconf.StripAdditions),
// when adding it back gives the same template; else the whole template.
func importedPodTemplate(ctx context.Context, m *deploymentModel, unwritten []string, live map[string]any) types.String {
	if live == nil {
		return types.StringNull()
	}
	whole := flinkdeploy.CanonicalJSON(live)
	var d diag.Diagnostics
	in, ok := m.input(ctx, unwritten, &d)
	if !ok || d.HasError() {
		return types.StringValue(whole)
	}
	stripped := flinkconf.StripAdditions(live, in)
	user := ""
	if stripped != nil {
		user = flinkdeploy.CanonicalJSON(stripped)
	}
	if merged, fs := flinkconf.PodTemplate(user, in); len(fs) == 0 && merged != nil && flinkdeploy.CanonicalJSON(merged) == whole {
		if user == "" {
			return types.StringNull()
		}
		return types.StringValue(user)
	}
	return types.StringValue(whole)
}

func liveFlinkVersion(live *unstructured.Unstructured) string {
	v, _, _ := unstructured.NestedString(live.Object, "spec", "flinkVersion")
	return v
}

// checkCarriedOver is the import's round trip: every managed key of the
// object (under any name Flink reads) must come back from the imported
// attributes as the object has it (flinkconf.Derive, spelled as the object
// spells it: flinkconf.Respell). A key that would be removed or changed
// fails the import, naming it, instead of being dropped by the first apply.
func (m *deploymentModel) checkCarriedOver(ctx context.Context, live map[string]string, unwritten []string, what string, diags *diag.Diagnostics) bool {
	var d diag.Diagnostics
	in, ok := m.input(ctx, unwritten, &d)
	if !ok || d.HasError() {
		return true // reported by the plan
	}
	derived, _ := flinkconf.Derive(in)
	again := flinkconf.Respell(derived, live)
	var lost []string
	for _, k := range slices.Sorted(maps.Keys(live)) {
		if attr, _ := flinkconf.ManagedAttr(k); attr == "" || again[k] == live[k] {
			continue
		}
		if w, ok := again[flinkconf.CanonicalKey(k)]; ok {
			lost = append(lost, fmt.Sprintf("%s = %q would become %s = %q", k, live[k], flinkconf.CanonicalKey(k), w))
		} else {
			lost = append(lost, fmt.Sprintf("%s = %q would be removed", k, live[k]))
		}
	}
	if len(lost) == 0 {
		return true
	}
	addProblem(diags, "Importing", what, "spec.flinkConfiguration holds settings the provider manages but cannot carry over as "+
		"they are: "+strings.Join(lost, "; "),
		"Write them on the object as the provider does (the attribute each key belongs to is in the flinkstate_deployment docs), "+
			"or remove the ones Flink does not need; nothing was imported.")
	return false
}
