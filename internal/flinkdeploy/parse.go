package flinkdeploy

import (
	"fmt"
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
			UpgradeMode:          str("job", "upgradeMode"),
			State:                str("job", "state"),
			InitialSavepointPath: str("job", "initialSavepointPath"),
		}
		for _, f := range JobFields {
			f.parse(obj, j)
		}
		if n, ok := number(obj, "job", "savepointRedeployNonce"); ok {
			v := int64(n)
			j.SavepointRedeployNonce = &v
		}
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
	for _, val := range pluginsEnvValues(obj, false) {
		for _, p := range strings.Split(val, ";") {
			p = strings.TrimSpace(p)
			if v, ok := strings.CutPrefix(p, "flink-s3-fs-hadoop-"); ok {
				return strings.TrimSuffix(v, ".jar")
			}
		}
	}
	return ""
}

// pluginsEnvValues are the values of ENABLE_BUILT_IN_PLUGINS in the pod
// template's containers (only the main container's with mainOnly), in
// order.
func pluginsEnvValues(obj *unstructured.Unstructured, mainOnly bool) []string {
	var vals []string
	containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "podTemplate", "spec", "containers")
	for _, c := range containers {
		cm, _ := c.(map[string]any)
		if mainOnly && cm["name"] != flinkconf.MainContainer {
			continue
		}
		env, _ := cm["env"].([]any)
		for _, e := range env {
			em, _ := e.(map[string]any)
			if em["name"] == flinkconf.PluginsEnv {
				val, _ := em["value"].(string)
				vals = append(vals, val)
			}
		}
	}
	return vals
}

// Settings are the provider inputs an imported object's flinkConfiguration
// stands for: the reverse of flinkconf.Derive.
type Settings struct {
	Identity         string // flinkconf.Identities, or "" when the credentials class is neither
	HighAvailability *bool  // nil: what the upgrade mode implies
	// Values are the table's settings (flinkconf.Settings) the object
	// sets, by attribute, as flinkconf.Input.Values holds them.
	Values map[string]string
	// StoreID is set when the three directories are one state store's;
	// the directories are then empty.
	StoreID string
	State   flinkconf.State
	// Extra are the keys the provider does not manage (flink_configuration).
	Extra map[string]string
	// Unrepresentable says, per setting, what the provider cannot manage as
	// the object has it (an import fails with these, naming each).
	Unrepresentable []string
}

// ParseConfiguration rebuilds the provider's inputs from a flinkConfiguration
// written by Derive (or by hand, for an import), for a job of upgradeMode.
// Every managed key is read under the deprecated keys Flink still reads too
// (flinkconf.Lookup), and enum values in the provider's spelling (Flink reads
// them case-insensitively). What the provider cannot represent is returned in
// Unrepresentable, one sentence per setting, never dropped.
func ParseConfiguration(cfg map[string]string, upgradeMode string) Settings {
	var s Settings
	get := func(key string) string {
		v, _, _ := flinkconf.Lookup(cfg, key)
		return strings.TrimSpace(v)
	}
	has := func(key string) bool {
		_, _, ok := flinkconf.Lookup(cfg, key)
		return ok
	}
	switch cp := get(flinkconf.CredentialsProviderKey); cp {
	case flinkconf.IRSACredentialsProvider:
		s.Identity = flinkconf.IdentityIRSA
	case flinkconf.PodIdentityCredentialsProvider:
		s.Identity = flinkconf.IdentityPodIdentity
	case "":
	default:
		s.Unrepresentable = append(s.Unrepresentable, fmt.Sprintf("fs.s3a.aws.credentials.provider is %q: the provider sets "+
			"it from identity, to %s (irsa) or %s (pod_identity)", cp, flinkconf.IRSACredentialsProvider, flinkconf.PodIdentityCredentialsProvider))
	}
	ha := false
	if t, key, ok := flinkconf.Lookup(cfg, "high-availability.type"); ok {
		switch {
		case flinkconf.IsKubernetesHA(t):
			ha = true
		case flinkconf.IsNoHA(t):
		default:
			s.Unrepresentable = append(s.Unrepresentable, fmt.Sprintf("%s is %q: the provider manages Kubernetes HA only "+
				"(high_availability), not ZooKeeper or a custom factory", key, t))
		}
	}
	st := flinkconf.State{
		CheckpointDir:         get("execution.checkpointing.dir"),
		SavepointDir:          get("execution.checkpointing.savepoint-dir"),
		HADir:                 get("high-availability.storageDir"),
		Backend:               strings.ToLower(get("state.backend.type")),
		ExternalizedRetention: strings.ToUpper(get(flinkconf.RetentionKey)),
	}
	// The table's settings, in the form Derive writes them.
	for _, set := range flinkconf.Settings {
		raw, _, ok := flinkconf.Lookup(cfg, set.Key)
		if !ok || (strings.TrimSpace(raw) == "" && set.Kind != flinkconf.KindBool) {
			continue
		}
		if v, ok := set.ParseValue(raw); ok {
			if s.Values == nil {
				s.Values = map[string]string{}
			}
			s.Values[set.Attr] = v
		}
	}
	if !ha && st.HADir != "" {
		_, key, _ := flinkconf.Lookup(cfg, "high-availability.storageDir")
		s.Unrepresentable = append(s.Unrepresentable, fmt.Sprintf("%s is set while high availability is off: the provider "+
			"writes it only with Kubernetes HA (Flink reads it only then); remove it or turn HA on", key))
	}
	for _, d := range []struct{ key, attr, v string }{
		{"execution.checkpointing.dir", "state.checkpoint_dir", st.CheckpointDir},
		{"execution.checkpointing.savepoint-dir", "state.savepoint_dir", st.SavepointDir},
		{"high-availability.storageDir", "state.ha_dir", st.HADir},
	} {
		if d.v != "" && !strings.HasPrefix(d.v, "s3://") {
			_, key, _ := flinkconf.Lookup(cfg, d.key)
			s.Unrepresentable = append(s.Unrepresentable, fmt.Sprintf("%s is %q: the provider keeps state on S3 only (%s takes an s3:// URI)", key, d.v, d.attr))
		}
	}
	if sto, ok := get("execution.checkpointing.storage"), has("execution.checkpointing.storage"); ok && !strings.EqualFold(sto, "filesystem") {
		s.Unrepresentable = append(s.Unrepresentable, fmt.Sprintf("execution.checkpointing.storage is %q: the provider writes "+
			"checkpoints to the file system at state.checkpoint_dir (filesystem)", sto))
	}
	// The default for the upgrade mode is what an unset attribute gives.
	if st.ExternalizedRetention == flinkconf.DefaultRetention(upgradeMode) {
		st.ExternalizedRetention = ""
	}
	// Directories of one store collapse back into its ID.
	if sto, ok := store.FromCheckpointDir(st.CheckpointDir); ok {
		_, sp, h := sto.Dirs()
		// Not without the savepoint directory: store_id would add one.
		if st.SavepointDir == sp && (st.HADir == "" || st.HADir == h) {
			s.StoreID = sto.ID()
			st.CheckpointDir, st.SavepointDir, st.HADir = "", "", ""
		}
	}
	if st.CheckpointDir == "" && s.StoreID == "" {
		s.Unrepresentable = append(s.Unrepresentable, "it sets no checkpoint directory (execution.checkpointing.dir): "+
			"flinkstate_deployment manages jobs that keep their state on S3 (state.store_id or state.checkpoint_dir)")
	}
	// high_availability stays unset when it is what the upgrade mode implies
	// (flinkconf.Input.HAEnabled), with the store's HA directory when the
	// directories are one store's.
	effective := st
	if s.StoreID != "" {
		if sto, err := store.Parse(s.StoreID); err == nil {
			_, _, effective.HADir = sto.Dirs()
		}
	}
	if ha != (flinkconf.Input{UpgradeMode: upgradeMode, State: effective}).HAEnabled() {
		s.HighAvailability = &ha
	}
	if v := get("state.backend.rocksdb.localdir") + get("state.backend.forst.local-dir"); v != "" && v != flinkconf.DefaultLocalDir {
		st.LocalDir = v
	}
	s.State = st
	for k, v := range cfg {
		if attr, _ := flinkconf.ManagedAttr(k); attr == "" {
			if s.Extra == nil {
				s.Extra = map[string]string{}
			}
			s.Extra[k] = v
		}
	}
	sort.Strings(s.Unrepresentable)
	return s
}

// FlattenConfiguration reads spec.flinkConfiguration as the operator does
// (flink-kubernetes-operator-api release-1.15.0, ConfigObjectNode.asFlatMap):
// nested maps become dotted keys, scalars strings (numbers in their written
// form, booleans true/false), a list of scalars its elements joined with
// ";" (arrayNodeToSemicolonSepratedString), an empty list no key at all. A
// value Flink's flat configuration does not hold that way here (null, a
// list of maps) is not guessed: its key is returned in unreadable, so an
// import can say so instead of dropping it.
func FlattenConfiguration(raw any) (flat map[string]string, unreadable []string) {
	flat = map[string]string{}
	if _, ok := raw.(map[string]any); !ok && raw != nil {
		return flat, []string{"(flinkConfiguration itself)"}
	}
	walkConfiguration(raw, func(path []string, _ any, str string, ok bool) {
		if key := strings.Join(path, "."); ok {
			flat[key] = str
		} else {
			unreadable = append(unreadable, key)
		}
	})
	sort.Strings(unreadable)
	return flat, unreadable
}

// walkConfiguration visits every value of a flinkConfiguration as the
// operator flattens it (ConfigObjectNode.asFlatMap): its path through nested
// maps, the value as written, and the string Flink gets (ok false for a
// value the operator does not hand over as one: null, a list of maps). An
// empty list is not visited: it gives no key.
func walkConfiguration(raw any, visit func(path []string, value any, str string, ok bool)) {
	var walk func(path []string, v any)
	walk = func(path []string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(append(append([]string(nil), path...), k), e)
			}
		case []any:
			if len(x) == 0 {
				return
			}
			parts := make([]string, 0, len(x))
			for _, e := range x {
				str, ok := scalarString(e)
				if !ok {
					visit(path, v, "", false)
					return
				}
				parts = append(parts, str)
			}
			visit(path, v, strings.Join(parts, ";"), true)
		default:
			str, ok := scalarString(x)
			visit(path, v, str, ok)
		}
	}
	if m, ok := raw.(map[string]any); ok {
		walk(nil, m)
	}
}

// scalarString is a YAML scalar as the operator hands it to Flink
// (JsonNode.asText): false when v is not a scalar (or null).
func scalarString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case int:
		return strconv.Itoa(x), true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatInt(int64(x), 10), true
		}
		return strconv.FormatFloat(x, 'f', -1, 64), true
	}
	return "", false
}
