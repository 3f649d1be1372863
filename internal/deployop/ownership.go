package deployop

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
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
	spec.LiveConfiguration = flinkdeploy.LiveConfiguration(live)
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

// Observed is FlinkDeployment ns/name as a refresh reads it, besides its
// spec (flinkdeploy.ReadLive).
type Observed struct {
	// Live is the object: nil when it is gone (Gone: the resource goes from
	// state) or could not be read (Report).
	Live   *unstructured.Unstructured
	Gone   bool
	Report Report
	Status kube.DeploymentStatus
	// UpgradeSavepoint: the savepoint taken before the last upgrade
	// (kube.UpgradeSavepointAnnotation, written with the spec it preceded:
	// a run killed right after still finds it). RecordedSavepoint: the
	// savepoint the operator has on record (kube.RecordedSavepoint), for
	// the plan of a change savepoint_before_upgrade covers while the job is
	// not running: planning makes no API call. FinalFailed: the last final
	// savepoint's failure (kube.FinalSavepointFailedAnnotation), for the
	// plan of the next destroy.
	UpgradeSavepoint, RecordedSavepoint, FinalFailed string
}

// Observe reads FlinkDeployment ns/name.
func Observe(ctx context.Context, env Env, ns, name string) Observed {
	dyn, err := env.Kube()
	if err != nil {
		return Observed{Report: kubeReport(err)}
	}
	live, err := kube.GetFlinkDeployment(ctx, dyn, ns, name)
	if notfound.Is(err) {
		return Observed{Gone: true}
	}
	if err != nil {
		return Observed{Report: Report{"FlinkDeployment " + ns + "/" + name, kube.Report{Verb: "Reading", Detail: kube.ReadableError(err)}}}
	}
	a := live.GetAnnotations()
	return Observed{Live: live, Status: kube.ReadDeploymentStatus(live), UpgradeSavepoint: a[kube.UpgradeSavepointAnnotation],
		RecordedSavepoint: kube.RecordedSavepoint(live), FinalFailed: a[kube.FinalSavepointFailedAnnotation]}
}

// kubeReport is the problem of a Kubernetes client that cannot be set up.
func kubeReport(err error) Report {
	return *setupHalt("the Kubernetes client", err)
}

// StillOurs reads FlinkDeployment ns/name before an update: the object
// this resource created or imported (uid) and nothing else is rewritten
// (kube.StillOurs); ok false: the report says why.
func StillOurs(ctx context.Context, env Env, ns, name, uid string) (*unstructured.Unstructured, Report, bool) {
	dyn, err := env.Kube()
	if err != nil {
		return nil, kubeReport(err), false
	}
	live, rep, ok := kube.StillOurs(ctx, dyn, ns, name, uid)
	return live, Report{"FlinkDeployment " + ns + "/" + name, rep}, ok
}
