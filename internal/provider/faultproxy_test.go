package provider

import (
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"testing"
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
	URL    string
	mode   atomic.Int32
	closed chan struct{}
	once   sync.Once
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
