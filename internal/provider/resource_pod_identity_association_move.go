package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

var _ resource.ResourceWithMoveState = (*podIdentityAssociationResource)(nil)

// MoveState: aws_eks_pod_identity_association, whose state (hashicorp/aws
// internal/service/eks/pod_identity_association.go, a framework resource
// without schema Version: id and association_id the association's ID,
// cluster_name, disable_session_tags, target_role_arn) gives the import ID.
func (r *podIdentityAssociationResource) MoveState(context.Context) []resource.StateMover {
	const target = "flinkstate_pod_identity_association"
	return []resource.StateMover{{StateMover: func(ctx context.Context, req resource.MoveStateRequest, resp *resource.MoveStateResponse) {
		if !fromAWSProvider(req) || req.SourceTypeName != "aws_eks_pod_identity_association" {
			return
		}
		st, err := awsState(req)
		cluster, id := jsonString(st, "cluster_name"), jsonString(st, "association_id")
		if id == "" {
			id = jsonString(st, "id")
		}
		importHint := "Import the association instead: an import block with to = flinkstate_pod_identity_association.<name> and id = \"<cluster>,<association id>\"."
		if err != nil || cluster == "" || id == "" {
			cause := "the state does not name the cluster and the association (cluster_name, association_id)"
			if err != nil {
				cause = err.Error()
			}
			moveProblem(&resp.Diagnostics, req, target, cause, importHint)
			return
		}
		var unmodelled []string
		if t := jsonString(st, "target_role_arn"); t != "" {
			unmodelled = append(unmodelled, "target_role_arn "+t+" (a role assumed from the association's role)")
		}
		var noTags bool
		if json.Unmarshal(st["disable_session_tags"], &noTags) == nil && noTags {
			unmodelled = append(unmodelled, "disable_session_tags = true (flinkstate_iam_role's Pod Identity trust admits the "+
				"namespace and ServiceAccount through the session tags)")
		}
		if len(unmodelled) > 0 {
			moveProblem(&resp.Diagnostics, req, target,
				fmt.Sprintf("the association %s,%s sets %s, which flinkstate_pod_identity_association does not manage", cluster, id,
					strings.Join(unmodelled, "; ")),
				"Keep it as aws_eks_pod_identity_association (remove the moved block).")
			return
		}
		// As ImportState.
		resp.Diagnostics.Append(resp.TargetState.SetAttribute(ctx, path.Root("id"), cluster+","+id)...)
		resp.Diagnostics.Append(resp.TargetState.SetAttribute(ctx, path.Root("cluster_name"), cluster)...)
		resp.Diagnostics.Append(resp.TargetState.SetAttribute(ctx, path.Root("association_id"), id)...)
		resp.Diagnostics.Append(resp.TargetPrivate.SetKey(ctx, privateMoved, []byte(`true`))...)
	}}}
}
