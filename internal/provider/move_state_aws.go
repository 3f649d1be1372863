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

// `moved` from hashicorp/aws: aws_s3_bucket, aws_iam_role and
// aws_eks_pod_identity_association become flinkstate resources as an
// import of the same bucket, role or association (see move_state.go): the
// converters take the import ID from the source state and set what
// ImportState sets; the refresh after the move reads the rest.

var (
	_ resource.ResourceWithMoveState = (*bucketResource)(nil)
	_ resource.ResourceWithMoveState = (*iamRoleResource)(nil)
	_ resource.ResourceWithMoveState = (*podIdentityAssociationResource)(nil)
)

// fromAWSProvider: hashicorp/aws' address as Terraform sends it (any
// registry host), or "aws", what OpenTofu v1.10 sends (move_state.go).
func fromAWSProvider(req resource.MoveStateRequest) bool {
	return strings.HasSuffix(req.SourceProviderAddress, "/hashicorp/aws") || req.SourceProviderAddress == "aws"
}

// awsState reads the top-level attributes of a hashicorp/aws state. Every
// version of these resources stores them as JSON (Terraform >= 0.12); a
// state in the flatmap form of Terraform 0.11 has no JSON and is refused.
func awsState(req resource.MoveStateRequest) (map[string]json.RawMessage, error) {
	if req.SourceRawState == nil || len(req.SourceRawState.JSON) == 0 {
		return nil, fmt.Errorf("its state is not stored as JSON (a state last written by Terraform 0.11?)")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(req.SourceRawState.JSON, &m); err != nil {
		return nil, fmt.Errorf("its state is not a JSON object: %w", err)
	}
	return m, nil
}

func jsonString(m map[string]json.RawMessage, key string) string {
	var s string
	_ = json.Unmarshal(m[key], &s)
	return s
}

func jsonStrings(m map[string]json.RawMessage, key string) []string {
	var out []string
	_ = json.Unmarshal(m[key], &out)
	sort.Strings(out)
	return out
}

func removedBlock(types ...string) string {
	var b strings.Builder
	for _, t := range types {
		fmt.Fprintf(&b, "removed { from = %s.<name>  lifecycle { destroy = false } }; ", t)
	}
	return strings.TrimSuffix(b.String(), "; ")
}

// refuseAWSPart refuses a hashicorp/aws resource that is one part of what
// the target manages: it is not moved, it is removed from state.
func refuseAWSPart(req resource.MoveStateRequest, resp *resource.MoveStateResponse, target string) {
	moveProblem(&resp.Diagnostics, req, target,
		fmt.Sprintf("%s is one setting of what %s manages as a whole, not a resource of its own, and a moved block moves one "+
			"resource into one resource", req.SourceTypeName, target),
		fmt.Sprintf("Move (or import) the main resource into %s and take this one out of state without changing anything: %s.",
			target, removedBlock(req.SourceTypeName)))
}

// --- flinkstate_bucket ---

// bucketConfigTypes are hashicorp/aws' bucket configuration resources
// whose settings flinkstate_bucket manages itself.
var bucketConfigTypes = []string{
	"aws_s3_bucket_versioning", "aws_s3_bucket_server_side_encryption_configuration", "aws_s3_bucket_public_access_block",
	"aws_s3_bucket_ownership_controls", "aws_s3_bucket_lifecycle_configuration", "aws_s3_bucket_policy", "aws_s3_bucket_acl",
}

// MoveState: aws_s3_bucket, whose state (hashicorp/aws
// internal/service/s3/bucket.go, an SDKv2 resource: id is the bucket name,
// schema.ImportStatePassthrough; bucket the name too) gives the import ID.
func (r *bucketResource) MoveState(context.Context) []resource.StateMover {
	const target = "flinkstate_bucket"
	return []resource.StateMover{{StateMover: func(ctx context.Context, req resource.MoveStateRequest, resp *resource.MoveStateResponse) {
		if !fromAWSProvider(req) {
			return
		}
		switch {
		case req.SourceTypeName == "aws_s3_bucket":
		case strings.HasPrefix(req.SourceTypeName, "aws_s3_bucket_"):
			refuseAWSPart(req, resp, target)
			return
		default:
			return
		}
		st, err := awsState(req)
		name := jsonString(st, "bucket")
		if name == "" {
			name = jsonString(st, "id")
		}
		if err != nil || name == "" {
			cause := "the state does not name the bucket (bucket, id)"
			if err != nil {
				cause = err.Error()
			}
			moveProblem(&resp.Diagnostics, req, target, cause, "Import the bucket instead: an import block with to = flinkstate_bucket.<name> and id = \"<bucket>\".")
			return
		}
		// As ImportState.
		resp.Diagnostics.Append(resp.TargetState.SetAttribute(ctx, path.Root("id"), name)...)
		resp.Diagnostics.Append(resp.TargetState.SetAttribute(ctx, path.Root("bucket"), name)...)
		resp.Diagnostics.Append(resp.TargetState.SetAttribute(ctx, path.Root("force_destroy"), false)...)
		resp.Diagnostics.Append(resp.TargetPrivate.SetKey(ctx, privateMoved, []byte(`true`))...)
		resp.Diagnostics.AddWarning("Bucket configuration resources of "+name+" not moved",
			"flinkstate_bucket manages the bucket's encryption, Block Public Access, ownership, versioning, lifecycle rules and policy "+
				"statements itself. Take hashicorp/aws resources that configure the same bucket out of state without changing anything, "+
				"or both would keep rewriting them: "+removedBlock(bucketConfigTypes...)+".")
	}}}
}

// --- flinkstate_iam_role ---

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

// --- flinkstate_pod_identity_association ---

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
