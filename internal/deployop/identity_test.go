package deployop

import (
	"context"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	dynfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// Rule 6 at apply: a pod_identity deployment's ServiceAccount with the
// IRSA annotation conflicts; one without it, a missing one, or another
// identity does not; a read that fails is a problem that wrote nothing.
func TestIRSAOnPodIdentity(t *testing.T) {
	sa := func(name string, annotations map[string]any) *unstructured.Unstructured {
		md := map[string]any{"name": name, "namespace": "ns"}
		if annotations != nil {
			md["annotations"] = annotations
		}
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": md}}
	}
	dyn := dynfake.NewSimpleDynamicClient(runtime.NewScheme(),
		sa("irsa", map[string]any{kube.IRSAAnnotation: "arn:aws:iam::123456789012:role/orders"}), sa("plain", map[string]any{"team": "data"}))
	for _, c := range []struct {
		identity, sa string
		conflict     bool
	}{{"pod_identity", "irsa", true}, {"pod_identity", "plain", false}, {"pod_identity", "missing", false}, {"irsa", "irsa", false}, {"", "irsa", false}} {
		if conflict, rep := IRSAOnPodIdentity(context.Background(), dyn, c.identity, "ns", c.sa); conflict != c.conflict || rep != nil {
			t.Errorf("%s on %s: %v %+v", c.identity, c.sa, conflict, rep)
		}
	}
	dyn.PrependReactor("get", "serviceaccounts", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("forbidden: cannot get serviceaccounts")
	})
	conflict, rep := IRSAOnPodIdentity(context.Background(), dyn, "pod_identity", "ns", "irsa")
	if conflict || rep == nil || rep.Verb != "Reading" || rep.Detail != "forbidden: cannot get serviceaccounts" || rep.Advice != "Nothing was written." {
		t.Errorf("read failed: %v %+v", conflict, rep)
	}
	if _, rep := IRSAOnPodIdentity(context.Background(), dyn, "irsa", "ns", "irsa"); rep != nil {
		t.Errorf("another identity read the account: %+v", rep)
	}
}
