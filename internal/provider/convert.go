package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// stringMap converts a map attribute to a Go map that is never nil (a null
// or unknown attribute gives an empty map), so callers can add keys to it.
func stringMap(ctx context.Context, m types.Map, diags *diag.Diagnostics) map[string]string {
	out := map[string]string{}
	if m.IsNull() || m.IsUnknown() {
		return out
	}
	diags.Append(m.ElementsAs(ctx, &out, false)...)
	return out
}

// countObjects says "1 object", "12 objects" or "more than 10000 objects".
func countObjects(n int, more bool) string {
	switch {
	case more:
		return fmt.Sprintf("more than %d objects", n)
	case n == 1:
		return "1 object"
	default:
		return fmt.Sprintf("%d objects", n)
	}
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
