package flinkdeploy

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// The move's plan (MoveFacts.StoppedWith) and the final stop at apply
// (kube.FinalStopSource) read the same rule from the same status: a job
// not running that a suspend in savepoint mode stopped with a savepoint
// (AbstractJobReconciler.setUpgradeSavepointPath) is stopped with it; a
// running job is to be stopped; anything else has no savepoint to give.
func TestStoppedWithAgreesWithFinalStop(t *testing.T) {
	for _, job := range []string{"RUNNING", "FINISHED", "FAILED", "RECONCILING", ""} {
		for _, lifecycle := range []string{"SUSPENDED", "STABLE", "FAILED", ""} {
			for _, p := range []string{"", "s3://b/sp/savepoint-1", LastStateDummyPath} {
				obj := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{
					"lifecycleState": lifecycle, "jobStatus": map[string]any{"state": job, "upgradeSavepointPath": p}}}}
				existing, ok := kube.FinalStopSource(obj)
				stopped, with := MoveFacts{JobState: job, LifecycleState: lifecycle, UpgradeSavepointPath: p}.StoppedWith()
				if job == "RUNNING" {
					if !ok || existing != "" || with {
						t.Errorf("%s/%s/%q: final stop %q %v, move %q %v: a running job is to be stopped", job, lifecycle, p, existing, ok, stopped, with)
					}
					continue
				}
				if ok != with || existing != stopped {
					t.Errorf("%s/%s/%q: final stop %q %v, move %q %v", job, lifecycle, p, existing, ok, stopped, with)
				}
			}
		}
	}
}
