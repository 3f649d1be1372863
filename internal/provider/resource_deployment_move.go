package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource"
)

var _ resource.ResourceWithMoveState = (*deploymentResource)(nil)

// MoveState: a kubernetes_manifest of this kind moves in as an import
// (move_state.go).
func (r *deploymentResource) MoveState(context.Context) []resource.StateMover {
	return []resource.StateMover{{StateMover: func(ctx context.Context, req resource.MoveStateRequest, resp *resource.MoveStateResponse) {
		ref, ok := moveManifest(req, resp, "flinkstate_deployment")
		if !ok || resp.Diagnostics.HasError() {
			return
		}
		// As ImportState: wait_for's default, the import mark.
		moveInto(ctx, resp, ref.Namespace, ref.Name, map[string]any{"wait_for": "deployed"})
	}}}
}
