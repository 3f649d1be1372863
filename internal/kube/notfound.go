package kube

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
)

// NotFound returns err as a *notfound.Error about what when the API server
// answered that the object does not exist (a Status with reason NotFound,
// apierrors.IsNotFound), and err as it is otherwise. Call it on the answer
// of the call that can say so, then ask notfound.Is.
func NotFound(what string, err error) error {
	return notfound.When(what, err, apierrors.IsNotFound)
}
