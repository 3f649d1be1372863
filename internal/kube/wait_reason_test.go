package kube

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

// The JobManager's log is read only for an end Flink may have caused; a
// runner that may not list pods is told what to grant; no pod, no reason.
func TestWaitReason(t *testing.T) {
	status := http.StatusForbidden
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		if status == http.StatusOK {
			_, _ = w.Write([]byte(`{"kind":"PodList","apiVersion":"v1","items":[]}`))
			return
		}
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403}`))
	}))
	defer srv.Close()
	cfg := &rest.Config{Host: srv.URL}
	ctx := context.Background()
	for _, k := range []WaitKind{WaitRejected, WaitNeverDeployed, WaitUpgradeFailed, WaitUpgradeable} {
		if words, cause := WaitReason(ctx, cfg, "ns", "d", WaitOutcome{Kind: k}); words != "" || cause != "" {
			t.Errorf("%v: %q %q, want nothing: the operator refused, nothing of Flink ran", k, words, cause)
		}
	}
	words, cause := WaitReason(ctx, cfg, "ns", "d", WaitOutcome{Kind: WaitNeverRan})
	if !strings.Contains(words, "grant the runner list on pods and get on pods/log") || cause != "" {
		t.Errorf("forbidden: %q %q", words, cause)
	}
	status = http.StatusOK
	if words, cause := WaitReason(ctx, cfg, "ns", "d", WaitOutcome{Kind: WaitNotReady}); words != "" || cause != "" {
		t.Errorf("no pod: %q %q", words, cause)
	}
}
