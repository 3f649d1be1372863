package kube

import (
	"context"
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
)

// A job that fails ends the wait for its checkpoint; one that runs, or an
// object that cannot be read, does not.
func TestJobWatch(t *testing.T) {
	cases := []struct {
		name string
		job  string
		ends bool
	}{{"running", "RUNNING", false}, {"failed", "FAILED", true}, {"restarting", "RESTARTING", false}}
	for _, c := range cases {
		dyn := dynfake.NewSimpleDynamicClient(runtime.NewScheme(), notRunningDeployment(c.job, "READY", ""))
		w := &JobWatch{Dyn: dyn, Namespace: "ns", Name: "orders", CallTimeout: RequestTimeout}
		err := w.Still(context.Background())
		if (err != nil) != c.ends {
			t.Errorf("%s: %v", c.name, err)
		}
		cause, todo := w.NoCheckpoint(errors.New("no new checkpoint"))
		if cause != "no new checkpoint; the operator last reported the job "+c.job+" (lifecycle (none))" ||
			!strings.HasPrefix(todo, "The spec is written and the job was RUNNING") {
			t.Errorf("%s: %q %q", c.name, cause, todo)
		}
	}
	empty := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{FlinkDeploymentGVR: "FlinkDeploymentList"})
	w := &JobWatch{Dyn: empty, Namespace: "ns", Name: "orders", CallTimeout: RequestTimeout}
	if err := w.Still(context.Background()); err != nil {
		t.Errorf("unreadable: %v", err)
	}
	if cause, _ := w.NoCheckpoint(errors.New("x")); cause != "x; the operator last reported the job (none) (lifecycle (none))" {
		t.Errorf("nothing read: %q", cause)
	}
}
