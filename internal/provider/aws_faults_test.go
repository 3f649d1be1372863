package provider

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/s3"
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

// A bucket that exists already (here made outside Terraform, with an
// object in it) is not adopted: create fails with the import command, and
// the bucket and its object are untouched.
func TestAccBucket_createRefusesExisting(t *testing.T) {
	skipUnlessAcc(t)
	bucket := randName("fs-exist-")
	ctx, c := context.Background(), testAWS(t).S3
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	putObjects(t, bucket, []string{"flink/other/checkpoints/x"})
	t.Cleanup(func() {
		_, _ = s3state.DeleteAll(ctx, c, bucket, "", nil)
		_, _ = c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)})
	})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config:      bucketConfig(bucket, "  force_destroy = true"),
			ExpectError: errorRE("Bucket already exists", "terraform import ADDRESS "+bucket),
			Check:       nil,
		}, {
			// Nothing was adopted: the next plan still wants to create it,
			// and the other owner's object is there.
			Config:             bucketConfig(bucket, "  force_destroy = true"),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
			Check: func(*terraform.State) error {
				if n := countUnder(t, bucket, "flink/other/"); n != 1 {
					return fmt.Errorf("the existing bucket's object is gone (%d)", n)
				}
				return nil
			},
		}},
	})
}

// A role that exists already is not adopted: create fails with the import
// command and the role keeps its policies.
func TestAccIAMRole_createRefusesExisting(t *testing.T) {
	skipUnlessAcc(t)
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

// Two applies create the same bucket at once. The other one wins: between
// this apply's look and its CreateBucket, the bucket appears with the other
// configuration's ownership marker and checkpoints, and CreateBucket answers
// 200 as S3 does in us-east-1 for a bucket the account already owns
// (BucketAlreadyOwnedByYou, "for legacy compatibility"; simulated here, the
// emulator answers 409). The ownership marker's conditional write tells this
// apply it lost: it refuses, records nothing, and the other bucket keeps its
// hardening, marker and checkpoints.
func TestAccBucket_concurrentCreateNeverAdopts(t *testing.T) {
	skipUnlessAcc(t)
	bucket := randName("fs-race-")
	ctx, c := context.Background(), testAWS(t).S3
	const checkpoint = "flink/orders/checkpoints/9f3c2a8d7e6b5a4c3d2e1f0a9b8c7d6e/chk-1/_metadata"
	t.Cleanup(func() {
		_, _ = s3state.DeleteAll(ctx, c, bucket, "", nil)
		_, _ = c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)})
	})
	p := newFaultProxy(t)
	var once sync.Once
	answer200 := func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodPut || strings.Trim(r.URL.Path, "/") != bucket || r.URL.RawQuery != "" {
			return false
		}
		once.Do(func() {
			if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
				t.Errorf("the other apply's bucket: %v", err)
			}
			if err := s3state.WriteBucketMarker(ctx, c, bucket, "the-other-apply", "test"); err != nil {
				t.Errorf("the other apply's marker: %v", err)
			}
			if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(checkpoint), Body: strings.NewReader("state")}); err != nil {
				t.Errorf("the other apply's checkpoint: %v", err)
			}
		})
		w.WriteHeader(http.StatusOK)
		return true
	}
	p.intercept.Store(&answer200)
	cfg := awsProxyProvider(p.URL) + fmt.Sprintf(`
resource "flinkstate_bucket" "state" {
  bucket        = %q
  force_destroy = true
}
`, bucket)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config:      cfg,
			ExpectError: errorRE("Bucket already exists", "created by another configuration at the same time"),
		}},
	})
	if m, err := s3state.ReadBucketMarker(ctx, c, bucket); err != nil || m == nil || m.Owner != "the-other-apply" {
		t.Errorf("the other bucket's marker: %+v, %v", m, err)
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(checkpoint)}); err != nil {
		t.Errorf("the other bucket's checkpoint: %v", err)
	}
	if _, err := c.GetPublicAccessBlock(ctx, &s3.GetPublicAccessBlockInput{Bucket: aws.String(bucket)}); err == nil {
		t.Errorf("the losing apply wrote the other bucket's hardening")
	}
}
