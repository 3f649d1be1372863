package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
)

// stringMap converts a map attribute to a Go map that is never nil (a null
// or unknown attribute gives an empty map), so callers can add keys to it.
func stringMap(ctx context.Context, m types.Map, diags *diag.Diagnostics) map[string]string {
	elems := m.Elements()
	out := make(map[string]string, len(elems))
	if m.IsNull() || m.IsUnknown() {
		return out
	}
	// Without reflection for the common case, known strings: this runs
	// several times a plan. Anything else gets ElementsAs's diagnostics.
	for k, e := range elems {
		s, ok := e.(types.String)
		if !ok || s.IsNull() || s.IsUnknown() {
			clear(out)
			diags.Append(m.ElementsAs(ctx, &out, false)...)
			return out
		}
		out[k] = s.ValueString()
	}
	return out
}

// knownStrings returns the elements of a list of strings, and false when
// the list or any element is not known yet (e.g. IDs of resources created
// in the same run).
func knownStrings(ctx context.Context, l types.List, diags *diag.Diagnostics) ([]string, bool) {
	if l.IsUnknown() {
		return nil, false
	}
	for _, e := range l.Elements() {
		if e.IsUnknown() {
			return nil, false
		}
	}
	var out []string
	if !l.IsNull() {
		diags.Append(l.ElementsAs(ctx, &out, false)...)
	}
	return out, true
}

// mapFrom is a map attribute of strings (null for a nil map, as
// types.MapValueFrom makes it), built without reflection.
func mapFrom(_ context.Context, m map[string]string, _ *diag.Diagnostics) types.Map {
	if m == nil {
		return types.MapNull(types.StringType)
	}
	elems := make(map[string]attr.Value, len(m))
	for k, v := range m {
		elems[k] = types.StringValue(v)
	}
	return types.MapValueMust(types.StringType, elems)
}

func emptyList() types.List { return types.ListValueMust(types.StringType, []attr.Value{}) }

func listOfStrings(ss []string) types.List {
	vals := make([]attr.Value, len(ss))
	for i, s := range ss {
		vals[i] = types.StringValue(s)
	}
	return types.ListValueMust(types.StringType, vals)
}

func stringList(ctx context.Context, l types.List, diags *diag.Diagnostics) []string {
	var out []string
	if !l.IsNull() && !l.IsUnknown() {
		diags.Append(l.ElementsAs(ctx, &out, false)...)
	}
	return out
}

func optionalString(s string) types.String {
	if s == "" {
		return types.StringNull()
	}
	return types.StringValue(s)
}

func known(vs ...types.String) bool {
	for _, v := range vs {
		if v.IsNull() || v.IsUnknown() {
			return false
		}
	}
	return true
}

// anyUnknown reports whether any value, or any element of a list, set, map
// or object value, is unknown. A list that is known but holds one unknown
// element (["eks", "get-token", "--cluster-name", module.eks.cluster_name]
// while the cluster is planned) must count as unknown: converting it to Go
// values fails.
func anyUnknown(vs ...attr.Value) bool {
	for _, v := range vs {
		if v == nil {
			continue
		}
		if v.IsUnknown() {
			return true
		}
		if v.IsNull() {
			continue
		}
		switch c := v.(type) {
		case basetypes.ListValue:
			if anyUnknown(c.Elements()...) {
				return true
			}
		case basetypes.SetValue:
			if anyUnknown(c.Elements()...) {
				return true
			}
		case basetypes.TupleValue:
			if anyUnknown(c.Elements()...) {
				return true
			}
		case basetypes.MapValue:
			for _, e := range c.Elements() {
				if anyUnknown(e) {
					return true
				}
			}
		case basetypes.ObjectValue:
			for _, e := range c.Attributes() {
				if anyUnknown(e) {
					return true
				}
			}
		}
	}
	return false
}
