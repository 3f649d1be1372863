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

	"github.com/flinkstate/terraform-provider-flinkstate/internal/s3state"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

// awsThroughProxy is a bucket, a store and a role, with the provider
// reaching AWS through the fault proxy (and skipping the STS check, so that
// the reads themselves meet the fault).
func awsThroughProxy(t *testing.T, proxyURL, bucket, role string) string {
	return awsProxyProvider(proxyURL) + fmt.Sprintf(`
resource "flinkstate_bucket" "state" {
  bucket        = %q
  force_destroy = true
}

resource "flinkstate_state_store" "orders" {
  bucket = flinkstate_bucket.state.bucket
  prefix = "flink/orders"
}

resource "flinkstate_iam_role" "r" {
  name            = %q
  state_store_ids = [flinkstate_state_store.orders.id]
  irsa {
    oidc_provider_arn = %q
    namespace         = "data-processing"
    service_account   = "flink"
  }
}
`, bucket, role, testOIDCProvider(t))
}

// checkAWSKept asserts, through a client that does not pass the proxy, that
// the bucket, the store's marker and the role with its policy are all there.
func checkAWSKept(t *testing.T, bucket, role string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx, c := context.Background(), testAWS(t)
		if err := s3state.FindBucket(ctx, c.S3, bucket); err != nil {
			return fmt.Errorf("bucket: %w", err)
		}
		if m, err := s3state.ReadMarker(ctx, c.S3, store.Store{Bucket: bucket, Prefix: "flink/orders"}); err != nil || m == nil {
			return fmt.Errorf("store marker: %v %v", m, err)
		}
		if _, err := c.IAM.GetRolePolicy(ctx, &iam.GetRolePolicyInput{RoleName: aws.String(role), PolicyName: aws.String(inlinePolicyName)}); err != nil {
			return fmt.Errorf("role policy: %w", err)
		}
		return nil
	}
}

// An endpoint answering 404 to everything is a fault, not "all gone":
// refresh fails, and the next plan through a healthy endpoint is empty
// (nothing was dropped from state, nothing is recreated).
func TestAccAWS_notFoundEverywhereKeepsState(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	p := newFaultProxy(t)
	bucket, role := randName("fs-404-"), randName("flink-404-")
	cfg := awsThroughProxy(t, p.URL, bucket, role)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBucketGone(t, bucket),
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig:    func() { p.set(notFound) },
				RefreshState: true,
				ExpectError:  errorRE("Reading"),
			},
			{
				PreConfig: func() { p.set(passThrough) },
				Config:    cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
				Check: checkAWSKept(t, bucket, role),
			},
		},
	})
}

// A frozen endpoint fails plan in bounded time (the read bound), with a
// message naming the endpoint; nothing is lost.
func TestAccAWS_frozenEndpointFailsPlan(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	p := newFaultProxy(t)
	bucket, role := randName("fs-frz-"), randName("flink-frz-")
	cfg := awsThroughProxy(t, p.URL, bucket, role)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBucketGone(t, bucket),
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig:   func() { p.set(frozen) },
				Config:      cfg,
				PlanOnly:    true,
				ExpectError: errorRE("no answer from "+p.URL, "within "+awsReadBound.String()),
			},
			{
				PreConfig: func() { p.set(passThrough) },
				Config:    cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
				Check: checkAWSKept(t, bucket, role),
			},
		},
	})
}
