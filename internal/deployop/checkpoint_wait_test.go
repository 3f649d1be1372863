package deployop

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	dynfake "k8s.io/client-go/dynamic/fake"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
)

// liveDeployment is FlinkDeployment ns/orders whose operator reports job id
// and job state.
func liveDeployment(id, state string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkDeployment",
		"metadata": map[string]any{"name": "orders", "namespace": "ns"},
		"status":   map[string]any{"jobStatus": map[string]any{"jobId": id, "state": state}},
	}}
}

// The baseline is the newest checkpoint of the job the live object
// reports, read only when the change waits for a checkpoint; one that
// cannot be read is -1, with the warning that says what the wait does.
func TestBaseline(t *testing.T) {
	waits := flinkdeploy.Desired{HasJob: true, WaitFor: flinkdeploy.WaitCheckpoint}
	s := checkpointedBucket(t)
	b, warning := preflightEnv(s).Baseline(context.Background(), waits, liveDeployment(preflightJob, "RUNNING"), preflightStore)
	if b != (checkpoint.Baseline{JobID: preflightJob, After: 3}) || warning != "" {
		t.Errorf("read: %+v %q", b, warning)
	}
	b, warning = preflightEnv(nil).Baseline(context.Background(), waits, liveDeployment(preflightJob, "RUNNING"), preflightStore)
	if b != (checkpoint.Baseline{JobID: preflightJob, After: -1}) || warning != checkpoint.BaselineWarning("no AWS credentials", true) {
		t.Errorf("no client: %+v %q", b, warning)
	}
	calls := s.calls
	for name, c := range map[string]struct {
		want flinkdeploy.Desired
		live *unstructured.Unstructured
		cfg  map[string]string
	}{
		"wait_for running":        {flinkdeploy.Desired{HasJob: true, WaitFor: "running"}, liveDeployment(preflightJob, "RUNNING"), preflightStore},
		"a new object":            {waits, nil, preflightStore},
		"no job id yet":           {waits, liveDeployment("", ""), preflightStore},
		"no checkpoint directory": {waits, liveDeployment(preflightJob, "RUNNING"), map[string]string{}},
	} {
		if b, warning := preflightEnv(s).Baseline(context.Background(), c.want, c.live, c.cfg); b != (checkpoint.Baseline{}) || warning != "" {
			t.Errorf("%s: %+v %q", name, b, warning)
		}
	}
	if s.calls != calls {
		t.Errorf("%d S3 calls without a baseline to read", s.calls-calls)
	}
}

// The wait ends at a checkpoint newer than the baseline; without a job id
// or a checkpoint directory, or when the job fails, it ends with the
// problem worded for "Waiting for a checkpoint of ... failed"; without an
// S3 client, with that error.
func TestWaitCheckpoint(t *testing.T) {
	w := CheckpointWait{Namespace: "ns", Name: "orders", JobID: preflightJob, Config: preflightStore, Base: checkpoint.Baseline{JobID: preflightJob, After: 2},
		Until: time.Now().Add(time.Minute)}
	runningDyn := dynfake.NewSimpleDynamicClient(runtime.NewScheme(), liveDeployment(preflightJob, "RUNNING"))
	cp, rep, err := preflightEnv(checkpointedBucket(t)).WaitCheckpoint(context.Background(), runningDyn, w)
	if err != nil || rep != nil || cp == nil || cp.ID != 3 {
		t.Errorf("new checkpoint: %+v %+v %v", cp, rep, err)
	}
	failed := dynfake.NewSimpleDynamicClient(runtime.NewScheme(), liveDeployment(preflightJob, "FAILED"))
	w.Base.After = 3
	cp, rep, err = preflightEnv(checkpointedBucket(t)).WaitCheckpoint(context.Background(), failed, w)
	if err != nil || cp != nil || rep == nil || rep.Verb != "Waiting for a checkpoint of" ||
		!strings.HasPrefix(rep.Detail, "the job is FAILED (lifecycle (none)) before it completed a checkpoint") ||
		!strings.HasPrefix(rep.Advice, "The spec is written and the job was RUNNING") {
		t.Errorf("failed job: %+v %+v %v", cp, rep, err)
	}
	w.Config = map[string]string{}
	_, rep, _ = preflightEnv(checkpointedBucket(t)).WaitCheckpoint(context.Background(), runningDyn, w)
	if rep == nil || rep.Verb != "Waiting for a checkpoint of" || !strings.Contains(rep.Detail, "an s3:// checkpoint directory") ||
		!strings.HasPrefix(rep.Advice, `Set wait_for = "running"`) {
		t.Errorf("no checkpoint directory: %+v", rep)
	}
	w.Config = preflightStore
	if _, rep, err = preflightEnv(nil).WaitCheckpoint(context.Background(), runningDyn, w); rep != nil || err == nil || err.Error() != "no AWS credentials" {
		t.Errorf("no client: %+v %v", rep, err)
	}
}
