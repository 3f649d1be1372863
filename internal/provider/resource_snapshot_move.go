package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource"
)

var _ resource.ResourceWithMoveState = (*snapshotResource)(nil)

// MoveState: a kubernetes_manifest of this kind moves in as an import
// (move_state.go).
func (r *snapshotResource) MoveState(context.Context) []resource.StateMover {
	return []resource.StateMover{{StateMover: func(ctx context.Context, req resource.MoveStateRequest, resp *resource.MoveStateResponse) {
		ref, ok := moveManifest(req, resp, "flinkstate_snapshot")
		if !ok || resp.Diagnostics.HasError() {
			return
		}
		// As ImportState: wait true; Read reads the rest from the object
		// (readSnapshotSpec, the operator's defaults for absent fields).
		moveInto(ctx, resp, ref.Namespace, ref.Name, map[string]any{"wait": true})
	}}}
}
