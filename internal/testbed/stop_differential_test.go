package testbed

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// TestDifferential_stopLastStateJob (issue 45): the provider's handover
// stop (kube.StopWithSavepoint: job.state suspended in savepoint upgrade
// mode, the savepoint's format in the spec) of a running last-state job,
// on the model and on the real operator 1.15.0 with its pods run as real
// Flink: the operator stops the job with a savepoint into the savepoint
// dir (AbstractJobReconciler.getJobUpgrade: a SAVEPOINT spec of a running
// job → SuspendMode.SAVEPOINT → savepointJobOrError), records it in
// status.jobStatus.upgradeSavepointPath with the lifecycle SUSPENDED, and
// the job prints nothing more after it (real Flink: its counts stop).
func TestDifferential_stopLastStateJob(t *testing.T) {
	modelAndReal(t, stopLastStateJob)
}

func stopLastStateJob(t *testing.T, b *bed, s *realStack) {
	ctx := context.Background()
	b.createDeploymentEdited(t, "orders", modeLastState, nil, func(spec map[string]any) { withKubernetesHA(b, "orders", spec) })
	first := b.runningAt(t, "orders")
	var old *FlinkCluster
	if s != nil {
		old = s.current(t, "orders")
		if _, _, err := old.WaitCounts(ctx, 2, 2*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	res, err := kube.StopWithSavepoint(ctx, b.dyn, b.ns, "orders", kube.StopOptions{FormatType: "CANONICAL", Retries: 3}, b.wait, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, sp := b.dirs("orders")
	t.Logf("stopped: %s, lifecycle %s, job %s", res.Path, res.LifecycleState, res.JobState)
	if !strings.HasPrefix(res.Path, sp+"/savepoint-"+first.JobID[:6]+"-") || !b.exists(t, res.Path+"/_metadata") {
		t.Errorf("stop savepoint %q: want a savepoint of job %s under %s, with _metadata", res.Path, first.JobID, sp)
	}
	if res.LifecycleState != "SUSPENDED" || res.JobState != "FINISHED" {
		t.Errorf("after the stop: lifecycle %s, job %s; want SUSPENDED, FINISHED", res.LifecycleState, res.JobState)
	}
	if s == nil {
		return
	}
	_, stopped := old.Counts()
	time.Sleep(5 * time.Second)
	if _, later := old.Counts(); fmt.Sprint(later) != fmt.Sprint(stopped) {
		t.Errorf("the job printed on after its stop: %v, then %v", stopped, later)
	}
}
