package provider

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/s3state"
)

// freezeAfterCreate is a loopback HTTP proxy in front of the test bed's
// AWS endpoint that forwards requests until S3 has answered the
// CreateBucket of one bucket (path style: PUT /<bucket> with no query),
// then holds every later request without answering, as an endpoint that
// froze in the middle of a create. release lets requests through again.
type freezeAfterCreate struct {
	URL     string
	bucket  string
	tripped atomic.Bool // CreateBucket was answered: freeze
	off     atomic.Bool // released: never freeze again
	done    chan struct{}
	once    sync.Once
	creates atomic.Int32
}

func newFreezeAfterCreate(t *testing.T, bucket string) *freezeAfterCreate {
	t.Helper()
	target, err := url.Parse(os.Getenv("AWS_ENDPOINT_URL"))
	if err != nil || target.Host == "" {
		t.Fatalf("proxy: AWS_ENDPOINT_URL %q is not a URL", os.Getenv("AWS_ENDPOINT_URL"))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy: %v", err)
	}
	p := &freezeAfterCreate{URL: "http://" + ln.Addr().String(), bucket: bucket, done: make(chan struct{})}
	rp := httputil.NewSingleHostReverseProxy(target)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.tripped.Load() && !p.off.Load() {
			select {
			case <-r.Context().Done():
			case <-p.done:
			}
			return
		}
		rp.ServeHTTP(w, r)
		if r.Method == http.MethodPut && r.URL.RawQuery == "" && strings.Trim(r.URL.Path, "/") == p.bucket {
			p.creates.Add(1)
			p.tripped.Store(true)
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		p.release()
		_ = srv.Close()
	})
	return p
}

func (p *freezeAfterCreate) release() {
	p.off.Store(true)
	p.once.Do(func() { close(p.done) })
}

func bucketThroughProxy(proxyURL, bucket, timeouts string) string {
	return fmt.Sprintf(`
provider "flinkstate" {
  aws {
    region                      = %q
    endpoint                    = %q
    s3_use_path_style           = true
    skip_credentials_validation = true
  }
}

resource "flinkstate_bucket" "test" {
  bucket = %q
  tags   = { app = "timeouts" }
  timeouts {
%s
  }
}
`, os.Getenv("AWS_REGION"), proxyURL, bucket, timeouts)
}

// An endpoint that freezes right after CreateBucket fails the create at
// timeouts.create (not the 5m default), naming the endpoint and the
// deadline; the bucket it made is in state (tainted), not an orphan: the
// next plan replaces it rather than creating another, and the apply then
// hardens the replacement.
func TestAccBucket_createTimeoutKeepsBucketTracked(t *testing.T) {
	skipUnlessAcc(t)
	bucket := randName("fs-tmo-")
	p := newFreezeAfterCreate(t, bucket)
	cfg := bucketThroughProxy(p.URL, bucket, `    create = "10s"`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBucketGone(t, bucket),
		Steps: []resource.TestStep{
			{
				Config:      cfg,
				ExpectError: errorRE("Configuring bucket "+bucket+" failed", "s3:PutPublicAccessBlock", "no answer from "+p.URL, "within 10s"),
			},
			{
				PreConfig: func() {
					p.release()
					if p.creates.Load() != 1 {
						t.Fatalf("CreateBucket answered %d times, want 1", p.creates.Load())
					}
					if err := s3state.FindBucket(context.Background(), testAWS(t).S3, bucket); err != nil {
						t.Fatalf("the half-configured bucket is not there: %v", err)
					}
				},
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flinkstate_bucket.test", plancheck.ResourceActionReplace),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkBucketHardened(t, bucket, false, map[string]string{"app": "timeouts"}),
					resource.TestCheckResourceAttr("flinkstate_bucket.test", "public_access_blocked", "true"),
				),
			},
		},
	})
}

// timeouts.read bounds refresh at plan: with the endpoint frozen, plan
// fails at its value (not the 30s default) and names the endpoint; once it
// answers again, nothing has changed.
func TestAccBucket_readTimeoutBoundsPlan(t *testing.T) {
	skipUnlessAcc(t)
	p := newFaultProxy(t)
	bucket := randName("fs-rtmo-")
	cfg := bucketThroughProxy(p.URL, bucket, `    read = "5s"`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBucketGone(t, bucket),
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig:   func() { p.set(frozen) },
				Config:      cfg,
				PlanOnly:    true,
				ExpectError: errorRE("Reading bucket "+bucket+" failed", "no answer from "+p.URL, "within 5s"),
			},
			{
				PreConfig: func() { p.set(passThrough) },
				Config:    cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
				Check: func(*terraform.State) error {
					return s3state.FindBucket(context.Background(), testAWS(t).S3, bucket)
				},
			},
		},
	})
}
