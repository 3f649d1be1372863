package provider

import (
	"context"
	"encoding/json"

	"github.com/hashicorp/terraform-plugin-framework/diag"
)

// privateWaitPending is the private-state key that marks an object whose
// wait did not end (its value: why). While it is set, ModifyPlan plans an
// update whose apply waits again; a wait that ends clears it.
const privateWaitPending = "wait_pending"

// privateGetter and privateSetter are the private state of a request and a
// response (*privatestate.ProviderData).
type privateGetter interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
}

type privateSetter interface {
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

// setWaitPending records why a wait is pending; "" clears the mark.
func setWaitPending(ctx context.Context, p privateSetter, reason string, diags *diag.Diagnostics) {
	setPrivateString(ctx, p, privateWaitPending, reason, diags)
}

// waitPending returns the reason recorded by setWaitPending, "" if none.
func waitPending(ctx context.Context, p privateGetter, diags *diag.Diagnostics) string {
	return privateString(ctx, p, privateWaitPending, diags)
}

// setPrivateString records a string under key in private state ("" removes it).
func setPrivateString(ctx context.Context, p privateSetter, key, v string, diags *diag.Diagnostics) {
	if p == nil {
		return
	}
	var b []byte
	if v != "" {
		b, _ = json.Marshal(v)
	}
	diags.Append(p.SetKey(ctx, key, b)...)
}

// privateString reads what setPrivateString recorded under key, "" if nothing.
func privateString(ctx context.Context, p privateGetter, key string, diags *diag.Diagnostics) string {
	if p == nil {
		return ""
	}
	b, d := p.GetKey(ctx, key)
	diags.Append(d...)
	var v string
	if len(b) == 0 || json.Unmarshal(b, &v) != nil {
		return ""
	}
	return v
}
