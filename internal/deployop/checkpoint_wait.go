package deployop

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// checkpointPoll is how often wait_for = "checkpoint" looks for a new
// checkpoint.
const checkpointPoll = time.Second

// Baseline reads, before the spec is written, what wait_for = "checkpoint"
// compares with (checkpoint.ReadBaseline), when want waits for a
// checkpoint and the object is live: the newest completed checkpoint of
// the job it reports, under the checkpoint directory of cfg (the planned
// effective configuration: checkpoint.StoreOf). Without a valid job id or
// an s3:// checkpoint directory there is nothing to compare with (zero).
// warning says that it could not be read, and what the wait then does.
func (e Env) Baseline(ctx context.Context, want flinkdeploy.Desired, live *unstructured.Unstructured, cfg map[string]string) (b checkpoint.Baseline, warning string) {
	if live == nil || !want.WaitsForCheckpoint() {
		return checkpoint.Baseline{}, ""
	}
	jobID := kube.ReadDeploymentStatus(live).JobID
	bucket, dir, ok := checkpoint.StoreOf(cfg)
	if !checkpoint.ValidJobID(jobID) || !ok {
		return checkpoint.Baseline{}, ""
	}
	s3, err := e.S3(ctx)
	if err != nil {
		return checkpoint.Baseline{JobID: jobID, After: -1}, checkpoint.BaselineWarning(err.Error(), true)
	}
	actx, cancel := e.Bound(ctx, kube.RequestTimeout)
	defer cancel()
	return checkpoint.ReadBaseline(actx, s3, bucket, dir, jobID, func(err error) string { return e.Words(actx, err) })
}

// CheckpointWait is the end of wait_for = "checkpoint" on the
// FlinkDeployment Namespace/Name once its job JobID (as the operator
// reports it after the change) runs: a checkpoint of it newer than Base
// under the checkpoint directory of Config (its effective configuration),
// before Until (the resource's timeout from the write).
type CheckpointWait struct {
	Namespace, Name, JobID string
	Config                 map[string]string
	Base                   checkpoint.Baseline
	Until                  time.Time
}

// checkpointWaitVerb is the verb of the wait's problems ("Waiting for a checkpoint
// of FlinkDeployment ns/name failed").
const checkpointWaitVerb = "Waiting for a checkpoint of"

// WaitCheckpoint waits for w's checkpoint, and for its _metadata to read
// (checkpoint.WaitNew, kube.JobWatch): it returns the checkpoint, or the
// wait's problem (rep: no job id or checkpoint directory to wait on, none
// before w.Until, or the job failed meanwhile), or err when there is no S3
// client. Its calls have their own deadlines.
func (e Env) WaitCheckpoint(ctx context.Context, dyn dynamic.Interface, w CheckpointWait) (cp *checkpoint.Checkpoint, rep *kube.Report, err error) {
	ctx, cancel := context.WithDeadline(ctx, w.Until)
	defer cancel()
	bucket, dir, ok := checkpoint.StoreOf(w.Config)
	if cause, todo := checkpoint.WaitUnready(w.JobID, ok); cause != "" {
		return nil, &kube.Report{Verb: checkpointWaitVerb, Detail: cause, Advice: todo}, nil
	}
	s3, err := e.S3(ctx)
	if err != nil {
		return nil, nil, err
	}
	actx, cancelAWS := e.Bound(ctx, kube.RequestTimeout)
	after := w.Base.AfterFor(actx, s3, bucket, dir, w.JobID)
	cancelAWS()
	watch := &kube.JobWatch{Dyn: dyn, Namespace: w.Namespace, Name: w.Name, CallTimeout: kube.RequestTimeout}
	cp, _, err = checkpoint.WaitNew(ctx, s3, checkpoint.NewCheckpoint{Bucket: bucket, Dir: dir, JobID: w.JobID, After: after,
		Every: checkpointPoll, CallTimeout: kube.RequestTimeout}, watch.Still)
	if err != nil {
		cause, todo := watch.NoCheckpoint(err)
		return nil, &kube.Report{Verb: checkpointWaitVerb, Detail: cause, Advice: todo}, nil
	}
	return cp, nil, nil
}
