package kube

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
)

// The words of a flinkstate_deployment's writes of its FlinkDeployment.

// StillOurs reads FlinkDeployment ns/name before an update and tells
// whether it is the object the resource created or imported (uid; "" for
// any): another object of that name, after a delete or replacement outside
// Terraform, is never rewritten. ok false: the report says why (an
// "Updating" or "Reading" problem).
func StillOurs(ctx context.Context, dyn dynamic.Interface, ns, name, uid string) (*unstructured.Unstructured, Report, bool) {
	live, err := GetFlinkDeployment(ctx, dyn, ns, name)
	switch {
	case notfound.Is(err):
		return nil, Report{Verb: "Updating", Detail: "it was deleted outside Terraform since the plan",
			Advice: "Run terraform apply again: the refresh removes it from state and the plan creates it."}, false
	case err != nil:
		return nil, Report{Verb: "Reading", Detail: ReadableError(err)}, false
	case uid != "" && string(live.GetUID()) != uid:
		return nil, Report{Verb: "Updating",
			Detail: fmt.Sprintf("it was replaced outside Terraform: the object of that name has UID %s, not %s, and is left alone", live.GetUID(), uid),
			Advice: "Run terraform apply again: the refresh drops it from this state. Import it to manage it."}, false
	}
	return live, Report{}, true
}

// TakeOwnershipReport words a TakeOwnership of FlinkDeployment ns/name that
// failed with err: ErrTakeoverChanges (the object changed since the
// import) is a warning, the update goes on with the fields co-owned; any
// other error is a "Taking over" problem, nothing in the spec changed.
func TakeOwnershipReport(ns, name string, err error) Report {
	if errors.Is(err, ErrTakeoverChanges) {
		return Report{Warning: "Fields of the imported FlinkDeployment not taken over",
			Detail: fmt.Sprintf("FlinkDeployment %s/%s: %s (it changed since the import), so the fields the provider manages stay co-owned "+
				"by the tool that wrote them: a setting removed from the configuration may stay in the object. Run terraform "+
				"apply -refresh-only, then apply again.", ns, name, err)}
	}
	return Report{Verb: "Taking over", Detail: ReadableError(err), Advice: "Nothing in its spec was changed; apply again."}
}

// WriteRefusedAdvice is what to do about a create or apply of a spec the
// API server refused with err: for a refusal at admission
// (RefusedAtAdmission) nothing was stored; "" otherwise.
func WriteRefusedAdvice(err error) string {
	hook, _, ok := RefusedAtAdmission(err)
	if !ok {
		return ""
	}
	return fmt.Sprintf("The admission webhook %s (the Flink operator's validator, when it is validationwebhook.flink.apache.org) refused this spec "+
		"before the API server stored anything: nothing changed in the cluster. Fix what it names and apply again.", hook)
}
