package testbed

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// A transient fault the operator meets while it reconciles: the API server
// refuses to create Deployments in one namespace for a while, as a
// cluster's admission policy (a quota-like rule, a policy engine being
// rolled out) does. It is a real ValidatingAdmissionPolicy with its
// binding (admissionregistration.k8s.io/v1, GA and served by default since
// Kubernetes 1.30; the test bed runs v1.34), so the real operator's
// JobManager Deployment create gets the API server's own refusal.

var (
	admissionPolicyGVR  = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"}
	admissionBindingGVR = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicybindings"}
)

// RefuseDeploymentCreates makes the API server refuse every Deployment
// create in ns with message, and returns once it does. lift removes the
// refusal and returns once creates go through again. The API server
// answers a refused create with 403 Forbidden, "deployments.apps \"<name>\"
// is forbidden: ValidatingAdmissionPolicy '<policy>' with binding
// '<binding>' denied request: <message>" (k8s.io/apiserver
// pkg/admission/plugin/policy/validating dispatcher).
func RefuseDeploymentCreates(ctx context.Context, dyn dynamic.Interface, ns, message string) (lift func(context.Context) error, err error) {
	name := "refuse-deployments-" + ns
	policy := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"failurePolicy": "Fail",
			"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{
				"apiGroups": []any{"apps"}, "apiVersions": []any{"v1"}, "operations": []any{"CREATE"}, "resources": []any{"deployments"},
			}}},
			"validations": []any{map[string]any{"expression": "false", "message": message, "reason": "Forbidden"}},
		},
	}}
	binding := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"policyName":        name,
			"validationActions": []any{"Deny"},
			"matchResources": map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{
				"kubernetes.io/metadata.name": ns,
			}}},
		},
	}}
	if _, err := dyn.Resource(admissionPolicyGVR).Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("creating ValidatingAdmissionPolicy %s: %w", name, err)
	}
	if _, err := dyn.Resource(admissionBindingGVR).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("creating ValidatingAdmissionPolicyBinding %s: %w", name, err)
	}
	// The API server applies a new policy once its informer has it and it
	// was type-checked: probe with dry-run creates until one is refused.
	if err := untilDeploymentCreate(ctx, dyn, ns, true); err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		for _, r := range []schema.GroupVersionResource{admissionBindingGVR, admissionPolicyGVR} {
			if err := dyn.Resource(r).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting %s %s: %w", r.Resource, name, err)
			}
		}
		return untilDeploymentCreate(ctx, dyn, ns, false)
	}, nil
}

// untilDeploymentCreate probes a dry-run Deployment create in ns until it
// is refused (refused) or accepted (!refused).
func untilDeploymentCreate(ctx context.Context, dyn dynamic.Interface, ns string, refused bool) error {
	probe := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "admission-probe", "namespace": ns},
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": map[string]any{"app": "probe"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "probe"}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "probe"}}},
			},
		},
	}}
	var last error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		_, err := dyn.Resource(deploymentsGVR).Namespace(ns).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		last = err
		denied := apierrors.IsForbidden(err) && strings.Contains(err.Error(), "ValidatingAdmissionPolicy")
		if denied == refused && (denied || err == nil) {
			return nil
		}
	}
	return fmt.Errorf("a Deployment create in %s was not %s within 30s (last: %v)", ns, map[bool]string{true: "refused", false: "accepted"}[refused], last)
}
