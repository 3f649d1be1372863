package opmodel

import (
	"fmt"
	"strconv"
	"strings"
)

// flatConf is flinkConfiguration as the operator hands it to its validator,
// its spec diff and Flink: ConfigObjectNode.asFlatMap (flink-kubernetes-
// operator-api release-1.15.0): nested objects joined with ".", an array
// as its elements' text joined with ";", any other value as its text
// (JsonNode.asText). Written from the operator's code, not shared with the
// provider's own reading of it, which this model judges.
func flatConf(raw any) map[string]string {
	out := map[string]string{}
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if key != "" {
					k = key + "." + k
				}
				walk(k, e)
			}
		case []any:
			parts := make([]string, 0, len(x))
			for _, e := range x {
				parts = append(parts, asText(e))
			}
			out[key] = strings.Join(parts, ";")
		default:
			out[key] = asText(x)
		}
	}
	if m, ok := raw.(map[string]any); ok {
		walk("", m)
	}
	return out
}

// asText is Jackson's JsonNode.asText for the values a decoded
// Kubernetes object holds: an object or array node's text is "".
func asText(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case map[string]any, []any:
		return ""
	}
	return fmt.Sprint(v)
}

// confValue reads a flinkConfiguration key of a FlinkDeployment spec; keys
// are tried in order (a ConfigOption's key, then its deprecated keys:
// ConfigOption.withDeprecatedKeys).
func confValue(spec map[string]any, keys ...string) string {
	cfg := flatConf(spec["flinkConfiguration"])
	for _, k := range keys {
		if v := cfg[k]; v != "" {
			return v
		}
	}
	return ""
}

// pluginsEnv is the environment variable through which the official Flink
// image's docker-entrypoint.sh enables the plugins shipped in /opt/flink/opt
// (ENABLE_BUILT_IN_PLUGINS, a ';'-separated list of jar names).
const pluginsEnv = "ENABLE_BUILT_IN_PLUGINS"

// PluginsEnv is pluginsEnv, for what runs the model's jobs as real Flink.
const PluginsEnv = pluginsEnv

// FlatConf is flatConf: flinkConfiguration as the operator hands it to Flink.
func FlatConf(raw any) map[string]string { return flatConf(raw) }

// AsText is asText: Jackson's JsonNode.asText of a decoded value.
func AsText(v any) string { return asText(v) }
