package kube

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
)

// An update writes only the object the resource owns: one deleted or
// replaced outside Terraform is reported, and an unreadable one too.
func TestStillOurs(t *testing.T) {
	ctx := context.Background()
	obj := notRunningDeployment("RUNNING", "READY", "")
	obj.SetUID("uid-1")
	dyn := finalStopClient(obj)
	if live, _, ok := StillOurs(ctx, dyn, "ns", "orders", "uid-1"); !ok || live == nil {
		t.Errorf("own object: %v %v", live, ok)
	}
	if live, _, ok := StillOurs(ctx, dyn, "ns", "orders", ""); !ok || live == nil {
		t.Errorf("any object: %v %v", live, ok)
	}
	live, rep, ok := StillOurs(ctx, dyn, "ns", "orders", "uid-0")
	if ok || live != nil || rep.Verb != "Updating" ||
		rep.Detail != "it was replaced outside Terraform: the object of that name has UID uid-1, not uid-0, and is left alone" {
		t.Errorf("replaced: %v %+v", ok, rep)
	}
	if _, rep, ok := StillOurs(ctx, dyn, "ns", "gone", ""); ok || rep.Verb != "Updating" || rep.Detail != "it was deleted outside Terraform since the plan" {
		t.Errorf("deleted: %v %+v", ok, rep)
	}
	dyn.PrependReactor("get", "flinkdeployments", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("connection refused")
	})
	if _, rep, ok := StillOurs(ctx, dyn, "ns", "orders", ""); ok || rep.Verb != "Reading" || !strings.Contains(rep.Detail, "connection refused") || rep.Advice != "" {
		t.Errorf("unreadable: %v %+v", ok, rep)
	}
}

// A takeover the dry run shows would change the spec is a warning; any
// other failure stops the update.
func TestTakeOwnershipReport(t *testing.T) {
	rep := TakeOwnershipReport("ns", "orders", fmt.Errorf("dry run: %w", ErrTakeoverChanges))
	if rep.Warning != "Fields of the imported FlinkDeployment not taken over" || !strings.Contains(rep.Detail, "FlinkDeployment ns/orders: dry run: ") {
		t.Errorf("changes: %+v", rep)
	}
	rep = TakeOwnershipReport("ns", "orders", errors.New("conflict"))
	if rep.Warning != "" || rep.Verb != "Taking over" || rep.Detail != "conflict" || rep.Advice != "Nothing in its spec was changed; apply again." {
		t.Errorf("failed: %+v", rep)
	}
}

// A spec the admission webhook refused says nothing was stored; another
// refusal has no advice.
func TestWriteRefusedAdvice(t *testing.T) {
	denied := &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 400, Reason: metav1.StatusReasonBadRequest,
		Message: `admission webhook "validationwebhook.flink.apache.org" denied the request: bad`}}
	if adv := WriteRefusedAdvice(denied); !strings.HasPrefix(adv, "The admission webhook validationwebhook.flink.apache.org (") ||
		!strings.Contains(adv, "nothing changed in the cluster") {
		t.Errorf("admission: %q", adv)
	}
	if adv := WriteRefusedAdvice(errors.New("timeout")); adv != "" {
		t.Errorf("other: %q", adv)
	}
}
