package kube

import "testing"

func TestSessionJobsBlock(t *testing.T) {
	for _, tc := range []struct {
		conf map[string]string
		want bool
	}{
		{nil, true}, // the operator's default
		{map[string]string{SessionBlockKey: "true"}, true},
		{map[string]string{SessionBlockKey: "false"}, false},
		{map[string]string{SessionBlockKey: " FALSE "}, false},
		{map[string]string{"kubernetes.operator.session.deletion.block-on-unmanaged-jobs": "false"}, true},
	} {
		if got := SessionJobsBlock(tc.conf); got != tc.want {
			t.Errorf("SessionJobsBlock(%v) = %v, want %v", tc.conf, got, tc.want)
		}
	}
}

// The operator's words, as the real operator 1.15.0 wrote them in its
// CleanupFailed Event (TestAccRealOperator_sessionClusterDestroy).
func TestSessionJobsMessage(t *testing.T) {
	if got, want := SessionJobsMessage([]string{"a", "b"}), "The session jobs [a, b] should be deleted first"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
