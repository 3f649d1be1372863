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

// freezeProxy is a loopback HTTP proxy in front of the test bed's AWS
// endpoint (path-style S3) that forwards requests until one matches the
// armed predicate, and from then on holds every request without answering,
// as an endpoint that froze in the middle of an operation. With after, the
// matching request itself is still answered. release lets requests through
// again and disarms.
type freezeProxy struct {
	URL    string
	mu     sync.Mutex
	match  func(*http.Request) bool
	after  bool
	done   chan struct{}
	frozen atomic.Bool
	hits   atomic.Int32 // matching requests seen
}

func newFreezeProxy(t *testing.T) *freezeProxy {
	t.Helper()
	target, err := url.Parse(os.Getenv("AWS_ENDPOINT_URL"))
	if err != nil || target.Host == "" {
		t.Fatalf("proxy: AWS_ENDPOINT_URL %q is not a URL", os.Getenv("AWS_ENDPOINT_URL"))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy: %v", err)
	}
	p := &freezeProxy{URL: "http://" + ln.Addr().String(), done: make(chan struct{})}
	rp := httputil.NewSingleHostReverseProxy(target)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		match, after, done := p.match, p.after, p.done
		p.mu.Unlock()
		hold := func() {
			select {
			case <-r.Context().Done():
			case <-done:
			}
		}
		if p.frozen.Load() {
			hold()
			return
		}
		hit := match != nil && match(r)
		if hit {
			p.hits.Add(1)
			if !after {
				p.frozen.Store(true)
				hold()
				return
			}
		}
		rp.ServeHTTP(w, r)
		if hit {
			p.frozen.Store(true)
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		p.release()
		_ = srv.Close()
	})
	return p
}

// arm freezes the endpoint at the first request match accepts (after it
// is answered, with after).
func (p *freezeProxy) arm(match func(*http.Request) bool, after bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.match, p.after = match, after
	p.hits.Store(0)
}

func (p *freezeProxy) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.match = nil
	p.frozen.Store(false)
	close(p.done)
	p.done = make(chan struct{})
}

// s3Call matches a path-style S3 request on bucket: method, and the
// sub-resource query key ("" for the bucket itself, e.g. CreateBucket,
// DeleteBucket).
func s3Call(method, bucket, subresource string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		if r.Method != method || strings.Trim(r.URL.Path, "/") != bucket {
			return false
		}
		if subresource == "" {
			return r.URL.RawQuery == ""
		}
		return r.URL.Query().Has(subresource)
	}
}

func bucketThroughProxy(proxyURL, bucket, tag, timeouts string) string {
	if tag == "" {
		tag = "timeouts"
	}
	return awsProxyProvider(proxyURL) + fmt.Sprintf(`
resource "flinkstate_bucket" "test" {
  bucket = %q
  tags   = { app = %q }
  timeouts {
%s
  }
}
`, bucket, tag, timeouts)
}

// An endpoint that freezes right after CreateBucket fails the create at
// timeouts.create (not the 5m default), naming the endpoint and the
// deadline; the bucket it made is in state (tainted), not an orphan: the
// next plan replaces it rather than creating another, and the apply then
// hardens the replacement.
func TestAccBucket_createTimeoutKeepsBucketTracked(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	bucket := randName("fs-tmo-")
	p := newFreezeProxy(t)
	p.arm(s3Call(http.MethodPut, bucket, ""), true) // CreateBucket answered, then nothing
	cfg := bucketThroughProxy(p.URL, bucket, "", `    create = "10s"`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBucketGone(t, bucket),
		Steps: []resource.TestStep{
			{
				Config: cfg,
				// The first call after CreateBucket writes the ownership marker.
				ExpectError: errorRE("Recording ownership of bucket "+bucket+" failed", "no answer from "+p.URL, "within 10s"),
			},
			{
				PreConfig: func() {
					p.release()
					if p.hits.Load() != 1 {
						t.Fatalf("CreateBucket answered %d times, want 1", p.hits.Load())
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
	t.Parallel()
	p := newFaultProxy(t)
	bucket := randName("fs-rtmo-")
	cfg := bucketThroughProxy(p.URL, bucket, "", `    read = "5s"`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBucketGone(t, bucket),
		Steps: readTimeoutSteps(p, cfg, errorRE("Reading bucket "+bucket+" failed", "no answer from "+p.URL, "within 5s"),
			expectAPI(func() error { return s3state.FindBucket(context.Background(), testAWS(t).S3, bucket) })),
	})
}

// timeouts.update bounds an update: with the endpoint frozen at
// PutBucketTagging, the apply fails at its value naming the call and the
// endpoint; the bucket keeps its old state (the next plan is the same
// in-place update, no replacement) and the next apply finishes it.
func TestAccBucket_updateTimeout(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	p := newFreezeProxy(t)
	bucket := randName("fs-utmo-")
	tmo := `    update = "5s"`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBucketGone(t, bucket),
		Steps: []resource.TestStep{
			{Config: bucketThroughProxy(p.URL, bucket, "", tmo)},
			{
				PreConfig:   func() { p.arm(s3Call(http.MethodPut, bucket, "tagging"), false) },
				Config:      bucketThroughProxy(p.URL, bucket, "changed", tmo),
				ExpectError: errorRE("Configuring bucket "+bucket+" failed", "s3:PutBucketTagging", "no answer from "+p.URL, "within 5s", "apply again"),
			},
			{
				PreConfig: p.release,
				Config:    bucketThroughProxy(p.URL, bucket, "changed", tmo),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flinkstate_bucket.test", plancheck.ResourceActionUpdate),
				}},
				Check: checkBucketHardened(t, bucket, false, map[string]string{"app": "changed"}),
			},
		},
	})
}

// timeouts.delete bounds a destroy: with the endpoint frozen at
// DeleteBucket, the destroy fails at its value naming the endpoint, and the
// bucket stays, in state and in S3 (the next plan is empty).
func TestAccBucket_deleteTimeoutKeepsBucket(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	p := newFreezeProxy(t)
	bucket := randName("fs-dtmo-")
	cfg := bucketThroughProxy(p.URL, bucket, "", `    delete = "5s"`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBucketGone(t, bucket),
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig:   func() { p.arm(s3Call(http.MethodDelete, bucket, ""), false) },
				Config:      cfg,
				Destroy:     true,
				ExpectError: errorRE("Deleting bucket "+bucket+" failed", "no answer from "+p.URL, "within 5s"),
			},
			{
				PreConfig: p.release,
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
