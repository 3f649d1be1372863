package flinkdeploy

import (
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
)

// liveEntry is one scalar of a live spec.flinkConfiguration: where it sits
// (nested maps, as the CRD allows any YAML there), its value as written and
// as Flink reads it (FlattenConfiguration).
type liveEntry struct {
	path  []string
	value any
	str   string
}

// liveEntries indexes a live flinkConfiguration by flattened key
// (walkConfiguration, the walk FlattenConfiguration makes).
func liveEntries(raw any) map[string]liveEntry {
	out := map[string]liveEntry{}
	walkConfiguration(raw, func(path []string, v any, str string, ok bool) {
		if ok {
			out[strings.Join(path, ".")] = liveEntry{path: path, value: v, str: str}
		}
	})
	return out
}

// ShapeConfiguration returns the flinkConfiguration to write: every written
// key placed where the live object holds the same setting (under a nested
// map, or a deprecated key Flink still reads: flinkconf.Aliases) with the
// live value, when Flink reads the two alike (flinkconf.Equivalent). An
// object another tool wrote (numbers and booleans as YAML scalars, nested
// maps, "kubernetes" for the HA factory) is then applied unchanged, so the
// operator sees no spec change and restarts nothing. A key the object lacks,
// or whose value changes, is written flat as a string. live is the object's
// spec.flinkConfiguration (nil: none).
func ShapeConfiguration(written map[string]string, live any) map[string]any {
	entries := liveEntries(live)
	out := map[string]any{}
	keys := make([]string, 0, len(written))
	for k := range written {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := written[k]
		placed := false
		for _, a := range flinkconf.Aliases(k) {
			if e, ok := entries[a]; ok && flinkconf.Equivalent(k, e.str, v) {
				place(out, e.path, e.value)
				placed = true
				break
			}
		}
		if !placed {
			out[k] = v
		}
	}
	return out
}

// place sets value at path in nested maps, creating them.
func place(m map[string]any, path []string, value any) {
	for _, p := range path[:len(path)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[path[len(path)-1]] = value
}

// LiveConfiguration is a copy of a live object's spec.flinkConfiguration as
// it is, the live argument of ShapeConfiguration (nil: no object, or none):
// the object rendered in its shape shares nothing with it.
func LiveConfiguration(live *unstructured.Unstructured) any {
	if live == nil {
		return nil
	}
	raw, _, _ := unstructured.NestedFieldCopy(live.Object, "spec", "flinkConfiguration")
	return raw
}
