package testbed

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// FaultProxy is a TCP proxy in front of a test bed service (the
// kube-apiserver or the AWS emulator) that a test controls to inject
// faults: Stop makes the service unreachable as if it were down (open
// connections are cut, new ones are reset), Start brings it back. TLS passes
// through untouched, so a client of the API server verifies the server's
// own certificate (its SAN is the IP 127.0.0.1, which the proxy shares).
type FaultProxy struct {
	ln      net.Listener
	target  string
	mu      sync.Mutex
	stopped bool
	conns   map[net.Conn]struct{}
	wg      sync.WaitGroup
	sent    atomic.Int64 // bytes clients sent to the service
	refused atomic.Int64 // connections cut because the proxy was stopped
}

// NewFaultProxy listens on a free port of 127.0.0.1 and forwards to target
// (host:port, or a URL whose host is used).
func NewFaultProxy(target string) (*FaultProxy, error) {
	if i := strings.Index(target, "://"); i >= 0 {
		target = target[i+3:]
	}
	target = strings.TrimSuffix(target, "/")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &FaultProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// Addr is the proxy's host:port.
func (p *FaultProxy) Addr() string { return p.ln.Addr().String() }

// URL is the proxy's address with scheme (https for the API server).
func (p *FaultProxy) URL(scheme string) string { return scheme + "://" + p.Addr() }

// Stop makes the service unreachable: open connections are closed and new
// ones are closed as soon as they are accepted, as a client sees a server
// that went down.
func (p *FaultProxy) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	for c := range p.conns {
		c.Close()
	}
}

// Start makes the service reachable again.
func (p *FaultProxy) Start() {
	p.mu.Lock()
	p.stopped = false
	p.mu.Unlock()
}

// StopFor stops the service for d, then starts it again.
func (p *FaultProxy) StopFor(d time.Duration) {
	p.Stop()
	time.Sleep(d)
	p.Start()
}

// Close stops listening and cuts every connection; it returns once the
// proxy's goroutines have ended.
func (p *FaultProxy) Close() error {
	err := p.ln.Close()
	p.Stop()
	p.wg.Wait()
	return err
}

func (p *FaultProxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		p.mu.Lock()
		if p.stopped {
			p.mu.Unlock()
			p.refused.Add(1)
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // a reset, like a closed port
			}
			c.Close()
			continue
		}
		p.conns[c] = struct{}{}
		p.mu.Unlock()
		p.wg.Add(1)
		go p.pipe(c)
	}
}

func (p *FaultProxy) pipe(c net.Conn) {
	defer p.wg.Done()
	defer func() {
		p.mu.Lock()
		delete(p.conns, c)
		p.mu.Unlock()
		c.Close()
	}()
	up, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		return
	}
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		p.refused.Add(1)
		up.Close()
		return
	}
	p.conns[up] = struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.conns, up)
		p.mu.Unlock()
		up.Close()
	}()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, countingReader{c, &p.sent}); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
	// One direction ended: end the other one too.
	c.Close()
	up.Close()
	<-done
}

// ClientBytes is how many bytes clients have sent through the proxy. A
// test that must not cut a response in flight waits until it grows: the
// client has moved on to its next request (or acknowledged the response).
func (p *FaultProxy) ClientBytes() int64 { return p.sent.Load() }

// Refused is how many connections clients opened while the proxy was
// stopped (each one cut at once): a test that must show nobody tried to
// reach the service while it was down reads it before and after.
func (p *FaultProxy) Refused() int64 { return p.refused.Load() }

// WaitClientBytesAfter waits, up to timeout, until clients have sent more
// than n bytes; it tells whether they did.
func (p *FaultProxy) WaitClientBytesAfter(n int64, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for p.sent.Load() <= n {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n.Add(int64(n))
	return n, err
}

// KubeconfigVia writes a kubeconfig for the test bed's API server reached
// through server (e.g. a FaultProxy's URL) to path.
func (e Env) KubeconfigVia(server, path string) error {
	v := e
	v.KubeHost = server
	v.Kubeconfig = path
	if err := writeKubeconfig(v); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}
