package testbed

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The test bed's API server refuses Deployment creates in the namespace,
// with the policy's message, while the refusal stands, and in no other
// namespace; lifted, creates go through again.
func TestRefuseDeploymentCreates(t *testing.T) {
	b := newBed(t)
	ctx := context.Background()
	ns, other := newNamespace(t, b), newNamespace(t, b)
	lift, err := RefuseDeploymentCreates(ctx, b.dyn, ns, "deployments are paused in this namespace")
	if err != nil {
		t.Fatal(err)
	}
	dep := func(ns string) error {
		_, err := b.dyn.Resource(deploymentsGVR).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "orders"},
			"spec": map[string]any{
				"selector": map[string]any{"matchLabels": map[string]any{"app": "orders"}},
				"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "orders"}},
					"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "i"}}}},
			}}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	err = dep(ns)
	want := `deployments.apps "orders" is forbidden: ValidatingAdmissionPolicy 'refuse-deployments-` + ns + `' with binding 'refuse-deployments-` +
		ns + `' denied request: deployments are paused in this namespace`
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("create while refused: %v, want 403 %q", err, want)
	}
	if err := dep(other); err != nil {
		t.Errorf("create in another namespace: %v", err)
	}
	if err := lift(ctx); err != nil {
		t.Fatal(err)
	}
	if err := dep(ns); err != nil {
		t.Errorf("create once lifted: %v", err)
	}
}
