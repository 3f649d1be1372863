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

// deployment is FlinkDeployment ns/orders whose operator reports job id
// and job state.
func deployment(id, state string) *unstructured.Unstructured {
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
	s := checkpointed(t)
	b, warning := env(s).Baseline(context.Background(), waits, deployment(job, "RUNNING"), store)
	if b != (checkpoint.Baseline{JobID: job, After: 3}) || warning != "" {
		t.Errorf("read: %+v %q", b, warning)
	}
	b, warning = env(nil).Baseline(context.Background(), waits, deployment(job, "RUNNING"), store)
	if b != (checkpoint.Baseline{JobID: job, After: -1}) || warning != checkpoint.BaselineWarning("no AWS credentials", true) {
		t.Errorf("no client: %+v %q", b, warning)
	}
	calls := s.calls
	for name, c := range map[string]struct {
		want flinkdeploy.Desired
		live *unstructured.Unstructured
		cfg  map[string]string
	}{
		"wait_for running":        {flinkdeploy.Desired{HasJob: true, WaitFor: "running"}, deployment(job, "RUNNING"), store},
		"a new object":            {waits, nil, store},
		"no job id yet":           {waits, deployment("", ""), store},
		"no checkpoint directory": {waits, deployment(job, "RUNNING"), map[string]string{}},
	} {
		if b, warning := env(s).Baseline(context.Background(), c.want, c.live, c.cfg); b != (checkpoint.Baseline{}) || warning != "" {
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
	w := CheckpointWait{Namespace: "ns", Name: "orders", JobID: job, Config: store, Base: checkpoint.Baseline{JobID: job, After: 2},
		Until: time.Now().Add(time.Minute)}
	running := dynfake.NewSimpleDynamicClient(runtime.NewScheme(), deployment(job, "RUNNING"))
	cp, rep, err := env(checkpointed(t)).WaitCheckpoint(context.Background(), running, w)
	if err != nil || rep != nil || cp == nil || cp.ID != 3 {
		t.Errorf("new checkpoint: %+v %+v %v", cp, rep, err)
	}
	failed := dynfake.NewSimpleDynamicClient(runtime.NewScheme(), deployment(job, "FAILED"))
	w.Base.After = 3
	cp, rep, err = env(checkpointed(t)).WaitCheckpoint(context.Background(), failed, w)
	if err != nil || cp != nil || rep == nil || rep.Verb != "Waiting for a checkpoint of" ||
		!strings.HasPrefix(rep.Detail, "the job is FAILED (lifecycle (none)) before it completed a checkpoint") ||
		!strings.HasPrefix(rep.Advice, "The spec is written and the job was RUNNING") {
		t.Errorf("failed job: %+v %+v %v", cp, rep, err)
	}
	w.Config = map[string]string{}
	_, rep, _ = env(checkpointed(t)).WaitCheckpoint(context.Background(), running, w)
	if rep == nil || rep.Verb != "Waiting for a checkpoint of" || !strings.Contains(rep.Detail, "an s3:// checkpoint directory") ||
		!strings.HasPrefix(rep.Advice, `Set wait_for = "running"`) {
		t.Errorf("no checkpoint directory: %+v", rep)
	}
	w.Config = store
	if _, rep, err = env(nil).WaitCheckpoint(context.Background(), running, w); rep != nil || err == nil || err.Error() != "no AWS credentials" {
		t.Errorf("no client: %+v %v", rep, err)
	}
}
