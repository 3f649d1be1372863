package provider

import (
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
)

// faultMode is what the fault proxy does with a request.
type faultMode int32

const (
	passThrough faultMode = iota // forward to the AWS endpoint
	notFound                     // answer 404 with an empty body, to everything
	frozen                       // accept the request and never answer
)

// faultProxy is a loopback HTTP proxy in front of the test bed's AWS
// endpoint that the test switches between passing, answering 404 to
// everything, and freezing. The provider reaches AWS through it (aws.endpoint).
type faultProxy struct {
	URL  string
	mode atomic.Int32
	// before, when set, runs before a passed-through request is forwarded
	// (what another client does at that very moment).
	before atomic.Pointer[func(*http.Request)]
	// intercept, when set, may answer a passed-through request itself (it
	// returns true) instead of the AWS endpoint.
	intercept atomic.Pointer[func(http.ResponseWriter, *http.Request) bool]
	closed    chan struct{}
	once      sync.Once
}

func newFaultProxy(t *testing.T) *faultProxy {
	t.Helper()
	target, err := url.Parse(os.Getenv("AWS_ENDPOINT_URL"))
	if err != nil || target.Host == "" {
		t.Fatalf("fault proxy: AWS_ENDPOINT_URL %q is not a URL", os.Getenv("AWS_ENDPOINT_URL"))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("fault proxy: %v", err)
	}
	p := &faultProxy{URL: "http://" + ln.Addr().String(), closed: make(chan struct{})}
	rp := httputil.NewSingleHostReverseProxy(target)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch faultMode(p.mode.Load()) {
		case notFound:
			w.WriteHeader(http.StatusNotFound)
		case frozen:
			select {
			case <-r.Context().Done():
			case <-p.closed:
			}
		default:
			if f := p.before.Load(); f != nil {
				(*f)(r)
			}
			if f := p.intercept.Load(); f != nil && (*f)(w, r) {
				return
			}
			rp.ServeHTTP(w, r)
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		p.once.Do(func() { close(p.closed) })
		_ = srv.Close()
	})
	return p
}

func (p *faultProxy) set(m faultMode) { p.mode.Store(int32(m)) }

// readTimeoutSteps are the steps of a timeouts.read test through p: create
// with cfg; with the endpoint frozen, a plan fails with an error matching
// want (the read timeout, not the default bound); once the endpoint answers
// again the plan is empty and checks hold (nothing was lost or changed).
func readTimeoutSteps(p *faultProxy, cfg string, want *regexp.Regexp, checks ...statecheck.StateCheck) []resource.TestStep {
	return []resource.TestStep{
		{Config: cfg},
		{
			PreConfig:   func() { p.set(frozen) },
			Config:      cfg,
			PlanOnly:    true,
			ExpectError: want,
		},
		{
			PreConfig: func() { p.set(passThrough) },
			Config:    cfg,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectEmptyPlan(),
			}},
			ConfigStateChecks: checks,
		},
	}
}
