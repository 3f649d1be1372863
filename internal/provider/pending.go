package provider

import (
	"context"
	"encoding/json"
	"fmt"

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
	if p == nil {
		return
	}
	var v []byte
	if reason != "" {
		v, _ = json.Marshal(reason)
	}
	diags.Append(p.SetKey(ctx, privateWaitPending, v)...)
}

// waitPending returns the reason recorded by setWaitPending, "" if none.
func waitPending(ctx context.Context, p privateGetter, diags *diag.Diagnostics) string {
	if p == nil {
		return ""
	}
	b, d := p.GetKey(ctx, privateWaitPending)
	diags.Append(d...)
	var reason string
	if len(b) == 0 || json.Unmarshal(b, &reason) != nil {
		return ""
	}
	return reason
}

// addAlreadyExists is the error of a create that found an object of the
// same name: it is never adopted, and the message says how to import it.
func addAlreadyExists(diags *diag.Diagnostics, resourceType, kind, namespace, name string) {
	id := namespace + "/" + name
	diags.AddError(kind+" already exists",
		fmt.Sprintf("A %s named %s already exists. Creating this resource never takes over an object it did not create: "+
			"another configuration, or someone else, may own it, and a destroy here would delete it.\n\n"+
			"If it is yours to manage, import it and apply again:\n\n"+
			"  terraform import ADDRESS %s\n\n"+
			"where ADDRESS is this resource's address (%s.<name>, shown below), or add an import block with to = ADDRESS and id = %q. "+
			"Otherwise choose another name or namespace.", kind, id, id, resourceType, id))
}

// privateUID is the private-state key holding the UID of the object a
// resource created or imported: an object of the same name with another
// UID was made by someone else.
const privateUID = "uid"

func setObjectUID(ctx context.Context, p privateSetter, uid string, diags *diag.Diagnostics) {
	if p == nil || uid == "" {
		return
	}
	v, _ := json.Marshal(uid)
	diags.Append(p.SetKey(ctx, privateUID, v)...)
}

func objectUID(ctx context.Context, p privateGetter, diags *diag.Diagnostics) string {
	if p == nil {
		return ""
	}
	b, d := p.GetKey(ctx, privateUID)
	diags.Append(d...)
	var uid string
	if len(b) == 0 || json.Unmarshal(b, &uid) != nil {
		return ""
	}
	return uid
}
