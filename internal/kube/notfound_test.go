package kube

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
)

func TestNotFound(t *testing.T) {
	gone := apierrors.NewNotFound(schema.GroupResource{Resource: "serviceaccounts"}, "flink")
	if err := NotFound("ServiceAccount ns/flink", gone); !notfound.Is(err) || !apierrors.IsNotFound(err) {
		t.Fatalf("NotFound status: %v", err)
	}
	for _, err := range []error{
		nil,
		apierrors.NewForbidden(schema.GroupResource{Resource: "serviceaccounts"}, "flink", errors.New("no")),
		apierrors.NewConflict(schema.GroupResource{Resource: "serviceaccounts"}, "flink", errors.New("uid")),
		errors.New("connection refused"),
	} {
		if got := NotFound("x", err); notfound.Is(got) || got != err {
			t.Errorf("%v taken for not found: %v", err, got)
		}
	}
}
