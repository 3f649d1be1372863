package kube

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
)

// SavepointBeforeUpgrade is savepoint_before_upgrade at apply, for an
// update that changes the job of a running deployment
// (flinkdeploy.TakesUpgradeSavepoint): it takes a savepoint of the running
// job and waits for COMPLETED (Run). An error finding leaves the
// deployment untouched: the caller must not apply.
type SavepointBeforeUpgrade struct {
	Namespace, Name string
	// Format is the savepoint's format (the running job's backend takes
	// it: flinkconf.SavepointFormatFor).
	Format string
	// Hash is the new spec's (flinkdeploy.Spec.Hash; "" unknown).
	Hash string
	// Timeout bounds the wait for the savepoint, polled Every.
	Timeout, Every time.Duration
	// For a job that is not running (NotRunningUpgrade): Redeploys, a new
	// job.initial_savepoint_path (RestorePath); UpgradeMode the new
	// spec's; HA tells whether the new spec has Kubernetes HA.
	Redeploys   bool
	RestorePath string
	UpgradeMode string
	HA          func() bool
	// APIError words an API server's error (the provider's).
	APIError func(error) string
}

// upgradeAttr is the attribute the findings concern.
var upgradeAttr = []string{"savepoint_before_upgrade"}

func (u SavepointBeforeUpgrade) failed(detail string) []flinkconf.Finding {
	return []flinkconf.Finding{{Severity: flinkconf.Error, Path: upgradeAttr, Summary: "Savepoint before upgrade failed", Detail: detail}}
}

// Run takes the savepoint and returns its path ("" when none was taken).
func (u SavepointBeforeUpgrade) Run(ctx context.Context, dyn dynamic.Interface) (string, []flinkconf.Finding) {
	ns, name := u.Namespace, u.Name
	live, err := GetFlinkDeployment(ctx, dyn, ns, name)
	if err != nil {
		return "", u.failed(fmt.Sprintf("FlinkDeployment %s/%s was not changed: reading it: %s", ns, name, u.APIError(err)))
	}
	// The savepoint an interrupted apply of this same change started (same
	// target spec, nothing applied since), or a new FlinkStateSnapshot of the
	// deployment's job, kept (not disposed) when the object is deleted;
	// backoffLimit 0: one attempt, its failure is the update's
	// (FlinkStateSnapshotSpec, operator release-1.15.0).
	//
	// Only this object's, of its running job (UpgradeTarget): a kept
	// savepoint of an earlier FlinkDeployment of the same name is another
	// job's state.
	if st := ReadDeploymentStatus(live); st.JobState != "RUNNING" {
		return "", u.NotRunningUpgrade(ctx, dyn, live)
	}
	target := UpgradeTargetOf(live, u.Hash)
	snapshot, err := PendingUpgradeSavepoint(ctx, dyn, ns, target)
	if err == nil && snapshot == "" {
		var created *unstructured.Unstructured
		created, err = CreateSnapshot(ctx, dyn, ns, UpgradeSavepointObject(ns, u.Format, target))
		if err == nil {
			snapshot = created.GetName()
		}
	}
	if err != nil {
		return "", u.failed(fmt.Sprintf("FlinkDeployment %s/%s was not changed: creating the FlinkStateSnapshot: %s", ns, name, u.APIError(err)))
	}
	st, err := WaitSnapshot(ctx, dyn, ns, snapshot, u.Timeout, u.Every)
	if err != nil {
		return "", u.failed(fmt.Sprintf("FlinkDeployment %s/%s was not changed and keeps running its current spec: %s. Fix the cause and apply again "+
			"(if this savepoint is still under way, that apply waits for it rather than taking another), or remove "+
			"savepoint_before_upgrade to upgrade without one.", ns, name, err))
	}
	return st.Path, nil
}

// NotRunningUpgrade is savepoint_before_upgrade for a job that is not
// running (live): no savepoint can be taken (the operator abandons a
// savepoint of a job that is not running: SnapshotObserver, "… is not
// running"), so none is asked for; the change goes ahead where the
// operator restores the new spec by itself (NotRunningRestore) and is
// refused, with the way out, where it would wait for ever or refuse it. A
// redeploy from a new job.initial_savepoint_path needs no upgradeable
// state (the operator handles SAVEPOINT_REDEPLOY before getJobUpgrade:
// AbstractJobReconciler.reconcileSpecChange).
func (u SavepointBeforeUpgrade) NotRunningUpgrade(ctx context.Context, dyn dynamic.Interface, live *unstructured.Unstructured) []flinkconf.Finding {
	ns, name := u.Namespace, u.Name
	st := ReadDeploymentStatus(live)
	job := fmt.Sprintf("its job is %s (lifecycle %s, JobManager %s)", noneWord(st.JobState), noneWord(st.LifecycleState), noneWord(jobManagerStatus(live)))
	warn := func(summary, detail string) []flinkconf.Finding {
		return []flinkconf.Finding{{Severity: flinkconf.Warning, Path: upgradeAttr, Summary: summary, Detail: detail}}
	}
	if u.Redeploys {
		return warn("No savepoint before this redeploy",
			fmt.Sprintf("FlinkDeployment %s/%s: %s, so no savepoint can be taken first; the job is redeployed from job.initial_savepoint_path %s.",
				ns, name, job, u.RestorePath))
	}
	src, err := NotRunningRestore(ctx, dyn, live, u.UpgradeMode, u.HA != nil && u.HA())
	if err != nil {
		return u.failed(fmt.Sprintf("FlinkDeployment %s/%s was not changed: %s, so no savepoint can be taken, and what the operator would restore "+
			"from could not be read: %s. Apply again.", ns, name, job, u.APIError(err)))
	}
	if src.Proceeds {
		return warn("No savepoint before this upgrade",
			fmt.Sprintf("FlinkDeployment %s/%s: %s, so no savepoint can be taken (the operator abandons a savepoint of a job that is "+
				"not running). The change goes ahead: the new spec starts from %s (%s).", ns, name, job, src.From, src.Why))
	}
	from := "a complete savepoint or checkpoint of this job (data.flinkstate_latest_checkpoint with complete = true finds the newest " +
		"retained checkpoint)"
	if p := RecordedSavepoint(live); p != "" && p != LastStateDummyPath {
		from = "the savepoint the operator recorded, " + p + ", or another complete savepoint or checkpoint (data.flinkstate_latest_checkpoint " +
			"with complete = true finds the newest retained checkpoint)"
	}
	return []flinkconf.Finding{{Severity: flinkconf.Error, Path: upgradeAttr, Summary: "No savepoint can be taken before this upgrade",
		Detail: fmt.Sprintf("FlinkDeployment %s/%s was not changed: %s, so no savepoint can be taken (the operator abandons a savepoint of a job "+
			"that is not running), and the operator would not restore the new spec by itself: it has %s (%s).\n\nWays out: set "+
			"job.initial_savepoint_path to %s: the operator redeploys from it without a running job. Or, if the job holds no state worth "+
			"keeping, set job.upgrade_mode = \"stateless\": the job starts from empty state.", ns, name, job, src.From, src.Why, from)}}
}

// noneWord is s, or "(none)" for an empty status field.
func noneWord(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
