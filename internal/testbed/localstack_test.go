package testbed

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed/awsfront"
)

func TestAWSBackendFromEnv(t *testing.T) {
	for in, want := range map[string]string{"": BackendKumo, "kumo": BackendKumo, "localstack": BackendLocalStack} {
		t.Setenv("FLINKSTATE_TESTBED_AWS", in)
		if got, err := AWSBackendFromEnv(); err != nil || got != want {
			t.Errorf("FLINKSTATE_TESTBED_AWS=%q: %q, %v; want %q", in, got, err, want)
		}
	}
	t.Setenv("FLINKSTATE_TESTBED_AWS", "LocalStack")
	if _, err := AWSBackendFromEnv(); err == nil {
		t.Error("FLINKSTATE_TESTBED_AWS=LocalStack accepted; want an error naming the two backends")
	}
}

// The front translates a key ending in "/" only for kumo; for LocalStack,
// which keeps such keys itself, the request reaches it as the client sent it.
func TestAWSFront_dirMarkersOnlyWhenAsked(t *testing.T) {
	var (
		mu   sync.Mutex
		seen string
	)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = r.URL.EscapedPath()
		mu.Unlock()
	}))
	defer backend.Close()
	for _, tc := range []struct {
		markers bool
		want    string
	}{
		{true, "/bkt/a/b/" + awsfront.MarkerSuffix},
		{false, "/bkt/a/b/"},
	} {
		ports, err := freePorts(1)
		if err != nil {
			t.Fatal(err)
		}
		listen := "127.0.0.1:" + strconv.Itoa(ports[0])
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- awsfront.ServeAWSProxy(ctx, awsfront.AWSProxyConfig{Listen: listen, Target: backend.URL,
				Log: filepath.Join(t.TempDir(), "s3.jsonl"), DirMarkers: tc.markers})
		}()
		req, _ := http.NewRequest(http.MethodPut, "http://"+listen+"/bkt/a/b/", http.NoBody)
		req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0")
		var resp *http.Response
		// Until the front listens (it starts in the goroutine above).
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
			if resp, err = http.DefaultClient.Do(req); err == nil || time.Now().After(deadline) {
				break
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		mu.Lock()
		got := seen
		mu.Unlock()
		if got != tc.want {
			t.Errorf("DirMarkers=%t: the backend got PUT %s, want %s", tc.markers, got, tc.want)
		}
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
