package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

// A role that exists already is not adopted: create fails with the import
// command and the role keeps its policies.
func TestAccIAMRole_createRefusesExisting(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	name := randName("flink-exist-")
	ctx, c := context.Background(), testAWS(t).IAM
	trust := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`
	if _, err := c.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String(name), AssumeRolePolicyDocument: aws.String(trust)}); err != nil {
		t.Fatal(err)
	}
	other := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::other/*"}]}`
	if _, err := c.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: aws.String(name), PolicyName: aws.String("theirs"), PolicyDocument: aws.String(other)}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = c.DeleteRolePolicy(ctx, &iam.DeleteRolePolicyInput{RoleName: aws.String(name), PolicyName: aws.String("theirs")})
		_, _ = c.DeleteRole(ctx, &iam.DeleteRoleInput{RoleName: aws.String(name)})
	})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
resource "flinkstate_iam_role" "r" {
  name            = %q
  state_store_ids = ["acme-flink-state/flink/orders"]
  pod_identity {
    namespace       = "data-processing"
    service_account = "flink"
  }
}
`, name),
			ExpectError: errorRE("IAM role already exists", "terraform import ADDRESS "+name),
		}},
		CheckDestroy: func(*terraform.State) error {
			got, err := c.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(name)})
			if err != nil {
				return fmt.Errorf("the existing role is gone: %w", err)
			}
			if _, err := c.GetRolePolicy(ctx, &iam.GetRolePolicyInput{RoleName: aws.String(name), PolicyName: aws.String("theirs")}); err != nil {
				return fmt.Errorf("the existing role lost its policy: %w", err)
			}
			if _, err := c.GetRolePolicy(ctx, &iam.GetRolePolicyInput{RoleName: aws.String(name), PolicyName: aws.String(inlinePolicyName)}); err == nil {
				return fmt.Errorf("the provider wrote its policy into the existing role %s", aws.ToString(got.Role.Arn))
			}
			return nil
		},
	})
}

// The role's timeouts.read bounds refresh at plan: with the endpoint
// frozen, plan fails at its value (not the 30s default) naming the role
// and the endpoint; once it answers again, nothing has changed.
func TestAccIAMRole_readTimeoutBoundsPlan(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	p := newFaultProxy(t)
	f := newRoleFixture(t)
	cfg := awsProxyProvider(p.URL) + iamRoleConfig(f.name, f.irsa, f.oneHCL, `  timeouts {
    read = "5s"
  }`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             f.checkDestroy(t),
		Steps: readTimeoutSteps(p, cfg, errorRE("Reading IAM role "+f.name+" failed", "no answer from "+p.URL, "within 5s"),
			expectRoleDocuments(t, f.name, f.irsaTrust, f.one)),
	})
}
