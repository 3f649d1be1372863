package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

var _ resource.ResourceWithMoveState = (*iamRoleResource)(nil)

// MoveState: aws_iam_role, whose state (hashicorp/aws
// internal/service/iam/role.go, an SDKv2 resource without SchemaVersion:
// id and name are the role name; managed_policy_arns and inline_policy,
// computed, what Read found attached and inline) gives the import ID.
func (r *iamRoleResource) MoveState(context.Context) []resource.StateMover {
	const target = "flinkstate_iam_role"
	return []resource.StateMover{{StateMover: func(ctx context.Context, req resource.MoveStateRequest, resp *resource.MoveStateResponse) {
		if !fromAWSProvider(req) {
			return
		}
		switch req.SourceTypeName {
		case "aws_iam_role":
		case "aws_iam_role_policy", "aws_iam_role_policy_attachment", "aws_iam_role_policies_exclusive", "aws_iam_role_policy_attachments_exclusive":
			refuseAWSPart(req, resp, target)
			return
		default:
			return
		}
		st, err := awsState(req)
		name := jsonString(st, "name")
		if name == "" {
			name = jsonString(st, "id")
		}
		if err != nil || name == "" {
			cause := "the state does not name the role (name, id)"
			if err != nil {
				cause = err.Error()
			}
			moveProblem(&resp.Diagnostics, req, target, cause, "Import the role instead: an import block with to = flinkstate_iam_role.<name> and id = \"<role name>\".")
			return
		}
		if attached := jsonStrings(st, "managed_policy_arns"); len(attached) > 0 {
			moveProblem(&resp.Diagnostics, req, target,
				fmt.Sprintf("the role %s has managed policies attached (%s); flinkstate_iam_role manages the role's policies exclusively, "+
					"and its first apply would detach them", name, strings.Join(attached, ", ")),
				"Give the permissions they grant to another role, or detach them, then move again; if detaching them on the first "+
					"apply is intended, import the role instead (an import block with id = \""+name+"\").")
			return
		}
		var inline []struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(st["inline_policy"], &inline)
		var names []string
		for _, p := range inline {
			if p.Name != "" {
				names = append(names, p.Name)
			}
		}
		// As ImportState (passthrough of the ID).
		resp.Diagnostics.Append(resp.TargetState.SetAttribute(ctx, path.Root("id"), name)...)
		resp.Diagnostics.Append(resp.TargetPrivate.SetKey(ctx, privateMoved, []byte(`true`))...)
		if len(names) > 0 {
			sort.Strings(names)
			resp.Diagnostics.AddWarning("Inline policies of "+name+" replaced on the first apply",
				fmt.Sprintf("The role has the inline policies %s. flinkstate_iam_role manages the role's policies exclusively: the first "+
					"apply puts its own least-privilege policy (policy_json: the state stores in state_store_ids) on the role and "+
					"deletes these. Check that the job needs nothing else from them, and take the resources that wrote them out of "+
					"state without changing anything: %s.", strings.Join(names, ", "), removedBlock("aws_iam_role_policy")))
		}
	}}}
}
