package provider

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/preflight"
)

// flinkReason is Flink's own reason for a wait that ended without its
// target because the JobManager exited or the job failed (the last cause
// in the JobManager's log, kube.JobManagerRootCause), to follow the
// operator's words in the error; "" when the operator refused the change
// itself (nothing of Flink ran for it) or no cause was logged. A runner
// that may not read pods/log is told what to grant. A refusal of state for
// an operator the new code lacks, which Flink names by its hex ID only, is
// followed by the operator's name and uid from the snapshot's _metadata.
func (r *deploymentResource) flinkReason(ctx context.Context, c *kube.Client, ns, name string, o kube.WaitOutcome) string {
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
	return ". " + rc.Describe() + r.namedOperator(ctx, rc.Cause)
}

// namedOperator is, for Flink's "Cannot map checkpoint/savepoint state for
// operator <id>" in cause, which operator of that snapshot it is; "" when
// cause is another failure or the snapshot cannot be read.
func (r *deploymentResource) namedOperator(ctx context.Context, cause string) string {
	snapshot, id, ok := preflight.MissingOperator(cause)
	if !ok {
		return ""
	}
	a, err := r.meta.AWS(ctx)
	if err != nil {
		return ""
	}
	actx, cancel := r.meta.boundAWS(ctx, kube.RequestTimeout)
	defer cancel()
	meta, err := checkpoint.ReadMetadataAt(actx, a.S3, snapshot)
	if err != nil {
		return ""
	}
	if op := preflight.NameOperator(meta, id); op != "" {
		return ". In " + snapshot + " that is the operator " + op + ": the new code has no operator of that ID (its uid() changed or " +
			"it was removed). Put its uid back, or set job.allow_non_restored_state = true to drop its state"
	}
	return ""
}
