package provider

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// checkpointPoll is how often wait_for = "checkpoint" looks for a new
// checkpoint.
const checkpointPoll = time.Second

// checkpointBaseline is what wait_for = "checkpoint" compares with
// (checkpoint.Baseline).
type checkpointBaseline = checkpoint.Baseline

// checkpointStore is the deployment's checkpoint directory as bucket and key
// prefix (checkpoint.StoreOf).
func (m *deploymentModel) checkpointStore(ctx context.Context) (bucket, dir string, ok bool) {
	var d diag.Diagnostics
	cfg := stringMap(ctx, m.EffectiveConfig, &d)
	if d.HasError() {
		return "", "", false
	}
	return checkpoint.StoreOf(cfg)
}

// baseline reads the checkpoint baseline before the spec is written; only
// when wait_for = "checkpoint" applies to this change.
func (r *deploymentResource) baseline(ctx context.Context, plan *deploymentModel, live *unstructured.Unstructured, diags *diag.Diagnostics) checkpointBaseline {
	if live == nil || !plan.shape().WaitsForCheckpoint() {
		return checkpointBaseline{}
	}
	jobID, _, _ := unstructured.NestedString(live.Object, "status", "jobStatus", "jobId")
	bucket, dir, ok := plan.checkpointStore(ctx)
	if !checkpoint.ValidJobID(jobID) || !ok {
		return checkpointBaseline{}
	}
	a, err := r.meta.AWS(ctx)
	if err != nil {
		diags.AddWarning("Checkpoint baseline not read", checkpoint.BaselineWarning(err.Error(), true))
		return checkpointBaseline{JobID: jobID, After: -1}
	}
	actx, cancel := r.meta.boundAWS(ctx, kube.RequestTimeout)
	defer cancel()
	b, warning := checkpoint.ReadBaseline(actx, a.S3, bucket, dir, jobID, func(err error) string { return awsErr(actx, err) })
	if warning != "" {
		diags.AddWarning("Checkpoint baseline not read", warning)
	}
	return b
}

// waitCheckpoint is the end of wait_for = "checkpoint": once the job runs,
// a checkpoint of it completes after the change (newer than base), and its
// _metadata reads (checkpoint.WaitNew, kube.JobWatch). False (with the
// error in diags) when none did before until, or the job failed meanwhile.
//
// The wait ends at until (the resource's timeout from the write); its calls
// have their own deadlines.
func (r *deploymentResource) waitCheckpoint(ctx context.Context, c *kube.Client, plan *deploymentModel, base checkpointBaseline, jobID string, until time.Time, diags *diag.Diagnostics) bool {
	ctx, cancel := context.WithDeadline(ctx, until)
	defer cancel()
	bucket, dir, ok := plan.checkpointStore(ctx)
	if cause, todo := checkpoint.WaitUnready(jobID, ok); cause != "" {
		addProblem(diags, "Waiting for a checkpoint of", plan.subject(), cause, todo)
		return false
	}
	a := r.meta.awsOrDiag(ctx, diags)
	if a == nil {
		return false
	}
	actx, cancelAWS := r.meta.boundAWS(ctx, kube.RequestTimeout)
	after := base.AfterFor(actx, a.S3, bucket, dir, jobID)
	cancelAWS()
	watch := &kube.JobWatch{Dyn: c.Dynamic, Namespace: plan.Namespace.ValueString(), Name: plan.Name.ValueString(), CallTimeout: kube.RequestTimeout}
	cp, _, err := checkpoint.WaitNew(ctx, a.S3, checkpoint.NewCheckpoint{Bucket: bucket, Dir: dir, JobID: jobID, After: after,
		Every: checkpointPoll, CallTimeout: kube.RequestTimeout}, watch.Still)
	if err != nil {
		cause, todo := watch.NoCheckpoint(err)
		addProblem(diags, "Waiting for a checkpoint of", plan.subject(), cause, todo)
		return false
	}
	tflog.Info(ctx, "wait_for checkpoint: a checkpoint completed after the change", map[string]any{"path": cp.Path, "id": cp.ID})
	return true
}
