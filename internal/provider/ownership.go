package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// addAlreadyExists is the error of a create that found an object of the
// same name: it is never adopted, and the message says how to import it.
func addAlreadyExists(diags *diag.Diagnostics, resourceType, kind, namespace, name string) {
	id := namespace + "/" + name
	addProblem(diags, "Creating", kind+" "+id,
		fmt.Sprintf("%s already exists: an object named %s is there. Creating this resource never takes over an object it did not create: "+
			"another configuration, or someone else, may own it, and a destroy here would delete it", kind, id),
		fmt.Sprintf("If it is yours to manage, import it and apply again:\n\n"+
			"  terraform import ADDRESS %s\n\n"+
			"where ADDRESS is the %s address Terraform names above this message (after \"with\"), or add an import block with to = ADDRESS and id = %q. "+
			"Otherwise choose another name or namespace.", id, resourceType, id))
}

// privateUID is the private-state key holding the UID of the object a
// resource created or imported: an object of the same name with another
// UID was made by someone else.
const privateUID = "uid"

func setObjectUID(ctx context.Context, p privateSetter, uid string, diags *diag.Diagnostics) {
	if uid != "" {
		setPrivateString(ctx, p, privateUID, uid, diags)
	}
}

func objectUID(ctx context.Context, p privateGetter, diags *diag.Diagnostics) string {
	return privateString(ctx, p, privateUID, diags)
}

// replacedOutsideTerraform tells whether obj, read for a resource whose
// private state records the UID it created or imported, is another object
// of the same name (deleted and created again outside Terraform). Then the
// resource is removed from state with a warning: a destroy must not delete
// the other object, an update must not rewrite it, and the next plan is a
// create, which refuses it (no adoption). Otherwise the object's UID is
// recorded (the first Read after an import, or of a state written before
// UIDs were recorded, takes the object it finds as this resource's).
// As the ServiceAccount's Read does.
func replacedOutsideTerraform(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse, kind string, obj *unstructured.Unstructured) bool {
	uid := objectUID(ctx, req.Private, &resp.Diagnostics)
	if uid != "" && uid != string(obj.GetUID()) {
		resp.Diagnostics.AddWarning(kind+" replaced outside Terraform",
			fmt.Sprintf("%s/%s now has UID %s, not %s: it is another object, dropped from this state and left alone. "+
				"Import it to manage it.", obj.GetNamespace(), obj.GetName(), obj.GetUID(), uid))
		resp.State.RemoveResource(ctx)
		return true
	}
	setObjectUID(ctx, resp.Private, string(obj.GetUID()), &resp.Diagnostics)
	return false
}

// deleteOwned deletes the object this resource created or imported (its
// UID in private state; "" for a state written before UIDs were recorded:
// the object of that name) and waits until it is gone. An object of that
// name with another UID is never deleted: a warning says so, and the
// resource leaves the state without error, since nothing of its own is left.
func deleteOwned(ctx context.Context, c *kube.Client, gvr schema.GroupVersionResource, kind, ns, name string, timeout time.Duration, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	uid := ktypes.UID(objectUID(ctx, req.Private, &resp.Diagnostics))
	err := kube.DeleteOwnedAndWait(ctx, c.Dynamic, gvr, ns, name, uid, timeout)
	switch {
	case errors.Is(err, kube.ErrOtherObject):
		resp.Diagnostics.AddWarning(kind+" replaced outside Terraform",
			fmt.Sprintf("%s. It is not the object this configuration created or imported, so it was not deleted.", err))
	case err != nil:
		addProblem(&resp.Diagnostics, "Deleting", kind+" "+ns+"/"+name, err.Error(), "")
	}
}
