package provider

import (
	"context"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

// readDeployment copies what the provider writes from the live object into
// the model: the fields it sets, and of flinkConfiguration only the keys it
// wrote (or, after an import, all of them). Status, defaults and fields of
// other managers are never read, so they never show as a diff.
func readDeployment(ctx context.Context, live *unstructured.Unstructured, m *deploymentModel, imported bool, diags *diag.Diagnostics) {
	str := func(fields ...string) string {
		v, _, _ := unstructured.NestedString(live.Object, append([]string{"spec"}, fields...)...)
		return v
	}
	num := func(fields ...string) (float64, bool) {
		v, ok, _ := unstructured.NestedFieldNoCopy(live.Object, append([]string{"spec"}, fields...)...)
		switch n := v.(type) {
		case int64:
			return float64(n), ok
		case float64:
			return n, ok
		}
		return 0, false
	}
	m.ID = types.StringValue(live.GetNamespace() + "/" + live.GetName())
	m.Image = types.StringValue(str("image"))
	m.Mode = types.StringValue(str("mode"))
	m.ServiceAccount = optionalString(str("serviceAccount"))

	// flinkVersion: the live enum, mapped back to the full version when it agrees.
	enum := str("flinkVersion")
	if v, err := flinkconf.ParseVersion(m.FlinkVersion.ValueString()); err != nil || v.OperatorEnum() != enum {
		if pv := pluginVersion(live); pv != "" {
			if v, err := flinkconf.ParseVersion(pv); err == nil && v.OperatorEnum() == enum {
				m.FlinkVersion = types.StringValue(pv)
			} else {
				m.FlinkVersion = types.StringValue(enum)
			}
		} else {
			m.FlinkVersion = types.StringValue(enum)
		}
	}

	if _, ok, _ := unstructured.NestedMap(live.Object, "spec", "jobManager"); ok && (m.JobManager != nil || imported) {
		jm := &jobManagerModel{Memory: types.StringValue(str("jobManager", "resource", "memory")), Replicas: types.Int64Null()}
		if cpu, ok := num("jobManager", "resource", "cpu"); ok {
			jm.CPU = types.Float64Value(cpu)
		}
		if r, ok := num("jobManager", "replicas"); ok && (m.JobManager == nil || !m.JobManager.Replicas.IsNull()) {
			jm.Replicas = types.Int64Value(int64(r))
		}
		m.JobManager = jm
	}
	if _, ok, _ := unstructured.NestedMap(live.Object, "spec", "taskManager"); ok && (m.TaskManager != nil || imported) {
		tm := &taskMgrModel{Memory: types.StringValue(str("taskManager", "resource", "memory")), TaskSlots: types.Int64Null()}
		if m.TaskManager != nil {
			tm.TaskSlots = m.TaskManager.TaskSlots
		}
		if cpu, ok := num("taskManager", "resource", "cpu"); ok {
			tm.CPU = types.Float64Value(cpu)
		}
		m.TaskManager = tm
	}
	if _, ok, _ := unstructured.NestedMap(live.Object, "spec", "job"); ok && (m.Job != nil || imported) {
		j := &jobModel{
			JarURI:                types.StringValue(str("job", "jarURI")),
			EntryClass:            optionalString(str("job", "entryClass")),
			UpgradeMode:           optionalString(str("job", "upgradeMode")),
			State:                 optionalString(str("job", "state")),
			InitialSavepointPath:  optionalString(str("job", "initialSavepointPath")),
			Parallelism:           types.Int64Null(),
			AllowNonRestoredState: types.BoolNull(),
			Args:                  types.ListNull(types.StringType),
		}
		if p, ok := num("job", "parallelism"); ok {
			j.Parallelism = types.Int64Value(int64(p))
		}
		if a, ok, _ := unstructured.NestedBool(live.Object, "spec", "job", "allowNonRestoredState"); ok {
			j.AllowNonRestoredState = types.BoolValue(a)
		}
		if args, ok, _ := unstructured.NestedStringSlice(live.Object, "spec", "job", "args"); ok && len(args) > 0 {
			l, d := types.ListValueFrom(ctx, types.StringType, args)
			diags.Append(d...)
			j.Args = l
		} else if m.Job != nil && !m.Job.Args.IsNull() && len(m.Job.Args.Elements()) == 0 {
			j.Args = m.Job.Args
		}
		m.Job = j
	}

	if pod, ok, _ := unstructured.NestedMap(live.Object, "spec", "podTemplate"); ok {
		m.EffectivePod = types.StringValue(canonicalJSON(pod))
	} else {
		m.EffectivePod = types.StringValue("")
	}

	liveCfg, _, _ := unstructured.NestedStringMap(live.Object, "spec", "flinkConfiguration")
	effective := map[string]string{}
	if imported {
		effective = liveCfg
		importStateBlock(ctx, liveCfg, m, diags)
	} else {
		for k := range m.EffectiveConfig.Elements() {
			if v, ok := liveCfg[k]; ok {
				effective[k] = v
			}
		}
	}
	m.EffectiveConfig = mapFrom(ctx, effective, diags)
}

// pluginVersion reads the Flink version from the S3 plugin jar the provider
// put into ENABLE_BUILT_IN_PLUGINS (flink-s3-fs-hadoop-2.2.1.jar -> 2.2.1).
func pluginVersion(live *unstructured.Unstructured) string {
	containers, _, _ := unstructured.NestedSlice(live.Object, "spec", "podTemplate", "spec", "containers")
	for _, c := range containers {
		cm, _ := c.(map[string]any)
		env, _ := cm["env"].([]any)
		for _, e := range env {
			em, _ := e.(map[string]any)
			if em["name"] != flinkconf.PluginsEnv {
				continue
			}
			val, _ := em["value"].(string)
			for _, p := range strings.Split(val, ";") {
				p = strings.TrimSpace(p)
				if v, ok := strings.CutPrefix(p, "flink-s3-fs-hadoop-"); ok {
					return strings.TrimSuffix(v, ".jar")
				}
			}
		}
	}
	return ""
}

// importStateBlock rebuilds identity, high_availability, task slots, the
// state block and the extra keys from an imported object's configuration.
func importStateBlock(ctx context.Context, cfg map[string]string, m *deploymentModel, diags *diag.Diagnostics) {
	switch cfg["fs.s3a.aws.credentials.provider"] {
	case flinkconf.IRSACredentialsProvider:
		m.Identity = types.StringValue("irsa")
	case flinkconf.PodIdentityCredentialsProvider:
		m.Identity = types.StringValue("pod_identity")
	}
	// high_availability stays unset when it is what the upgrade mode implies.
	_, ha := cfg["high-availability.type"]
	lastState := m.Job != nil && m.Job.UpgradeMode.ValueString() == "last-state"
	if ha == lastState {
		m.HighAvailability = types.BoolNull()
	} else {
		m.HighAvailability = types.BoolValue(ha)
	}
	s := &stateBlockModel{
		StoreID:               types.StringNull(),
		CheckpointDir:         optionalString(cfg["execution.checkpointing.dir"]),
		SavepointDir:          optionalString(cfg["execution.checkpointing.savepoint-dir"]),
		HADir:                 optionalString(cfg["high-availability.storageDir"]),
		Backend:               optionalString(cfg["state.backend.type"]),
		CheckpointInterval:    optionalString(cfg["execution.checkpointing.interval"]),
		MinPause:              optionalString(cfg["execution.checkpointing.min-pause"]),
		Timeout:               optionalString(cfg["execution.checkpointing.timeout"]),
		Mode:                  optionalString(cfg["execution.checkpointing.mode"]),
		ExternalizedRetention: optionalString(cfg["execution.checkpointing.externalized-checkpoint-retention"]),
		Incremental:           types.BoolNull(),
		NumRetained:           types.Int64Null(),
		LocalDir:              types.StringNull(),
	}
	// Directories of one store collapse back into store_id.
	if st, ok := store.FromCheckpointDir(s.CheckpointDir.ValueString()); ok {
		_, sp, h := st.Dirs()
		if (s.SavepointDir.IsNull() || s.SavepointDir.ValueString() == sp) && (s.HADir.IsNull() || s.HADir.ValueString() == h) {
			s.StoreID = types.StringValue(st.ID())
			s.CheckpointDir, s.SavepointDir, s.HADir = types.StringNull(), types.StringNull(), types.StringNull()
		}
	}
	if v, ok := cfg["execution.checkpointing.incremental"]; ok {
		s.Incremental = types.BoolValue(v == "true")
	}
	if n, err := strconv.ParseInt(cfg["execution.checkpointing.num-retained"], 10, 64); err == nil {
		s.NumRetained = types.Int64Value(n)
	}
	if v := cfg["state.backend.rocksdb.localdir"] + cfg["state.backend.forst.local-dir"]; v != "" && v != flinkconf.DefaultLocalDir {
		s.LocalDir = types.StringValue(v)
	}
	m.State = s
	extra := map[string]string{}
	managed := map[string]bool{}
	for _, k := range flinkconf.ManagedKeys() {
		managed[k] = true
	}
	for k, v := range cfg {
		if !managed[k] {
			extra[k] = v
		}
	}
	if len(extra) > 0 {
		m.FlinkConfiguration = mapFrom(ctx, extra, diags)
	} else {
		m.FlinkConfiguration = types.MapNull(types.StringType)
	}
	if n, err := strconv.ParseInt(cfg["taskmanager.numberOfTaskSlots"], 10, 64); err == nil && m.TaskManager != nil {
		m.TaskManager.TaskSlots = types.Int64Value(n)
	}
}
