package flinkdeploy

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

// Parse reads the provider's fields from a live FlinkDeployment. Status,
// and fields other managers add, are not read. versionHint is the full Flink
// version the caller last wrote: kept when the live enum still agrees with it.
func Parse(obj *unstructured.Unstructured, versionHint string) Spec {
	str := func(fields ...string) string {
		v, _, _ := unstructured.NestedString(obj.Object, append([]string{"spec"}, fields...)...)
		return v
	}
	s := Spec{
		Image:          str("image"),
		Mode:           str("mode"),
		ServiceAccount: str("serviceAccount"),
	}
	s.FlinkVersion = fullVersion(str("flinkVersion"), versionHint, obj)
	if raw, ok, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "flinkConfiguration"); ok {
		s.FlinkConfiguration, s.UnreadableConfig = FlattenConfiguration(raw)
	}
	if pod, ok, _ := unstructured.NestedMap(obj.Object, "spec", "podTemplate"); ok {
		s.PodTemplate = pod
	}
	if _, ok, _ := unstructured.NestedMap(obj.Object, "spec", "jobManager"); ok {
		jm := &JobManager{Memory: str("jobManager", "resource", "memory")}
		jm.CPU, _ = number(obj, "jobManager", "resource", "cpu")
		if r, ok := number(obj, "jobManager", "replicas"); ok {
			n := int64(r)
			jm.Replicas = &n
		}
		s.JobManager = jm
	}
	if _, ok, _ := unstructured.NestedMap(obj.Object, "spec", "taskManager"); ok {
		tm := &TaskManager{Memory: str("taskManager", "resource", "memory")}
		tm.CPU, _ = number(obj, "taskManager", "resource", "cpu")
		s.TaskManager = tm
	}
	if _, ok, _ := unstructured.NestedMap(obj.Object, "spec", "job"); ok {
		j := &Job{
			JarURI:               str("job", "jarURI"),
			EntryClass:           str("job", "entryClass"),
			UpgradeMode:          str("job", "upgradeMode"),
			State:                str("job", "state"),
			InitialSavepointPath: str("job", "initialSavepointPath"),
		}
		if p, ok := number(obj, "job", "parallelism"); ok {
			n := int64(p)
			j.Parallelism = &n
		}
		if n, ok := number(obj, "job", "savepointRedeployNonce"); ok {
			v := int64(n)
			j.SavepointRedeployNonce = &v
		}
		if a, ok, _ := unstructured.NestedBool(obj.Object, "spec", "job", "allowNonRestoredState"); ok {
			j.AllowNonRestoredState = &a
		}
		j.Args, _, _ = unstructured.NestedStringSlice(obj.Object, "spec", "job", "args")
		s.Job = j
	}
	return s
}

func number(obj *unstructured.Unstructured, fields ...string) (float64, bool) {
	v, ok, _ := unstructured.NestedFieldNoCopy(obj.Object, append([]string{"spec"}, fields...)...)
	switch n := v.(type) {
	case int64:
		return float64(n), ok
	case float64:
		return n, ok
	}
	return 0, false
}

// fullVersion maps the live flinkVersion enum back to a full version: the
// hint when it agrees, else the version of the S3 plugin jar the provider
// put in the pod template, else the enum itself.
func fullVersion(enum, hint string, obj *unstructured.Unstructured) string {
	if v, err := flinkconf.ParseVersion(hint); err == nil && v.OperatorEnum() == enum {
		return hint
	}
	if pv := PluginVersion(obj); pv != "" {
		if v, err := flinkconf.ParseVersion(pv); err == nil && v.OperatorEnum() == enum {
			return pv
		}
	}
	return enum
}

// PluginVersion reads the Flink version from the S3 plugin jar the provider
// put into ENABLE_BUILT_IN_PLUGINS of the main container
// (flink-s3-fs-hadoop-2.2.1.jar -> 2.2.1; the jar name is
// flinkconf.Version.S3PluginJar's).
func PluginVersion(obj *unstructured.Unstructured) string {
	containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "podTemplate", "spec", "containers")
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

// Settings are the provider inputs an imported object's flinkConfiguration
// stands for: the reverse of flinkconf.Derive.
type Settings struct {
	Identity         string // irsa, pod_identity, or "" when the credentials class is neither
	HighAvailability *bool  // nil: what the upgrade mode implies
	TaskSlots        *int64
	ClaimMode        string
	// StoreID is set when the three directories are one state store's;
	// the directories are then empty.
	StoreID string
	State   flinkconf.State
	// Extra are the keys the provider does not manage (flink_configuration).
	Extra map[string]string
}

// ParseConfiguration rebuilds the provider's inputs from a flinkConfiguration
// written by Derive (or by hand, for an import), for a job of upgradeMode.
func ParseConfiguration(cfg map[string]string, upgradeMode string) Settings {
	var s Settings
	switch cfg["fs.s3a.aws.credentials.provider"] {
	case flinkconf.IRSACredentialsProvider:
		s.Identity = "irsa"
	case flinkconf.PodIdentityCredentialsProvider:
		s.Identity = "pod_identity"
	}
	// high_availability stays unset when it is what the upgrade mode implies.
	if _, ha := cfg["high-availability.type"]; ha != (upgradeMode == "last-state") {
		s.HighAvailability = &ha
	}
	st := flinkconf.State{
		CheckpointDir:         cfg["execution.checkpointing.dir"],
		SavepointDir:          cfg["execution.checkpointing.savepoint-dir"],
		HADir:                 cfg["high-availability.storageDir"],
		Backend:               cfg["state.backend.type"],
		CheckpointInterval:    cfg["execution.checkpointing.interval"],
		MinPause:              cfg["execution.checkpointing.min-pause"],
		Timeout:               cfg["execution.checkpointing.timeout"],
		Mode:                  cfg["execution.checkpointing.mode"],
		ExternalizedRetention: cfg[flinkconf.RetentionKey],
	}
	// The default for the upgrade mode is what an unset attribute gives.
	if st.ExternalizedRetention == flinkconf.DefaultRetention(upgradeMode) {
		st.ExternalizedRetention = ""
	}
	s.ClaimMode = cfg[flinkconf.ClaimModeKey]
	// Directories of one store collapse back into its ID.
	if sto, ok := store.FromCheckpointDir(st.CheckpointDir); ok {
		_, sp, h := sto.Dirs()
		if (st.SavepointDir == "" || st.SavepointDir == sp) && (st.HADir == "" || st.HADir == h) {
			s.StoreID = sto.ID()
			st.CheckpointDir, st.SavepointDir, st.HADir = "", "", ""
		}
	}
	if v, ok := cfg["execution.checkpointing.incremental"]; ok {
		b := v == "true"
		st.Incremental = &b
	}
	if n, err := strconv.ParseInt(cfg["execution.checkpointing.num-retained"], 10, 64); err == nil {
		st.NumRetained = &n
	}
	if v := cfg["state.backend.rocksdb.localdir"] + cfg["state.backend.forst.local-dir"]; v != "" && v != flinkconf.DefaultLocalDir {
		st.LocalDir = v
	}
	s.State = st
	if n, err := strconv.ParseInt(cfg["taskmanager.numberOfTaskSlots"], 10, 64); err == nil {
		s.TaskSlots = &n
	}
	managed := map[string]bool{}
	for _, k := range flinkconf.ManagedKeys() {
		managed[k] = true
	}
	for k, v := range cfg {
		if !managed[k] {
			if s.Extra == nil {
				s.Extra = map[string]string{}
			}
			s.Extra[k] = v
		}
	}
	return s
}

// FlattenConfiguration reads spec.flinkConfiguration as the operator does:
// the CRD accepts any YAML there, and the operator flattens nested maps into
// dotted keys (flink-kubernetes-operator-api, ConfigObjectNode.asFlatMap)
// and hands Flink the scalars as strings. Numbers keep their written form
// (an integer as an integer), booleans become true/false. A value Flink's
// flat configuration cannot hold here (a list, null) is not guessed: its key
// is returned in unreadable, so an import can say so instead of dropping it.
func FlattenConfiguration(raw any) (flat map[string]string, unreadable []string) {
	flat = map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				key := k
				if prefix != "" {
					key = prefix + "." + k
				}
				walk(key, e)
			}
		case string:
			flat[prefix] = x
		case bool:
			flat[prefix] = strconv.FormatBool(x)
		case int64:
			flat[prefix] = strconv.FormatInt(x, 10)
		case int:
			flat[prefix] = strconv.Itoa(x)
		case float64:
			if x == math.Trunc(x) && math.Abs(x) < 1e15 {
				flat[prefix] = strconv.FormatInt(int64(x), 10)
			} else {
				flat[prefix] = strconv.FormatFloat(x, 'f', -1, 64)
			}
		default:
			unreadable = append(unreadable, prefix)
		}
	}
	if m, ok := raw.(map[string]any); ok {
		walk("", m)
	} else if raw != nil {
		unreadable = append(unreadable, "(flinkConfiguration itself)")
	}
	sort.Strings(unreadable)
	return flat, unreadable
}
