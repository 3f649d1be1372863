package provider

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/s3state"
)

// The checks of flinkstate_bucket_replication. The buckets' versioning is
// another resource's (or made outside Terraform), so a plan cannot see it:
// it is checked at apply, before anything is created or written.

// checkReplicationAtApply refuses, before any change, a source or destination
// bucket without versioning Enabled (S3 User Guide, "Requirements and
// considerations for replication"), naming the attribute; it returns the
// destination's region.
func checkReplicationAtApply(ctx context.Context, c *s3.Client, m *bucketReplicationModel, diags *diag.Diagnostics) string {
	src, dst := m.Bucket.ValueString(), m.DestinationBucket.ValueString()
	region, err := s3state.BucketRegion(ctx, c, dst)
	if err != nil {
		if notfound.Is(err) {
			diags.AddAttributeError(path.Root("destination_bucket"), "Destination bucket not found",
				fmt.Sprintf("Bucket %s does not exist. Create it first (a flinkstate_bucket with versioning = true, through a provider alias in the destination region), and reference its bucket attribute here.", dst))
			return ""
		}
		addProblem(diags, "Reading the region of", "bucket "+dst, awsErr(ctx, err), "")
		return ""
	}
	if on, ok := versioningOn(ctx, c, src, "", diags); ok && !on {
		diags.AddAttributeError(path.Root("bucket"), "Versioning is not enabled on the source bucket",
			fmt.Sprintf("S3 replication needs versioning enabled on the source and on the destination bucket, and the source %s has it off or suspended. Set versioning = true on its flinkstate_bucket and apply; nothing was changed.", src))
	}
	if on, ok := versioningOn(ctx, c, dst, region, diags); ok && !on {
		diags.AddAttributeError(path.Root("destination_bucket"), "Versioning is not enabled on the destination bucket",
			fmt.Sprintf("S3 replication needs versioning enabled on the source and on the destination bucket, and the destination %s has it off or suspended. Set versioning = true on its flinkstate_bucket and apply; nothing was changed.", dst))
	}
	return region
}

// versioningOn reads a bucket's versioning; ok is false when the read
// failed (the diagnostic says why).
func versioningOn(ctx context.Context, c *s3.Client, bucket, region string, diags *diag.Diagnostics) (on, ok bool) {
	on, err := s3state.VersioningEnabled(ctx, c, bucket, region)
	if err != nil {
		addProblem(diags, "Reading the versioning of", "bucket "+bucket, awsErr(ctx, err), "")
		return false, false
	}
	return on, true
}
