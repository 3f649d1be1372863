package provider

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/s3state"
)

// A bucket that exists already (here made outside Terraform, with an
// object in it) is not adopted: create fails with the import command, and
// the bucket and its object are untouched.
func TestAccBucket_createRefusesExisting(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
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
	// Every write the provider sends to the bucket besides its CreateBucket
	// (which answer200 takes): the losing apply must send none. What the
	// bucket holds cannot tell: S3 has given every new bucket all four Block
	// Public Access settings and SSE-S3 since April 2023 (AWS docs,
	// "Blocking public access to your Amazon S3 storage"), and so does
	// LocalStack (localstack/services/s3/models.py, S3Bucket), while kumo
	// gives none.
	var writesMu sync.Mutex
	var writes []string
	seen := 0 // requests about the bucket: the recorder saw the apply's traffic
	record := func(r *http.Request) {
		if strings.Split(strings.Trim(r.URL.Path, "/"), "/")[0] != bucket {
			return
		}
		writesMu.Lock()
		seen++
		writesMu.Unlock()
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			return
		}
		if r.Method == http.MethodPut && strings.Trim(r.URL.Path, "/") == bucket && r.URL.RawQuery == "" {
			return // the CreateBucket
		}
		if r.Method == http.MethodPut && strings.Trim(r.URL.Path, "/") == bucket+"/"+s3state.BucketMarkerKey && r.Header.Get("If-None-Match") == "*" {
			// The ownership marker, written only if absent (S3 conditional
			// writes, "Preventing object overwrites"): how the losing apply
			// learns the bucket is another's; it cannot overwrite.
			return
		}
		writesMu.Lock()
		defer writesMu.Unlock()
		writes = append(writes, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
	}
	p.before.Store(&record)
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
	writesMu.Lock()
	defer writesMu.Unlock()
	if seen == 0 {
		t.Errorf("no request about %s went through the proxy: the apply's writes were not observed", bucket)
	}
	if len(writes) > 0 {
		t.Errorf("the losing apply wrote to the other configuration's bucket: %v", writes)
	}
}
