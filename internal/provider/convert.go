package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"

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

// timeoutsBlock is timeouts.Block with descriptions for the generated docs.
func timeoutsBlock(ctx context.Context, opts timeouts.Opts, what string) rschema.Block {
	b, ok := timeouts.Block(ctx, opts).(rschema.SingleNestedBlock)
	if !ok {
		return timeouts.Block(ctx, opts)
	}
	b.Description = "How long to wait: " + what + ". Durations such as \"30s\", \"10m\" or \"1h\"."
	attrs := map[string]rschema.Attribute{}
	for name, a := range b.Attributes {
		if s, ok := a.(rschema.StringAttribute); ok {
			s.Description = "Time limit for " + name + "."
			a = s
		}
		attrs[name] = a
	}
	b.Attributes = attrs
	return b
}
