package flinkconf

import (
	"fmt"
	"maps"
	"slices"
)

// SensitiveKeys are the findings on the keys of flink_configuration
// (plain) and sensitive_flink_configuration (sensitive), in key order: a
// key in both maps is an error; a secret in flink_configuration (what
// Flink hides: IsSensitiveKey, GlobalConfiguration.isSensitive) is shown
// in plans and in effective_flink_configuration, a warning.
func SensitiveKeys[P, S any](plain map[string]P, sensitive map[string]S) []Finding {
	var out []Finding
	for _, k := range slices.Sorted(maps.Keys(plain)) {
		if _, both := sensitive[k]; both {
			out = append(out, Finding{Severity: Error, Path: []string{"flink_configuration", k}, Summary: "Key set twice",
				Detail: fmt.Sprintf("%q is in both flink_configuration and sensitive_flink_configuration: keep it in one (a secret in "+
					"sensitive_flink_configuration).", k)})
		} else if IsSensitiveKey(k) {
			out = append(out, Finding{Severity: Warning, Path: []string{"flink_configuration", k}, Summary: "Secret shown in plans",
				Detail: fmt.Sprintf("Flink treats %q as a secret (GlobalConfiguration.isSensitive), but flink_configuration shows it in "+
					"plans and in effective_flink_configuration: move it to sensitive_flink_configuration.", k)})
		}
	}
	return out
}
