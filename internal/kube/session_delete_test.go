package kube

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
)

func sessionJob(name, deployment string) *unstructured.Unstructured {
	j := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"deploymentName": deployment}}}
	j.SetAPIVersion("flink.apache.org/v1beta1")
	j.SetKind("FlinkSessionJob")
	j.SetNamespace("ns")
	j.SetName(name)
	return j
}

func sessionClient(objs ...runtime.Object) *dynfake.FakeDynamicClient {
	return dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{FlinkSessionJobGVR: "FlinkSessionJobList"}, objs...)
}

// A session cluster with session jobs on it is not deleted (the operator
// would never finish: SessionReconciler.cleanupInternal), unless the
// deployment turns the block off; jobs of other clusters do not count.
func TestRefuseSessionDelete(t *testing.T) {
	ctx := context.Background()
	dyn := sessionClient(sessionJob("b", "s"), sessionJob("a", "s"), sessionJob("c", "other"))
	rep, refused := RefuseSessionDelete(ctx, dyn, "ns", "s", nil, time.Second)
	if !refused || rep.Verb != "Deleting" || !strings.Contains(rep.Detail, `"The session jobs [a, b] should be deleted first"`) ||
		!strings.Contains(rep.Advice, "Delete the FlinkSessionJobs a, b first") {
		t.Errorf("got %v %+v", refused, rep)
	}
	if rep, refused := RefuseSessionDelete(ctx, dyn, "ns", "s", map[string]string{SessionBlockKey: "false"}, time.Second); refused {
		t.Errorf("block off, refused: %+v", rep)
	}
	if rep, refused := RefuseSessionDelete(ctx, dyn, "ns", "empty", nil, time.Second); refused {
		t.Errorf("no session jobs, refused: %+v", rep)
	}
}

// Session jobs that cannot be listed refuse the delete: nothing is
// deleted on a guess.
func TestRefuseSessionDelete_unreadable(t *testing.T) {
	dyn := sessionClient()
	dyn.PrependReactor("list", "flinksessionjobs", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("forbidden")
	})
	rep, refused := RefuseSessionDelete(context.Background(), dyn, "ns", "s", nil, time.Second)
	if !refused || !strings.Contains(rep.Detail, "forbidden") || rep.Advice != "Nothing was deleted. Apply again once the session jobs can be read." {
		t.Errorf("got %v %+v", refused, rep)
	}
}
