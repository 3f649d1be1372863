package testbed

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestFaultProxy_stopAndStart(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	defer srv.Close()
	p, err := NewFaultProxy(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	get := func() error {
		// A new connection each time: no keep-alive hides the fault.
		c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := c.Get(p.URL("http"))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, err = io.ReadAll(resp.Body)
		return err
	}
	if err := get(); err != nil {
		t.Fatalf("through a running proxy: %v", err)
	}
	if n := p.Refused(); n != 0 {
		t.Fatalf("Refused is %d before any stop, want 0", n)
	}
	p.Stop()
	if err := get(); err == nil {
		t.Fatal("a stopped proxy still served a request")
	}
	if n := p.Refused(); n != 1 {
		t.Fatalf("Refused is %d after one request to a stopped proxy, want 1", n)
	}
	p.Start()
	if err := get(); err != nil {
		t.Fatalf("after Start: %v", err)
	}
	// An open connection is cut by Stop.
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p.Stop()
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("an open connection survived Stop")
	}
}
