package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/iampolicy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

// bucketPlanChecks: a KMS key of another region than the bucket's cannot
// encrypt it (S3 User Guide, "Specifying server-side encryption with AWS
// KMS": the key must be in the same Region as the bucket), enforce_tls =
// false lets requests reach the state over plain HTTP, and a new bucket
// whose name has dots needs path-style access from Flink
// (store.WildcardCertMatches, flinkconf.NeedsPathStyle).
func (r *bucketResource) bucketPlanChecks(ctx context.Context, req resource.ModifyPlanRequest, diags *diag.Diagnostics) {
	var kms types.String
	var tls types.Bool
	diags.Append(req.Plan.GetAttribute(ctx, path.Root("kms_key_arn"), &kms)...)
	diags.Append(req.Plan.GetAttribute(ctx, path.Root("enforce_tls"), &tls)...)
	if !tls.IsNull() && !tls.IsUnknown() && !tls.ValueBool() {
		diags.AddAttributeWarning(path.Root("enforce_tls"), "TLS not enforced",
			"enforce_tls = false removes the bucket policy that denies requests not made over TLS: checkpoints and savepoints could "+
				"then be read or written over plain HTTP. Keep enforce_tls = true unless a client truly cannot use TLS.")
	}
	var bucket types.String
	diags.Append(req.Plan.GetAttribute(ctx, path.Root("bucket"), &bucket)...)
	if req.State.Raw.IsNull() && known(bucket) {
		if b := bucket.ValueString(); !store.WildcardCertMatches(b) {
			diags.AddAttributeWarning(path.Root("bucket"), "Bucket name with dots", fmt.Sprintf(dottedBucketDetail, b, b))
		}
	}
	if !known(kms) {
		return
	}
	before := diags.ErrorsCount()
	r.meta.checkARNPartitions(ctx, []arnAt{{path.Root("kms_key_arn"), "kms_key_arn", kms}}, diags)
	if diags.ErrorsCount() > before {
		return
	}
	key, err := iampolicy.ParseKMSARN(kms.ValueString())
	if region := r.meta.providerRegion(ctx); err == nil && region != "" && key.Region != region {
		diags.AddAttributeError(path.Root("kms_key_arn"), "KMS key in another region", fmt.Sprintf(
			"kms_key_arn is a key in %s, but the bucket is created in %s (the provider's region): S3 default encryption needs a key of "+
				"the bucket's region. Use a key (or a multi-Region replica) in %s.", key.Region, region, region))
	}
}

// dottedBucketDetail warns of a bucket for Flink state whose name has dots
// (the bucket, twice).
const dottedBucketDetail = "The bucket %q has dots in its name: S3's TLS certificate *.s3.REGION.amazonaws.com does not match " +
	"%s.s3.REGION.amazonaws.com, the virtual-hosted-style host Flink's S3 file system (Hadoop S3A) uses by default (S3 User Guide, " +
	"\"Virtual hosting of general purpose buckets\"). Every flinkstate_deployment storing state here must set " +
	"flink_configuration[\"fs.s3a.path.style.access\"] = \"true\", which its plan requires. A bucket name without dots needs nothing."
