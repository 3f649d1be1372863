package provider

import (
	"context"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/preflight"
)

// flinkReason is Flink's own reason for a wait's end (kube.WaitReason),
// and, for a refusal of state for an operator the new code lacks, which
// Flink names by its hex ID only, the operator's name and uid from the
// snapshot's _metadata.
func (r *deploymentResource) flinkReason(ctx context.Context, c *kube.Client, ns, name string, o kube.WaitOutcome) string {
	words, cause := kube.WaitReason(ctx, c.REST, ns, name, o)
	if words == "" || cause == "" {
		return words
	}
	return words + r.namedOperator(ctx, cause)
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
