package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

// Extra inline and attached role policies show in the next plan, and apply
// removes them; the provider's own policy stays.
func TestAccIAMRole_extraPoliciesRemoved(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
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
