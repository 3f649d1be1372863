package deployop

import (
	"context"

	"k8s.io/client-go/dynamic"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
)

// IRSAOnPodIdentity is rule 6 at apply, for a ServiceAccount the
// configuration does not plan: before the FlinkDeployment is written, the
// ServiceAccount ns/sa of a deployment whose identity is "pod_identity"
// must not carry the IRSA annotation (kube.IRSAAnnotation), whose web
// identity credentials the AWS SDK in Flink's S3 plugin takes first (the
// provider words why: irsaConflictDetail). conflict says it carries it;
// rep is a read that failed (nothing was written). A missing account is
// left to the operator's own error.
func IRSAOnPodIdentity(ctx context.Context, dyn dynamic.Interface, identity, ns, sa string) (conflict bool, rep *kube.Report) {
	if identity != flinkconf.IdentityPodIdentity {
		return false, nil
	}
	live, err := kube.GetServiceAccount(ctx, dyn, ns, sa)
	switch {
	case notfound.Is(err):
		return false, nil
	case err != nil:
		return false, &kube.Report{Verb: "Reading", Detail: kube.ReadableError(err), Advice: "Nothing was written."}
	}
	_, conflict = live.GetAnnotations()[kube.IRSAAnnotation]
	return conflict, nil
}
