package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/s3state"
)

// The noncurrent-version rule of a versioned bucket removed outside
// Terraform shows in the next plan, and apply writes it back.
func TestAccBucket_noncurrentRuleRemovedDrift(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
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

// An expiration added inside the provider's own lifecycle rule, a 7-day
// expiry on the stores' parent prefix and a cross-account bucket-policy
// statement all show in the next plan, and apply removes them; a rule on
// an unrelated prefix stays.
func TestAccBucket_weakeningDriftRemoved(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	bucket := randName("fs-drift-")
	ctx, c := context.Background(), testAWS(t).S3
	cfg := storesConfig(bucket, true, false, true)
	on := s3types.ExpirationStatusEnabled
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBucketGone(t, bucket),
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig: func() {
					rules := []s3types.LifecycleRule{
						{ID: aws.String(s3state.AbortMultipartRuleID), Status: on, Filter: &s3types.LifecycleRuleFilter{Prefix: aws.String("")},
							AbortIncompleteMultipartUpload: &s3types.AbortIncompleteMultipartUpload{DaysAfterInitiation: aws.Int32(1)},
							Expiration:                     &s3types.LifecycleExpiration{Days: aws.Int32(30)}},
						{ID: aws.String("parent-7d"), Status: on, Filter: &s3types.LifecycleRuleFilter{Prefix: aws.String("flink/")},
							Expiration: &s3types.LifecycleExpiration{Days: aws.Int32(7)}},
					}
					if _, err := c.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{Bucket: aws.String(bucket),
						LifecycleConfiguration: &s3types.BucketLifecycleConfiguration{Rules: rules}}); err != nil {
						t.Fatal(err)
					}
					// The provider's policy plus a statement: valid JSON, which
					// S3 requires of a bucket policy (MalformedPolicy otherwise;
					// LocalStack checks it, kumo does not).
					arn := "arn:aws:s3:::" + bucket
					var doc map[string]any
					if err := json.Unmarshal([]byte(s3state.TLSPolicy("aws", bucket)), &doc); err != nil {
						t.Fatal(err)
					}
					stmts, _ := doc["Statement"].([]any)
					doc["Statement"] = append(stmts, map[string]any{"Sid": "CrossAccount", "Effect": "Allow",
						"Principal": map[string]any{"AWS": "arn:aws:iam::111122223333:root"}, "Action": "s3:*", "Resource": []string{arn, arn + "/*"}})
					policy, err := json.Marshal(doc)
					if err != nil {
						t.Fatal(err)
					}
					if _, err := c.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String(bucket), Policy: aws.String(string(policy))}); err != nil {
						t.Fatal(err)
					}
				},
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flinkstate_bucket.state", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("flinkstate_state_store.app1", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("flinkstate_state_store.app10", plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error {
					lc, err := c.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(bucket)})
					if err != nil {
						return err
					}
					for _, r := range lc.Rules {
						if s3state.ExpiresCurrent(r) {
							return fmt.Errorf("lifecycle rule %s still expires current objects", aws.ToString(r.ID))
						}
					}
					p, err := c.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: aws.String(bucket)})
					if err != nil {
						return err
					}
					if f := s3state.ForeignStatements(aws.ToString(p.Policy)); len(f) > 0 || !s3state.PolicyDeniesInsecureTransport(aws.ToString(p.Policy)) {
						return fmt.Errorf("bucket policy after apply: foreign %v, policy %s", f, aws.ToString(p.Policy))
					}
					return nil
				},
			},
			{
				Config:           cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}

// A bucket without default encryption (removed outside Terraform, or a
// create cut short before it was set) shows in the next plan, and apply sets
// it again.
func TestAccBucket_missingEncryptionRestored(t *testing.T) {
	skipUnlessAcc(t)
	bucket := randName("fs-enc-")
	ctx, c := context.Background(), testAWS(t).S3
	cfg := storesConfig(bucket, true, false, true)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBucketGone(t, bucket),
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig: func() {
					if _, err := c.DeleteBucketEncryption(ctx, &s3.DeleteBucketEncryptionInput{Bucket: aws.String(bucket)}); err != nil {
						t.Fatal(err)
					}
				},
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flinkstate_bucket.state", plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error {
					rules, err := s3state.FindEncryption(ctx, c, bucket)
					if err != nil || len(rules) == 0 {
						return fmt.Errorf("default encryption after apply: %v, %v", rules, err)
					}
					return nil
				},
			},
			{
				Config:           cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}
