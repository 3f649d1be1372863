package flinkconf

import (
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"
)

// Names in the pod template the provider adds.
const (
	MainContainer   = "flink-main-container"
	PluginsEnv      = "ENABLE_BUILT_IN_PLUGINS"
	LocalVolumeName = "flink-state-local"
	FlinkFSGroup    = int64(9999) // flink's UID/GID in the official images
)

// PodTemplate merges what the provider adds into the user's pod template
// (YAML of a Pod: apiVersion, kind, metadata, spec; may be empty):
// fsGroup 9999 unless the user sets one, the S3 plugin in
// ENABLE_BUILT_IN_PLUGINS on the main container (unless the image brings
// it: Input.WritesPluginEnv), and for RocksDB/ForSt an
// emptyDir mounted at the local directory (not a backup: durable state is
// only what the checkpoint directory holds). Conflicts are Error findings on
// pod_template.
func PodTemplate(userYAML string, in Input) (map[string]any, []Finding) {
	var fs []Finding
	conflict := func(detail string) {
		fs = append(fs, Finding{Severity: Error, Path: []string{"pod_template"}, Summary: "Pod template conflicts with the provider's settings", Detail: detail})
	}
	if msg := ValidatePodTemplate(userYAML); msg != "" {
		return nil, []Finding{{Severity: Error, Path: []string{"pod_template"}, Summary: "Invalid pod template", Detail: "pod_template " + msg + "."}}
	}
	pod := map[string]any{}
	if strings.TrimSpace(userYAML) != "" {
		if err := yaml.Unmarshal([]byte(userYAML), &pod); err != nil {
			return nil, []Finding{{Severity: Error, Path: []string{"pod_template"}, Summary: "Invalid pod template", Detail: "pod_template is not valid YAML: " + err.Error()}}
		}
		if pod == nil {
			pod = map[string]any{}
		}
	}
	if k, ok := pod["kind"]; ok && k != "Pod" {
		conflict(fmt.Sprintf("pod_template must describe a Pod (kind: Pod), got kind %v", k))
		return nil, fs
	}
	spec := child(pod, "spec")
	if !in.Unwritten[AbsentFSGroup] {
		sc := child(spec, "securityContext")
		if _, ok := sc["fsGroup"]; !ok {
			sc["fsGroup"] = FlinkFSGroup
		}
	}

	containers, _ := spec["containers"].([]any)
	var main map[string]any
	for _, c := range containers {
		if m, ok := c.(map[string]any); ok && m["name"] == MainContainer {
			main = m
		}
	}
	if main == nil {
		main = map[string]any{"name": MainContainer}
		containers = append(containers, main)
	}
	spec["containers"] = containers

	if v, err := ParseVersion(in.FlinkVersion); err == nil && in.WritesPluginEnv() {
		jar := v.S3PluginJar()
		env, _ := main["env"].([]any)
		found := false
		for _, e := range env {
			m, _ := e.(map[string]any)
			if m["name"] != PluginsEnv {
				continue
			}
			found = true
			val, _ := m["value"].(string)
			if !ContainsPlugin(val, jar) {
				conflict(fmt.Sprintf("%s on %s is %q, which lacks %s: the S3 file system would not load. Add it (plugins are separated by ';') or remove the variable.",
					PluginsEnv, MainContainer, val, jar))
			}
		}
		if !found {
			env = append(env, map[string]any{"name": PluginsEnv, "value": jar})
		}
		main["env"] = env
	}

	if in.UsesLocalDir() {
		dir := in.LocalDir()
		mounts, _ := main["volumeMounts"].([]any)
		own := false
		for _, mt := range mounts {
			m, _ := mt.(map[string]any)
			switch {
			case m["mountPath"] == dir:
				own = true // the user brings their own volume there (e.g. a local NVMe or PVC)
				if msg := readOnlyMount(spec, m); msg != "" {
					conflict(fmt.Sprintf("the volume mounted at the state backend's local directory %s %s: RocksDB/ForSt write their working files there. "+
						"Mount a writable volume (emptyDir, a PVC, a local disk) or remove the mount to get the provider's emptyDir.", dir, msg))
				}
			case m["name"] == LocalVolumeName:
				conflict(fmt.Sprintf("volume mount %q is at %v, but the state backend's local directory is %s", LocalVolumeName, m["mountPath"], dir))
				own = true
			}
		}
		if !own {
			mounts = append(mounts, map[string]any{"name": LocalVolumeName, "mountPath": dir})
			main["volumeMounts"] = mounts
			volumes, _ := spec["volumes"].([]any)
			for _, vl := range volumes {
				if m, _ := vl.(map[string]any); m["name"] == LocalVolumeName {
					conflict(fmt.Sprintf("a volume named %q exists but is not mounted at %s", LocalVolumeName, dir))
				}
			}
			spec["volumes"] = append(volumes, map[string]any{"name": LocalVolumeName, "emptyDir": map[string]any{}})
		}
	}
	return pod, fs
}

// ContainsPlugin tells whether the ';'-separated ENABLE_BUILT_IN_PLUGINS list
// names jar (docker-entrypoint.sh splits it on ';').
func ContainsPlugin(list, jar string) bool {
	for _, p := range strings.Split(list, ";") {
		if strings.TrimSpace(p) == jar {
			return true
		}
	}
	return false
}

// child returns m[key] as a map, creating it when missing.
func child(m map[string]any, key string) map[string]any {
	if c, ok := m[key].(map[string]any); ok {
		return c
	}
	c := map[string]any{}
	m[key] = c
	return c
}

// readOnlyMount says why a volume mount cannot be written, or "": a
// readOnly mount, or a volume type the kubelet always mounts read-only
// (configMap, secret, downwardAPI, projected: core/v1 Volume docs, "always
// mounted read-only" since Kubernetes 1.9.4).
func readOnlyMount(spec map[string]any, mount map[string]any) string {
	if ro, _ := mount["readOnly"].(bool); ro {
		return "is mounted readOnly"
	}
	volumes, _ := spec["volumes"].([]any)
	for _, v := range volumes {
		vol, _ := v.(map[string]any)
		if vol == nil || vol["name"] != mount["name"] {
			continue
		}
		for _, t := range []string{"configMap", "secret", "downwardAPI", "projected"} {
			if _, ok := vol[t]; ok {
				return fmt.Sprintf("is a %s volume, which Kubernetes mounts read-only", t)
			}
		}
	}
	return ""
}

// StripAdditions is the reverse of PodTemplate for an imported object's pod
// template: it removes what PodTemplate would add back (fsGroup 9999, the
// S3 plugin variable naming only the plugin, the emptyDir at the local
// directory), where re-adding puts it back in the same place, and returns
// what is left as the user's pod_template (nil: nothing left). The caller
// checks that PodTemplate(result) gives the live template again.
func StripAdditions(live map[string]any, in Input) map[string]any {
	pod, _ := deepCopy(live).(map[string]any)
	spec, _ := pod["spec"].(map[string]any)
	if spec == nil {
		return pod
	}
	if sc, ok := spec["securityContext"].(map[string]any); ok && !in.Unwritten[AbsentFSGroup] {
		if g, ok := sc["fsGroup"]; ok && fmt.Sprint(g) == fmt.Sprint(FlinkFSGroup) {
			delete(sc, "fsGroup")
			if len(sc) == 0 {
				delete(spec, "securityContext")
			}
		}
	}
	containers, _ := spec["containers"].([]any)
	for i, c := range containers {
		m, _ := c.(map[string]any)
		if m == nil || m["name"] != MainContainer {
			continue
		}
		if v, err := ParseVersion(in.FlinkVersion); err == nil && in.WritesPluginEnv() {
			dropLast(m, "env", func(e map[string]any) bool { return e["name"] == PluginsEnv && e["value"] == v.S3PluginJar() })
		}
		if in.UsesLocalDir() {
			if dropLast(m, "volumeMounts", func(e map[string]any) bool {
				return e["name"] == LocalVolumeName && e["mountPath"] == in.LocalDir() && len(e) == 2
			}) {
				dropLast(spec, "volumes", func(e map[string]any) bool {
					ed, _ := e["emptyDir"].(map[string]any)
					return e["name"] == LocalVolumeName && ed != nil && len(ed) == 0 && len(e) == 2
				})
			}
		}
		if len(m) == 1 && i == len(containers)-1 {
			containers = containers[:i]
			if len(containers) == 0 {
				delete(spec, "containers")
			} else {
				spec["containers"] = containers
			}
		}
		break
	}
	if len(spec) == 0 {
		delete(pod, "spec")
	}
	if len(pod) == 0 {
		return nil
	}
	return pod
}

// dropLast removes the last element of the list m[key] when match says so
// (PodTemplate appends its additions), and the list when it is left empty.
func dropLast(m map[string]any, key string, match func(map[string]any) bool) bool {
	list, _ := m[key].([]any)
	if len(list) == 0 {
		return false
	}
	last, _ := list[len(list)-1].(map[string]any)
	if last == nil || !match(last) {
		return false
	}
	if list = list[:len(list)-1]; len(list) == 0 {
		delete(m, key)
	} else {
		m[key] = list
	}
	return true
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}
