package kube

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/dynamic"
)

// JobWatch reads a FlinkDeployment's job at each poll of wait_for =
// "checkpoint" (checkpoint.WaitNew's still): a job that fails before it
// completed a checkpoint ends the wait. RUNNING alone says little: a job
// reports RUNNING while its tasks wait for slots, loop in restarts or fail
// every checkpoint.
type JobWatch struct {
	Dyn             dynamic.Interface
	Namespace, Name string
	// CallTimeout bounds each read.
	CallTimeout time.Duration
	last        DeploymentStatus
}

// Still reads the object; its error (the job or lifecycle FAILED) ends
// the wait. A read that fails is tried again at the next poll.
func (w *JobWatch) Still(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(ctx, w.CallTimeout)
	defer cancel()
	live, err := GetFlinkDeployment(rctx, w.Dyn, w.Namespace, w.Name)
	if err != nil {
		return nil // read again at the next poll
	}
	w.last = ReadDeploymentStatus(live)
	if w.last.JobState == "FAILED" || w.last.LifecycleState == "FAILED" {
		return fmt.Errorf("the job is %s (lifecycle %s) before it completed a checkpoint: %s", noneWord(w.last.JobState),
			noneWord(w.last.LifecycleState), OperatorMessage(w.last.Error))
	}
	return nil
}

// NoCheckpoint words a wait that ended without a checkpoint (err, the
// wait's): its cause, with what the operator last reported, and what to do.
func (w *JobWatch) NoCheckpoint(err error) (cause, todo string) {
	return fmt.Sprintf("%s; the operator last reported the job %s (lifecycle %s)", err, noneWord(w.last.JobState), noneWord(w.last.LifecycleState)),
		"The spec is written and the job was RUNNING, but Flink completed no checkpoint of it: its tasks may wait for slots or restart in a loop, " +
			"or every checkpoint fails (a role that cannot write the checkpoint directory, a checkpoint timeout). Without " +
			"execution.checkpointing.interval only the job's own code turns checkpointing on. The next apply waits again; " +
			"wait_for = \"running\" ends at RUNNING."
}
