package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/s3state"
)

// An expiration added inside the provider's own lifecycle rule, a 7-day
// expiry on the stores' parent prefix and a cross-account bucket-policy
// statement all show in the next plan, and apply removes them; a rule on
// an unrelated prefix stays.
func TestAccBucket_weakeningDriftRemoved(t *testing.T) {
	skipUnlessAcc(t)
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
					arn := "arn:aws:s3:::" + bucket
					policy := strings.TrimSuffix(s3state.TLSPolicy("aws", bucket), "]}") + fmt.Sprintf(
						`,{"Sid":"CrossAccount","Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111122223333:root"},"Action":"s3:*","Resource":[%q,%q]}]}`, arn, arn+"/*")
					if _, err := c.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String(bucket), Policy: aws.String(policy)}); err != nil {
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

// Extra inline and attached role policies show in the next plan, and apply
// removes them; the provider's own policy stays.
func TestAccIAMRole_extraPoliciesRemoved(t *testing.T) {
	skipUnlessAcc(t)
	name := randName("flink-excl-")
	ctx, c := context.Background(), testAWS(t).IAM
	cfg := fmt.Sprintf(`
resource "flinkstate_iam_role" "r" {
  name            = %q
  state_store_ids = ["acme-flink-state/flink/orders"]
  pod_identity {
    namespace       = "data-processing"
    service_account = "flink"
  }
}
`, name)
	var managedARN string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig: func() {
					admin := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`
					if _, err := c.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: aws.String(name), PolicyName: aws.String("admin"), PolicyDocument: aws.String(admin)}); err != nil {
						t.Fatal(err)
					}
					p, err := c.CreatePolicy(ctx, &iam.CreatePolicyInput{PolicyName: aws.String(name + "-managed"), PolicyDocument: aws.String(admin)})
					if err != nil {
						t.Fatal(err)
					}
					managedARN = aws.ToString(p.Policy.Arn)
					t.Cleanup(func() { _, _ = c.DeletePolicy(ctx, &iam.DeletePolicyInput{PolicyArn: aws.String(managedARN)}) })
					if _, err := c.AttachRolePolicy(ctx, &iam.AttachRolePolicyInput{RoleName: aws.String(name), PolicyArn: aws.String(managedARN)}); err != nil {
						t.Fatal(err)
					}
				},
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flinkstate_iam_role.r", plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error {
					inl, err := c.ListRolePolicies(ctx, &iam.ListRolePoliciesInput{RoleName: aws.String(name)})
					if err != nil {
						return err
					}
					if len(inl.PolicyNames) != 1 || inl.PolicyNames[0] != inlinePolicyName {
						return fmt.Errorf("inline policies after apply: %v, want only %s", inl.PolicyNames, inlinePolicyName)
					}
					att, err := c.ListAttachedRolePolicies(ctx, &iam.ListAttachedRolePoliciesInput{RoleName: aws.String(name)})
					if err != nil {
						return err
					}
					if len(att.AttachedPolicies) != 0 {
						return fmt.Errorf("attached policies after apply: %v", att.AttachedPolicies)
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
