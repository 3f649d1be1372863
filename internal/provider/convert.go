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
