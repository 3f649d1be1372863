package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/s3state"
)

// The noncurrent-version rule of a versioned bucket removed outside
// Terraform shows in the next plan, and apply writes it back.
func TestAccBucket_noncurrentRuleRemovedDrift(t *testing.T) {
	skipUnlessAcc(t)
	bucket := randName("fs-noncur-")
	ctx, c := context.Background(), testAWS(t).S3
	cfg := fmt.Sprintf(`
resource "flinkstate_bucket" "state" {
  bucket     = %q
  versioning = true
}
`, bucket)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBucketGone(t, bucket),
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig: func() {
					// Keep every other rule (the abort rule must not be what
					// the plan shows): drop only the noncurrent-version rule.
					rules, err := s3state.FindLifecycleRules(ctx, c, bucket)
					if err != nil {
						t.Fatal(err)
					}
					var kept []s3types.LifecycleRule
					for _, r := range rules {
						if aws.ToString(r.ID) != s3state.NoncurrentVersionsRuleID {
							kept = append(kept, r)
						}
					}
					if len(kept) == len(rules) || len(kept) == 0 {
						t.Fatalf("bucket %s: want the provider's abort and noncurrent rules, got %d rules", bucket, len(rules))
					}
					if _, err := c.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{Bucket: aws.String(bucket),
						LifecycleConfiguration: &s3types.BucketLifecycleConfiguration{Rules: kept}}); err != nil {
						t.Fatal(err)
					}
				},
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flinkstate_bucket.state", plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("flinkstate_bucket.state", tfjsonpath.New("noncurrent_version_expiration_days"), knownvalue.Int64Exact(30)),
					bucketHasNoncurrentRule(t, bucket),
				},
			},
		},
	})
}

type noncurrentRuleCheck struct {
	t      *testing.T
	bucket string
}

func bucketHasNoncurrentRule(t *testing.T, bucket string) statecheck.StateCheck {
	return noncurrentRuleCheck{t, bucket}
}

func (c noncurrentRuleCheck) CheckState(ctx context.Context, _ statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	rules, err := s3state.FindLifecycleRules(ctx, testAWS(c.t).S3, c.bucket)
	if err != nil {
		resp.Error = err
		return
	}
	if _, days, ok := s3state.OwnLifecycle(rules); !ok || days != 30 {
		resp.Error = fmt.Errorf("bucket %s: noncurrent-version rule present=%v days=%d, want 30", c.bucket, ok, days)
	}
}
