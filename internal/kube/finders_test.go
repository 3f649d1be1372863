package kube

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
)

// The finders turn the API server's NotFound, and only that, into a
// *notfound.Error; another error comes back as it was (an APIStatus that
// callers show).
func TestFinders_notFoundOnlyOnNotFound(t *testing.T) {
	ctx := context.Background()
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		FlinkDeploymentGVR: "FlinkDeploymentList", FlinkStateSnapshotGVR: "FlinkStateSnapshotList",
		ServiceAccountGVR: "ServiceAccountList", RoleBindingGVR: "RoleBindingList",
	})
	finders := map[string]func() error{
		"GetFlinkDeployment":   func() error { _, err := GetFlinkDeployment(ctx, dyn, "ns", "x"); return err },
		"GetSnapshot":          func() error { _, err := GetSnapshot(ctx, dyn, "ns", "x"); return err },
		"GetServiceAccount":    func() error { _, err := GetServiceAccount(ctx, dyn, "ns", "x"); return err },
		"GetRoleBinding":       func() error { _, err := GetRoleBinding(ctx, dyn, "ns", "x"); return err },
		"DeleteServiceAccount": func() error { return DeleteServiceAccount(ctx, dyn, "ns", "x", "") },
		"DeleteRoleBinding":    func() error { return DeleteRoleBinding(ctx, dyn, "ns", "x") },
	}
	for name, f := range finders {
		if err := f(); !notfound.Is(err) || !apierrors.IsNotFound(err) {
			t.Errorf("%s of a missing object: %v, want a *notfound.Error wrapping the NotFound status", name, err)
		}
	}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "any"}, "x", errors.New("denied"))
	dyn.PrependReactor("*", "*", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, forbidden })
	for name, f := range finders {
		if err := f(); notfound.Is(err) || err != forbidden {
			t.Errorf("%s, refused: %v, want the API server's error as it came", name, err)
		}
	}
}
