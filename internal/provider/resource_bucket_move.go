package provider

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

var _ resource.ResourceWithMoveState = (*bucketResource)(nil)

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
