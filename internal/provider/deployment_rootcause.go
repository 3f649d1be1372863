package provider

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// flinkReason is Flink's own reason for a wait that ended without its
// target because the JobManager exited or the job failed (the last cause
// in the JobManager's log, kube.JobManagerRootCause), to follow the
// operator's words in the error; "" when the operator refused the change
// itself (nothing of Flink ran for it) or no cause was logged. A runner
// that may not read pods/log is told what to grant.
func flinkReason(ctx context.Context, c *kube.Client, ns, name string, o kube.WaitOutcome) string {
	if o.Kind != kube.WaitNotReady && o.Kind != kube.WaitNeverRan {
		return ""
	}
	rc, ok, err := kube.JobManagerRootCause(ctx, c.REST, ns, name)
	switch {
	case apierrors.IsForbidden(err):
		return ". Flink's reason is in the JobManager's log: grant the runner list on pods and get on pods/log (docs: Runner permissions) to read it here"
	case err != nil || !ok:
		return ""
	}
	return ". " + rc.Describe()
}
