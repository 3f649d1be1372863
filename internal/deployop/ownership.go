package deployop

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// Takeover is what TakeOwnership did.
type Takeover struct {
	// Live is the object as it is afterwards: live as it was when nothing
	// was taken over, nil after a problem (the update stops).
	Live *unstructured.Unstructured
	// Taken: the provider owns its fields now (the import's adoption is
	// done).
	Taken bool
	// Report is the warning or problem of a takeover that failed
	// (kube.TakeOwnershipReport); zero otherwise.
	Report kube.Report
}

// TakeOwnership, on the first update after an import, makes the provider
// the only owner of the fields it read from FlinkDeployment ns/name
// (kube.TakeOwnership), so that a setting removed from the configuration is
// removed from the object. spec is the object as the state holds it,
// upgradeSavepoint its kube.UpgradeSavepointAnnotation ("" none), live the
// object as read before the update (its flinkConfiguration's shape is
// kept: flinkdeploy.ShapeConfiguration).
func TakeOwnership(ctx context.Context, env Env, ns, name string, spec flinkdeploy.Spec, upgradeSavepoint string, live *unstructured.Unstructured) Takeover {
	dyn, err := env.Kube()
	if err != nil {
		return Takeover{Report: kube.Report{Verb: "Setting up", Detail: err.Error()}}
	}
	if live != nil {
		spec.LiveConfiguration, _, _ = unstructured.NestedFieldCopy(live.Object, "spec", "flinkConfiguration")
	}
	obj := spec.Render(ns, name)
	Annotate(obj, upgradeSavepoint)
	ctx, cancel := context.WithTimeout(ctx, 3*kube.RequestTimeout)
	defer cancel()
	taken, err := kube.TakeOwnership(ctx, dyn, kube.FlinkDeploymentGVR, obj, live)
	if err != nil {
		rep := kube.TakeOwnershipReport(ns, name, err)
		if rep.Warning != "" {
			return Takeover{Live: live, Report: rep}
		}
		return Takeover{Report: rep}
	}
	return Takeover{Live: taken, Taken: true}
}

// Annotate sets the upgrade savepoint's annotation (kube.
// UpgradeSavepointAnnotation) on obj, the object to write, when there is
// one: in the same request as the spec it precedes, so a run killed right
// after it still finds the savepoint (the resource's Read).
func Annotate(obj *unstructured.Unstructured, upgradeSavepoint string) {
	if upgradeSavepoint != "" {
		obj.SetAnnotations(map[string]string{kube.UpgradeSavepointAnnotation: upgradeSavepoint})
	}
}
