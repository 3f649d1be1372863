package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/s3state"
)

func bucketConfig(name, extra string) string {
	return fmt.Sprintf(`
resource "flinkstate_bucket" "test" {
  bucket = %q
%s
}
`, name, extra)
}

// expectBucketHardened reads the bucket's settings from S3 itself.
func expectBucketHardened(t *testing.T, name string, wantVersioning bool, wantTags map[string]string) statecheck.StateCheck {
	return expectAPI(bucketHardened(t, name, wantVersioning, wantTags))
}

// checkBucketHardened is the same check for a step's legacy Check field
// (resource_bucket_timeouts_test.go still uses one).
func checkBucketHardened(t *testing.T, name string, wantVersioning bool, wantTags map[string]string) resource.TestCheckFunc {
	check := bucketHardened(t, name, wantVersioning, wantTags)
	return func(*terraform.State) error { return check() }
}

func bucketHardened(t *testing.T, name string, wantVersioning bool, wantTags map[string]string) func() error {
	return func() error {
		ctx, c := context.Background(), testAWS(t).S3
		b := aws.String(name)
		pab, err := c.GetPublicAccessBlock(ctx, &s3.GetPublicAccessBlockInput{Bucket: b})
		if err != nil {
			return fmt.Errorf("GetPublicAccessBlock: %w", err)
		}
		p := pab.PublicAccessBlockConfiguration
		if !aws.ToBool(p.BlockPublicAcls) || !aws.ToBool(p.BlockPublicPolicy) || !aws.ToBool(p.IgnorePublicAcls) || !aws.ToBool(p.RestrictPublicBuckets) {
			return fmt.Errorf("public access block not fully on: %+v", p)
		}
		enc, err := c.GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: b})
		if err != nil {
			return fmt.Errorf("GetBucketEncryption: %w", err)
		}
		if alg := enc.ServerSideEncryptionConfiguration.Rules[0].ApplyServerSideEncryptionByDefault.SSEAlgorithm; alg != s3types.ServerSideEncryptionAes256 {
			return fmt.Errorf("default encryption %q, want AES256", alg)
		}
		lc, err := c.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: b})
		if err != nil {
			return fmt.Errorf("GetBucketLifecycleConfiguration: %w", err)
		}
		var abort, noncurrent bool
		for _, r := range lc.Rules {
			if r.Expiration != nil {
				return fmt.Errorf("lifecycle rule %s expires current objects: live checkpoints would lose shared files", aws.ToString(r.ID))
			}
			if r.AbortIncompleteMultipartUpload != nil && aws.ToInt32(r.AbortIncompleteMultipartUpload.DaysAfterInitiation) == 1 {
				abort = true
			}
			if r.NoncurrentVersionExpiration != nil {
				noncurrent = true
			}
		}
		if !abort {
			return fmt.Errorf("no rule aborting incomplete multipart uploads after 1 day: %+v", lc.Rules)
		}
		if noncurrent != wantVersioning {
			return fmt.Errorf("noncurrent version expiration rule present=%v, want %v", noncurrent, wantVersioning)
		}
		pol, err := c.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: b})
		if err != nil {
			return fmt.Errorf("GetBucketPolicy: %w", err)
		}
		if !s3state.PolicyDeniesInsecureTransport(aws.ToString(pol.Policy)) || !strings.Contains(aws.ToString(pol.Policy), `"aws:SecureTransport":"false"`) {
			return fmt.Errorf("bucket policy does not deny insecure transport: %s", aws.ToString(pol.Policy))
		}
		ver, err := c.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: b})
		if err != nil {
			return fmt.Errorf("GetBucketVersioning: %w", err)
		}
		if (ver.Status == s3types.BucketVersioningStatusEnabled) != wantVersioning {
			return fmt.Errorf("versioning status %q, want enabled=%v", ver.Status, wantVersioning)
		}
		tags, err := c.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: b})
		if err != nil {
			return fmt.Errorf("GetBucketTagging: %w", err)
		}
		got := map[string]string{}
		for _, tg := range tags.TagSet {
			got[aws.ToString(tg.Key)] = aws.ToString(tg.Value)
		}
		if fmt.Sprint(got) != fmt.Sprint(wantTags) {
			return fmt.Errorf("tags %v, want %v", got, wantTags)
		}
		return nil
	}
}

func checkBucketGone(t *testing.T, name string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		_, err := testAWS(t).S3.HeadBucket(context.Background(), &s3.HeadBucketInput{Bucket: aws.String(name)})
		if !isNotFound(err) {
			return fmt.Errorf("bucket %s still exists (HeadBucket: %v)", name, err)
		}
		return nil
	}
}

const bucketAddr = "flinkstate_bucket.test"

// The configuration the update, drift and destroy tests start from:
// versioning on (so the noncurrent-version rule is checked too).
const bucketVersioned = `  tags = { team = "streaming" }
  versioning = true`

func bucketPlanAction(action plancheck.ResourceActionType) resource.ConfigPlanChecks {
	return resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(bucketAddr, action)}}
}

func TestAccBucket_basic(t *testing.T) {
	skipUnlessAcc(t)
	name := randName("fs-bucket-")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBucketGone(t, name),
		Steps: []resource.TestStep{{
			Config: bucketConfig(name, `  tags = { team = "data" }`),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(bucketAddr, tfjsonPath("id"), knownvalue.StringExact(name)),
				statecheck.ExpectKnownValue(bucketAddr, tfjsonPath("arn"), knownvalue.StringExact("arn:aws:s3:::"+name)),
				statecheck.ExpectKnownValue(bucketAddr, tfjsonPath("enforce_tls"), knownvalue.Bool(true)),
				statecheck.ExpectKnownValue(bucketAddr, tfjsonPath("abort_incomplete_multipart_days"), knownvalue.Int64Exact(1)),
				statecheck.ExpectKnownValue(bucketAddr, tfjsonPath("force_destroy"), knownvalue.Bool(false)),
				expectBucketHardened(t, name, false, map[string]string{"team": "data"}),
			},
		}},
	})
}

func TestAccBucket_import(t *testing.T) {
	skipUnlessAcc(t)
	name := randName("fs-bucket-")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBucketGone(t, name),
		Steps: []resource.TestStep{
			{Config: bucketConfig(name, `  tags = { team = "data" }`)},
			{
				ResourceName:            bucketAddr,
				ImportState:             true,
				ImportStateId:           exampleImportID(t, "flinkstate_bucket", "acme-flink-state", name),
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"force_destroy"},
			},
		},
	})
}

// Versioning on and tags changed: in place.
func TestAccBucket_update(t *testing.T) {
	skipUnlessAcc(t)
	name := randName("fs-bucket-")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBucketGone(t, name),
		Steps: []resource.TestStep{
			{Config: bucketConfig(name, `  tags = { team = "data" }`)},
			{
				Config:            bucketConfig(name, bucketVersioned),
				ConfigPlanChecks:  bucketPlanAction(plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{expectBucketHardened(t, name, true, map[string]string{"team": "streaming"})},
			},
		},
	})
}

// The TLS policy deleted out of band is planned back and restored.
func TestAccBucket_driftPolicyDeleted(t *testing.T) {
	skipUnlessAcc(t)
	name := randName("fs-bucket-")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBucketGone(t, name),
		Steps: []resource.TestStep{
			{Config: bucketConfig(name, bucketVersioned)},
			{
				PreConfig: func() {
					if _, err := testAWS(t).S3.DeleteBucketPolicy(context.Background(), &s3.DeleteBucketPolicyInput{Bucket: aws.String(name)}); err != nil {
						t.Fatalf("deleting policy out of band: %v", err)
					}
				},
				Config:            bucketConfig(name, bucketVersioned),
				ConfigPlanChecks:  bucketPlanAction(plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{expectBucketHardened(t, name, true, map[string]string{"team": "streaming"})},
			},
		},
	})
}

// Block Public Access turned off out of band: planned back and restored.
func TestAccBucket_driftPublicAccessBlockDeleted(t *testing.T) {
	skipUnlessAcc(t)
	name := randName("fs-bucket-")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBucketGone(t, name),
		Steps: []resource.TestStep{
			{Config: bucketConfig(name, bucketVersioned)},
			{
				PreConfig: func() {
					if _, err := testAWS(t).S3.DeletePublicAccessBlock(context.Background(), &s3.DeletePublicAccessBlockInput{Bucket: aws.String(name)}); err != nil {
						t.Fatalf("deleting the public access block out of band: %v", err)
					}
				},
				Config:           bucketConfig(name, bucketVersioned),
				ConfigPlanChecks: bucketPlanAction(plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(bucketAddr, tfjsonPath("public_access_blocked"), knownvalue.Bool(true)),
					expectBucketHardened(t, name, true, map[string]string{"team": "streaming"}),
				},
			},
		},
	})
}

// Deleted out of band: the next plan creates it again, hardened.
func TestAccBucket_disappears(t *testing.T) {
	skipUnlessAcc(t)
	name := randName("fs-bucket-")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBucketGone(t, name),
		Steps: []resource.TestStep{
			{Config: bucketConfig(name, bucketVersioned)},
			{
				PreConfig: func() {
					// Emptied first (its ownership marker), as S3 deletes only empty buckets.
					if _, err := s3state.DeleteAll(context.Background(), testAWS(t).S3, name, "", nil); err != nil {
						t.Fatalf("emptying bucket out of band: %v", err)
					}
					if _, err := testAWS(t).S3.DeleteBucket(context.Background(), &s3.DeleteBucketInput{Bucket: aws.String(name)}); err != nil {
						t.Fatalf("deleting bucket out of band: %v", err)
					}
				},
				Config:            bucketConfig(name, bucketVersioned),
				ConfigPlanChecks:  bucketPlanAction(plancheck.ResourceActionCreate),
				ConfigStateChecks: []statecheck.StateCheck{expectBucketHardened(t, name, true, map[string]string{"team": "streaming"})},
			},
		},
	})
}

// Not empty and no force_destroy: destroy refuses, deletes nothing, says
// what it found; force_destroy = true is then an in-place change, and the
// final destroy empties and deletes the (versioned) bucket.
func TestAccBucket_destroyRefusedWhenNotEmpty(t *testing.T) {
	skipUnlessAcc(t)
	name := randName("fs-bucket-")
	ctx := context.Background()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBucketGone(t, name),
		Steps: []resource.TestStep{
			{Config: bucketConfig(name, bucketVersioned)},
			{
				PreConfig: func() {
					for _, k := range []string{"flink/orders/checkpoints/job/chk-1/_metadata", "flink/orders/checkpoints/job/shared/f1"} {
						if _, err := testAWS(t).S3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(name), Key: aws.String(k), Body: strings.NewReader("x")}); err != nil {
							t.Fatalf("PutObject: %v", err)
						}
					}
				},
				Config:      bucketConfig(name, bucketVersioned),
				Destroy:     true,
				ExpectError: errorRE("Bucket is not empty", "holds 2 objects", "Nothing was deleted", "force_destroy = true"),
			},
			{
				Config: bucketConfig(name, bucketVersioned),
				ConfigStateChecks: []statecheck.StateCheck{expectAPI(func() error {
					n, _, err := s3state.Contents(ctx, testAWS(t).S3, name, "", 1000)
					if err != nil || n != 2 {
						return fmt.Errorf("after the refused destroy the bucket holds %d objects (%v), want the 2 it had", n, err)
					}
					return nil
				})},
			},
			{
				Config:           bucketConfig(name, bucketVersioned+"\n  force_destroy = true"),
				ConfigPlanChecks: bucketPlanAction(plancheck.ResourceActionUpdate),
			},
		},
	})
}

func TestBucket_invalidInput(t *testing.T) {
	t.Parallel()
	cases := map[string]struct{ extra, name, want string }{
		"uppercase":       {name: "Flink-State", want: `(?s)Invalid bucket name.*bucket`},
		"too short":       {name: "ab", want: `(?s)bucket.*3 to 63 characters`},
		"ip address":      {name: "192.168.1.1", want: `(?s)bucket.*IP address`},
		"adjacent dots":   {name: "flink..state", want: `(?s)bucket.*adjacent periods`},
		"reserved prefix": {name: "xn--flink", want: `(?s)bucket.*reserved prefixes`},
		"kms not an arn":  {name: "flink-state", extra: `  kms_key_arn = "alias/flink"`, want: `(?s)kms_key_arn.*KMS key`},
		"abort days 0":    {name: "flink-state", extra: `  abort_incomplete_multipart_days = 0`, want: `(?s)abort_incomplete_multipart_days.*between 1 and 365`},
	}
	for label, tc := range cases {
		t.Run(label, func(t *testing.T) {
			t.Parallel()
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testProviderFactories,
				Steps: []resource.TestStep{{
					Config:      bucketConfig(tc.name, tc.extra),
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(tc.want),
				}},
			})
		})
	}
}

// SSE-KMS with an S3 bucket key when kms_key_arn is set, and back to SSE-S3 without.
func TestAccBucket_kms(t *testing.T) {
	skipUnlessAcc(t)
	ctx := context.Background()
	key, err := kms.NewFromConfig(testAWS(t).Config).CreateKey(ctx, &kms.CreateKeyInput{Description: aws.String("flinkstate bucket test")})
	if err != nil {
		t.Fatalf("creating a KMS key: %v", err)
	}
	keyARN := aws.ToString(key.KeyMetadata.Arn)
	name := randName("fs-kms-")
	expectEncryption := func(wantKMS bool) statecheck.StateCheck {
		return expectAPI(func() error {
			enc, err := testAWS(t).S3.GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: aws.String(name)})
			if err != nil {
				return err
			}
			rule := enc.ServerSideEncryptionConfiguration.Rules[0]
			d := rule.ApplyServerSideEncryptionByDefault
			if wantKMS && (d.SSEAlgorithm != s3types.ServerSideEncryptionAwsKms || aws.ToString(d.KMSMasterKeyID) != keyARN || !aws.ToBool(rule.BucketKeyEnabled)) {
				return fmt.Errorf("want SSE-KMS with %s and a bucket key, got %s %s bucketKey=%v", keyARN, d.SSEAlgorithm, aws.ToString(d.KMSMasterKeyID), aws.ToBool(rule.BucketKeyEnabled))
			}
			if !wantKMS && d.SSEAlgorithm != s3types.ServerSideEncryptionAes256 {
				return fmt.Errorf("want SSE-S3 (AES256), got %s", d.SSEAlgorithm)
			}
			return nil
		})
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBucketGone(t, name),
		Steps: []resource.TestStep{
			{
				Config: bucketConfig(name, fmt.Sprintf("  kms_key_arn = %q", keyARN)),
				ConfigStateChecks: []statecheck.StateCheck{
					expectEncryption(true),
					statecheck.ExpectKnownValue(bucketAddr, tfjsonPath("kms_key_arn"), knownvalue.StringExact(keyARN)),
				},
			},
			{
				Config:            bucketConfig(name, ""),
				ConfigPlanChecks:  bucketPlanAction(plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{expectEncryption(false)},
			},
		},
	})
}
