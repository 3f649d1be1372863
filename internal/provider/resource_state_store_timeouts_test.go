package provider

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
)

func storeThroughProxy(proxyURL, bucket string, store bool, timeouts string) string {
	return awsProxyProvider(proxyURL) + fmt.Sprintf(`
resource "flinkstate_bucket" "state" {
  bucket = %q
}
`, bucket) + storeConfig("flinkstate_bucket.state.bucket", store, timeouts)
}

func awsProxyProvider(proxyURL string) string {
	return fmt.Sprintf(`
provider "flinkstate" {
  aws {
    region                      = %q
    endpoint                    = %q
    s3_use_path_style           = true
    skip_credentials_validation = true
  }
}
`, os.Getenv("AWS_REGION"), proxyURL)
}

func storeConfig(bucketExpr string, store bool, timeouts string) string {
	if !store {
		return ""
	}
	return fmt.Sprintf(`
resource "flinkstate_state_store" "orders" {
  bucket = %s
  prefix = "flink/orders"
  timeouts {
%s
  }
}
`, bucketExpr, timeouts)
}

// objectPut matches a path-style PutObject under bucket.
func objectPut(bucket string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, "/"+bucket+"/")
	}
}

// timeouts.create bounds every S3 call of the store's create: with the
// endpoint frozen at the ownership marker's PutObject, the apply fails at
// its value (not the 5m default), naming the endpoint; once S3 answers, the
// next apply creates the store.
func TestAccStateStore_createTimeout(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	p := newFreezeProxy(t)
	bucket := randName("fs-sctmo-")
	tmo := `    create = "5s"`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBucketGone(t, bucket),
		Steps: []resource.TestStep{
			{Config: storeThroughProxy(p.URL, bucket, false, tmo)},
			{
				PreConfig:   func() { p.arm(objectPut(bucket), false) },
				Config:      storeThroughProxy(p.URL, bucket, true, tmo),
				ExpectError: errorRE("Creating state store failed", "no answer from "+p.URL, "within 5s"),
			},
			{
				PreConfig: p.release,
				Config:    storeThroughProxy(p.URL, bucket, true, tmo),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flinkstate_state_store.orders", plancheck.ResourceActionCreate),
				}},
				Check: resource.TestCheckResourceAttr("flinkstate_state_store.orders", "id", bucket+"/flink/orders"),
			},
		},
	})
}

// timeouts.read bounds the store's refresh at plan: with the endpoint
// frozen, plan fails at its value and names the endpoint; once it answers
// again, nothing has changed.
func TestAccStateStore_readTimeoutBoundsPlan(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	p := newFaultProxy(t)
	// The bucket is made here, not by the configuration: a refresh of the
	// bucket would run first (the store depends on it) and fail at the
	// bucket's own read bound.
	bucket := randName("fs-srtmo-")
	ctx, c := context.Background(), testAWS(t).S3
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)}) })
	cfg := awsProxyProvider(p.URL) + storeConfig(fmt.Sprintf("%q", bucket), true, `    read = "5s"`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps:                    readTimeoutSteps(p, cfg, errorRE("Reading state store "+bucket+"/flink/orders failed", "no answer from "+p.URL, "within 5s")),
	})
}
