package kube

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestRefusedAtAdmission(t *testing.T) {
	denied := &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 400, Reason: metav1.StatusReasonBadRequest,
		Message: `admission webhook "validationwebhook.flink.apache.org" denied the request: HA must be enabled for rollback support.`}}
	hook, msg, ok := RefusedAtAdmission(denied)
	if !ok || hook != "validationwebhook.flink.apache.org" || msg != "HA must be enabled for rollback support." {
		t.Fatalf("got %q %q %v", hook, msg, ok)
	}
	// Wrapped, as the apply path returns it.
	if _, _, ok := RefusedAtAdmission(errors.Join(errors.New("applying"), denied)); !ok {
		t.Fatal("a wrapped refusal is not recognised")
	}
	for _, err := range []error{nil, errors.New("connection refused"),
		apierrors.NewNotFound(FlinkDeploymentGVR.GroupResource(), "orders")} {
		if _, _, ok := RefusedAtAdmission(err); ok {
			t.Errorf("%v taken for an admission refusal", err)
		}
	}
}
