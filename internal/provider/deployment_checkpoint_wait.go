package provider

import (
	"context"
	"fmt"
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

// checkpointBaseline is what wait_for = "checkpoint" compares with: the
// job id the live object reports before the change and the newest
// completed checkpoint id of that job (0 for none). A job that keeps its
// id across the change (a last-state upgrade: the operator resumes the same
// job from its HA metadata) numbers its checkpoints on from there.
type checkpointBaseline struct {
	JobID string
	After int64
}

// checkpointStore is the deployment's checkpoint directory as bucket and key
// prefix (execution.checkpointing.dir, or its deprecated key).
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
		diags.AddWarning("Checkpoint baseline not read", "wait_for = \"checkpoint\": "+err.Error()+"; the wait takes any completed checkpoint of a new job id, and of this one only its next one.")
		return checkpointBaseline{JobID: jobID, After: -1}
	}
	actx, cancel := r.meta.boundAWS(ctx, kube.RequestTimeout)
	defer cancel()
	cp, err := checkpoint.Latest(actx, a.S3, bucket, dir, jobID)
	switch {
	case err != nil:
		diags.AddWarning("Checkpoint baseline not read", "wait_for = \"checkpoint\": "+awsErr(actx, err)+"; the wait waits for a checkpoint of the job it finds running after the change.")
		return checkpointBaseline{JobID: jobID, After: -1}
	case cp == nil:
		return checkpointBaseline{JobID: jobID}
	}
	return checkpointBaseline{JobID: jobID, After: cp.ID}
}

// waitCheckpoint is the end of wait_for = "checkpoint": once the job runs,
// a checkpoint of it completes after the change, and its _metadata reads.
// False (with the error in diags) when none did before until, or the job
// failed meanwhile.
//
// The wait ends at until (the resource's timeout from the write); its calls
// have their own deadlines.
func (r *deploymentResource) waitCheckpoint(ctx context.Context, c *kube.Client, plan *deploymentModel, base checkpointBaseline, jobID string, until time.Time, diags *diag.Diagnostics) bool {
	ctx, cancel := context.WithDeadline(ctx, until)
	defer cancel()
	ns, name := plan.Namespace.ValueString(), plan.Name.ValueString()
	what := "FlinkDeployment " + ns + "/" + name
	bucket, dir, ok := plan.checkpointStore(ctx)
	if !ok || !checkpoint.ValidJobID(jobID) {
		addProblem(diags, "Waiting for a checkpoint of", what, fmt.Sprintf("wait_for = \"checkpoint\" needs a job id (the operator reports %q) and an s3:// checkpoint directory (execution.checkpointing.dir)", jobID),
			"Set wait_for = \"running\", or give the job a checkpoint directory (the state block).")
		return false
	}
	a := r.meta.awsOrDiag(ctx, diags)
	if a == nil {
		return false
	}
	after := int64(0)
	if jobID == base.JobID {
		after = base.After
	}
	if after < 0 {
		// The baseline could not be read: a checkpoint completed from now on
		// is new.
		actx, cancel := r.meta.boundAWS(ctx, kube.RequestTimeout)
		cp, err := checkpoint.Latest(actx, a.S3, bucket, dir, jobID)
		cancel()
		after = 0
		if err == nil && cp != nil {
			after = cp.ID
		}
	}
	var last kube.DeploymentStatus
	still := func(ctx context.Context) error {
		rctx, cancel := context.WithTimeout(ctx, kube.RequestTimeout)
		defer cancel()
		live, err := kube.GetFlinkDeployment(rctx, c.Dynamic, ns, name)
		if err != nil {
			return nil // read again at the next poll
		}
		last = kube.ReadDeploymentStatus(live)
		if last.JobState == "FAILED" || last.LifecycleState == "FAILED" {
			return fmt.Errorf("the job is %s (lifecycle %s) before it completed a checkpoint: %s", orNoneState(last.JobState), orNoneState(last.LifecycleState), kube.OperatorMessage(last.Error))
		}
		return nil
	}
	cp, _, err := checkpoint.WaitNew(ctx, a.S3, checkpoint.NewCheckpoint{Bucket: bucket, Dir: dir, JobID: jobID, After: after, Every: checkpointPoll, CallTimeout: kube.RequestTimeout}, still)
	if err != nil {
		addProblem(diags, "Waiting for a checkpoint of", what,
			fmt.Sprintf("%s; the operator last reported the job %s (lifecycle %s)", err, orNoneState(last.JobState), orNoneState(last.LifecycleState)),
			"The spec is written and the job was RUNNING, but Flink completed no checkpoint of it: its tasks may wait for slots or restart in a loop, "+
				"or every checkpoint fails (a role that cannot write the checkpoint directory, a checkpoint timeout). Without "+
				"execution.checkpointing.interval only the job's own code turns checkpointing on. The next apply waits again; "+
				"wait_for = \"running\" ends at RUNNING.")
		return false
	}
	tflog.Info(ctx, "wait_for checkpoint: a checkpoint completed after the change", map[string]any{"path": cp.Path, "id": cp.ID})
	return true
}
