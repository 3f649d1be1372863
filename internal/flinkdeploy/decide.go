package flinkdeploy

import (
	"fmt"
	"strings"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
)

// The operator's rules on a change of a deployment, read from a prior and
// a planned Desired: whether it redeploys or upgrades, what the job
// restores from, what it refuses, and what a create or update waits for.

// Desired is a deployment as the configuration asks for it (planned) or as
// the state records it (prior), in the terms the operator's rules read. The
// provider's adapter builds it from its model (as far as known at plan);
// the decisions compare two of them here.
type Desired struct {
	// Spec is the spec the provider writes; nil while part of it is
	// unknown (at plan).
	Spec *Spec
	// Mode is spec.mode ("": unset); ModeUnknown: unknown (at plan).
	Mode        string
	ModeUnknown bool
	// FlinkVersion is the full Flink version; "" while unknown.
	FlinkVersion string
	// HasJob: a job block (an application cluster, not a session one).
	HasJob bool
	// JobState is job.state as written ("": running, JobSpec.state's
	// default); UpgradeMode job.upgrade_mode; RestorePath
	// job.initial_savepoint_path ("" when unset or unknown).
	JobState, UpgradeMode, RestorePath string
	// FinalSavepoint is final_savepoint (true when unset); SavepointFirst:
	// savepoint_before_upgrade is set.
	FinalSavepoint, SavepointFirst bool
	// DrainOnDestroy is drain_on_destroy.
	DrainOnDestroy bool
	// WaitFor is wait_for: none, deployed, running or checkpoint.
	WaitFor string
}

// WaitCheckpoint is wait_for = "checkpoint": the job runs (the operator's
// wait for "running") and then Flink completes a checkpoint of the new spec.
// RUNNING alone says little: a job reports RUNNING while its tasks wait
// for slots, loop in restarts or fail every checkpoint (Flink's job status
// is RUNNING from the moment its scheduler starts: JobStatus.RUNNING
// covers a job whose tasks are still being deployed).
const WaitCheckpoint = "checkpoint"

// WaitsForCheckpoint tells whether create and update, after the job runs,
// wait for a checkpoint completed after the spec was written.
func (d Desired) WaitsForCheckpoint() bool {
	return d.WaitFor == WaitCheckpoint && d.HasJob && d.RunState() == JobRunning
}

// Job states (JobSpec.state, flink-kubernetes-operator-api release-1.15.0).
const (
	JobRunning   = "running"
	JobSuspended = "suspended"
)

// WaitSuspended is what a create or update of a suspended job waits for
// (kube.WaitSuspended: lifecycleState SUSPENDED).
const WaitSuspended = JobSuspended

// RunState is job.state, running when unset (JobSpec.state's default).
func (d Desired) RunState() string {
	if !d.HasJob || d.JobState == "" {
		return JobRunning
	}
	return d.JobState
}

// Stateful: the upgrade mode keeps the job's state across an upgrade
// (the operator restores the upgrade savepoint or the last state:
// AbstractJobReconciler.restoreJob); stateless restores nothing.
func (d Desired) Stateful() bool {
	return d.UpgradeMode == flinkconf.UpgradeSavepoint || d.UpgradeMode == flinkconf.UpgradeLastState
}

// KeepsState: a destroy or replacement takes a final savepoint first (a
// job with a stateful upgrade mode, and final_savepoint not turned off).
// Deleting a FlinkDeployment makes the operator cancel a running job
// without a savepoint (kubernetes.operator.job.savepoint-on-deletion
// defaults to false) and delete its HA metadata
// (ApplicationReconciler.cleanupInternal; release-1.15.0).
func (d Desired) KeepsState() bool {
	return d.HasJob && d.FinalSavepoint && d.Stateful()
}

// FinalDrain tells whether the stop that takes a final savepoint drains
// the job (Flink's stop-with-savepoint with drain: MAX_WATERMARK before the
// savepoint, so every event-time timer and window fires; the operator
// passes kubernetes.operator.job.drain-on-savepoint-deletion, default false,
// as drain: AbstractFlinkService.savepointJobOrError, release-1.15.0): only
// on a permanent destroy, and only when drain_on_destroy asks for it. A
// replacement never drains: Flink's CLI documentation says to drain only a
// job that terminates permanently, since a job resumed from a drained
// savepoint can produce incorrect results (its windows fired already, at
// a watermark of the end of time).
func (d Desired) FinalDrain(replacing bool) bool {
	return d.DrainOnDestroy && !replacing
}

// What a replacement's job starts from (ReplacementRestores).
const (
	// FromHandover: the final savepoint the destroy half takes of the
	// old job (carried: the provider's CarryTo).
	FromHandover = "handover"
	// FromPinned: job.initial_savepoint_path.
	FromPinned = "pinned"
	// FromNothing: empty state.
	FromNothing = "nothing"
)

// ReplacementRestores says what the job of planned, which replaces prior,
// starts from, and whether that is ambiguous. oldHasState: the old job
// runs, or is suspended with its savepoint, so the destroy half takes or
// records a final savepoint.
//
// A replacement whose configuration still sets the job.initial_savepoint_path
// the old deployment was created with (commonly a data source read at an
// earlier plan, kept with ignore_changes) would restore that path, not the
// handover: the create restores initialSavepointPath when set
// (JobSpec.initialSavepointPath, read on a first deployment), so the state
// would roll back to that older savepoint, or the create be refused once
// the old job is gone if the path was cleaned up. That case is ambiguous:
// the caller refuses it. A path set or changed by this plan is the user's
// choice, and wins.
func ReplacementRestores(prior, planned Desired, oldHasState bool) (from string, ambiguous bool) {
	switch {
	case planned.RestorePath == "" && prior.KeepsState() && oldHasState:
		return FromHandover, false
	case planned.RestorePath == "":
		return FromNothing, false
	case prior.KeepsState() && oldHasState && planned.RestorePath == prior.RestorePath:
		return FromPinned, true
	}
	return FromPinned, false
}

// WaitTarget is what create and update wait for: wait_for, except that a
// spec with job.state suspended waits for the suspend (WaitSuspended),
// since a suspended job is never DEPLOYED, STABLE or RUNNING
// (CommonStatus.getLifecycleState).
func (d Desired) WaitTarget() string {
	if d.WaitFor != "none" && d.HasJob && d.JobState == JobSuspended {
		return WaitSuspended
	}
	if d.WaitFor == WaitCheckpoint {
		// The checkpoint is waited for once the job runs (WaitsForCheckpoint).
		return "running"
	}
	return d.WaitFor
}

// Redeploys tells whether planned points an existing deployment (prior) at
// a new restore path: the operator then needs a new savepointRedeployNonce
// (it reads initialSavepointPath only on a job's first deployment
// otherwise: JobSpec.initialSavepointPath's javadoc, release-1.15.0).
func Redeploys(prior, planned Desired) bool {
	return planned.RestorePath != "" && planned.RestorePath != prior.RestorePath
}

// NextNonce is a new non-null nonce after prior's (nil: none yet): the
// operator redeploys on a change to a different non-null value
// (JobSpec.savepointRedeployNonce, flink-kubernetes-operator-api
// release-1.15.0).
func NextNonce(prior *int64) int64 {
	if prior == nil {
		return 1
	}
	return *prior + 1
}

// JobChanged tells whether the operator applies the change from prior to
// planned as an upgrade (Spec.UpgradeChanges); known is false while either
// spec is unknown.
func JobChanged(prior, planned Desired) (changed, known bool) {
	if prior.Spec == nil || planned.Spec == nil {
		return false, false
	}
	return prior.Spec.JobChanged(*planned.Spec), true
}

// TakesUpgradeSavepoint tells whether an update takes a savepoint before it
// is applied (savepoint_before_upgrade): the job runs, and the change is
// one the operator applies as an upgrade, or may be (a spec still
// unknown). A suspended job cannot take one: its suspend took one
// (savepoint mode) or kept its HA metadata (last-state).
func TakesUpgradeSavepoint(prior, planned Desired) bool {
	changed, known := JobChanged(prior, planned)
	return planned.SavepointFirst && (changed || !known) && prior.RunState() == JobRunning
}

// Restores tells whether an update restores state, and from which path
// ("" when the operator picks it): a redeploy from a new
// initial_savepoint_path (SAVEPOINT_REDEPLOY), or an upgrade or resume of a
// job whose upgrade mode keeps state (the operator restores the upgrade
// savepoint or the last state: AbstractJobReconciler.restoreJob). A
// stateless upgrade restores nothing, and neither does a suspended job.
func Restores(prior, planned Desired) (bool, string) {
	if planned.RunState() != JobRunning {
		return false, ""
	}
	if Redeploys(prior, planned) {
		return true, planned.RestorePath
	}
	if !planned.HasJob || !planned.Stateful() {
		return false, ""
	}
	if prior.RunState() == JobSuspended {
		return true, ""
	}
	changed, known := JobChanged(prior, planned)
	return known && changed, ""
}

// Refusal is a change the operator refuses on an existing deployment: Attr
// is the attribute that makes it, Summary and Detail say why and what to do.
type Refusal struct {
	Attr, Summary, Detail string
}

// Refusals are the spec changes from prior to planned the operator refuses
// on an existing deployment (flink-kubernetes-operator release-1.15.0,
// DefaultValidator.validateSpecChange and validateFlinkVersion): its
// rejection would leave the old spec running and the apply waiting out its
// timeout.
func Refusals(prior, planned Desired) []Refusal {
	var out []Refusal
	if !planned.ModeUnknown && prior.Mode != "" && planned.Mode != prior.Mode {
		out = append(out, Refusal{"mode", "Deployment mode cannot change",
			fmt.Sprintf("mode %q → %q: the Flink operator refuses to switch an existing deployment between native and standalone "+
				"(DefaultValidator.validateSpecChange: \"Cannot switch from %s kubernetes to %s kubernetes cluster\"). Keep the mode, or "+
				"replace the deployment (terraform apply -replace) after taking a savepoint to start the new one from "+
				"(job.initial_savepoint_path).", prior.Mode, planned.Mode, prior.Mode, planned.Mode)})
	}
	if planned.HasJob != prior.HasJob {
		msg := "Cannot switch from session to job cluster"
		if !planned.HasJob {
			msg = "Cannot switch from job to session cluster"
		}
		out = append(out, Refusal{"job", "The job block cannot be added or removed",
			fmt.Sprintf("The Flink operator refuses to add or remove the job of an existing deployment (DefaultValidator.validateSpecChange: "+
				"%q). Replace the deployment instead (terraform apply -replace).", msg)})
	}
	if prior.HasJob && prior.RunState() == JobSuspended && prior.UpgradeMode == flinkconf.UpgradeLastState &&
		planned.HasJob && planned.UpgradeMode != flinkconf.UpgradeStateless {
		pv, errP := flinkconf.ParseVersion(planned.FlinkVersion)
		sv, errS := flinkconf.ParseVersion(prior.FlinkVersion)
		if errP == nil && errS == nil && pv.OperatorEnum() != sv.OperatorEnum() {
			out = append(out, Refusal{"flink_version", "Flink version cannot change while suspended",
				"The job was suspended with upgrade_mode last-state: the Flink operator refuses a flinkVersion change until it runs again " +
					"(DefaultValidator.validateFlinkVersion: \"Changing flinkVersion after last-state suspend is not allowed. Restore your " +
					"cluster with the current flinkVersion and perform the version upgrade afterwards.\"). Resume the job (job.state = " +
					"\"running\") with the current version first, then change flink_version."})
		}
	}
	return out
}

// UpgradeNotice is the plan's warning (summary and detail; "" for none)
// for an update the operator applies as an upgrade (changes:
// Spec.UpgradeChanges): that the job restarts and what state it restarts
// with. While the job is suspended and stays so, the operator applies
// nothing until it resumes (AbstractJobReconciler.reconcileSpecChange has
// no step from SUSPENDED to SUSPENDED; flink-kubernetes-operator
// release-1.15.0).
func UpgradeNotice(prior, planned Desired, changes []string) (summary, detail string) {
	if len(changes) == 0 {
		return "", ""
	}
	fields := strings.Join(changes, ", ")
	if prior.RunState() == JobSuspended && planned.RunState() == JobSuspended {
		return "Applied when the job resumes",
			fmt.Sprintf("The job is suspended: the operator records no spec change while it stays suspended, so this change (%s) "+
				"takes effect only when job.state is set back to running.", fields)
	}
	mode := "stateless"
	if planned.UpgradeMode != "" {
		mode = planned.UpgradeMode
	}
	var survives string
	switch mode {
	case "last-state":
		survives = "it resumes from its latest checkpoint (from the HA metadata, or after a cancel without it)"
		switch {
		case minorChanges(prior.FlinkVersion, planned.FlinkVersion):
			// AbstractJobReconciler.getJobUpgrade: flinkVersionChanged in
			// LAST_STATE → a savepoint while the job runs and a savepoint
			// directory is set ("Using savepoint to upgrade Flink version").
			survives = "since flink_version changes, the operator stops it with a savepoint instead of resuming from its latest " +
				"checkpoint (a last-state cancel when no savepoint can be taken), and restores from that"
		case planned.Spec != nil && planned.Spec.FlinkConfiguration[maxCheckpointAgeKey] != "":
			// getUpgradeModeBasedOnStateAge: a latest checkpoint older than
			// the maximum age makes it a savepoint upgrade.
			survives += fmt.Sprintf(", unless that checkpoint is older than %s = %s: the operator then stops it with a savepoint "+
				"and restores from that", maxCheckpointAgeKey, planned.Spec.FlinkConfiguration[maxCheckpointAgeKey])
		}
	case "savepoint":
		survives = "the operator stops it with a savepoint and restores from that savepoint"
		if planned.Spec == nil || planned.Spec.FlinkConfiguration[lastStateFallbackKey] != "false" {
			// getJobUpgrade: a savepoint-mode job that is not running falls
			// back to last-state (the option's default is true).
			survives += " (if the job is not running then, the operator falls back to its latest checkpoint through the HA " +
				"metadata: " + lastStateFallbackKey + ", default true)"
		}
	default:
		survives = "with upgrade_mode = \"stateless\" it starts from EMPTY state: nothing is restored"
		if planned.SavepointFirst {
			survives += " (savepoint_before_upgrade takes a savepoint first, which the restart does not use: restore from " +
				"upgrade_savepoint_path yourself if needed)"
		}
	}
	if planned.RunState() == JobSuspended {
		// AbstractJobReconciler.reconcileSpecChange and SuspendMode: a
		// stateless suspend cancels the job and deletes its HA data; a
		// savepoint suspend stops it with a savepoint a resume restores; a
		// last-state suspend keeps HA metadata (or records the latest
		// checkpoint when it has to cancel).
		kept := "nothing is kept: a resume starts from empty state"
		switch mode {
		case "last-state":
			kept = "its HA metadata is kept (without it, the latest checkpoint is recorded) and a resume restores from it"
		case "savepoint":
			kept = "the operator takes a savepoint and a resume restores from it"
		}
		return "The job will be suspended",
			fmt.Sprintf("job.state = \"suspended\" (with %s) stops the job: with upgrade_mode %q %s.", fields, mode, kept)
	}
	return "The operator will restart the job",
		fmt.Sprintf("The Flink operator applies a change of %s as an upgrade (its spec diff: ReflectiveDiffBuilder, flink-kubernetes-operator "+
			"release-1.15.0): the job restarts, and %s.", fields, survives)
}

// minorChanges tells whether the operator sees a Flink version change: it
// compares spec.flinkVersion, which names the minor version only
// (FlinkVersion v1_20 … v2_2; flinkVersionChanged), so a patch release is
// none.
func minorChanges(from, to string) bool {
	f, err1 := flinkconf.ParseVersion(from)
	t, err2 := flinkconf.ParseVersion(to)
	return err1 == nil && err2 == nil && (f.Major != t.Major || f.Minor != t.Minor)
}

// The operator settings UpgradeNotice reads from the spec
// (KubernetesOperatorConfigOptions, release-1.15.0:
// OPERATOR_JOB_UPGRADE_LAST_STATE_CHECKPOINT_MAX_AGE, no default;
// OPERATOR_JOB_UPGRADE_LAST_STATE_FALLBACK_ENABLED, default true).
const (
	maxCheckpointAgeKey  = "kubernetes.operator.job.upgrade.last-state.max.allowed.checkpoint.age"
	lastStateFallbackKey = "kubernetes.operator.job.upgrade.last-state-fallback.enabled"
)

// LastStateDummyPath is what the operator records as the restore path of
// a last-state restore (AbstractJobReconciler.LAST_STATE_DUMMY_SP_PATH,
// release-1.15.0): no savepoint. The same as kube.LastStateDummyPath.
const LastStateDummyPath = "KUBERNETES_OPERATOR_LAST_STATE"

// NotRunningStart words what the new spec of an upgrade starts from when
// the job is not running, so no savepoint can be taken first (the operator
// abandons a savepoint of a job that is not running: SnapshotObserver).
// recorded is the savepoint the operator has on record ("": none).
func NotRunningStart(prior, planned Desired, recorded string) string {
	mode := "stateless"
	if planned.UpgradeMode != "" {
		mode = planned.UpgradeMode
	}
	var from string
	switch {
	case Redeploys(prior, planned):
		from = "job.initial_savepoint_path " + planned.RestorePath
	case mode == "stateless":
		from = "empty state (a stateless upgrade restores nothing)"
	default:
		// AbstractJobReconciler.getJobUpgrade / ApplicationReconciler.getJobUpgrade
		// (kube.NotRunningRestore, which decides at apply).
		from = "what the operator can restore by itself: the latest checkpoint in the job's HA metadata if it exists (last-state, " +
			"and savepoint mode falls back to it), or the job's latest checkpoint if the operator can still cancel it"
		if recorded != "" && recorded != LastStateDummyPath {
			from += ", or, for a job that ended (FAILED, FINISHED, CANCELED) or whose new JobManager never started after a " +
				"savepoint-mode deploy, the savepoint the operator recorded, " + recorded
		}
		if recorded == "" {
			// ApplicationReconciler.getJobUpgrade → deleteJmThatNeverStarted,
			// then restoreJob without a savepoint (kube.NotRunningRestore, which decides at apply).
			from += ", or, if the JobManager of the spec the operator last deployed (not last-state, e.g. the first) never started, " +
				"empty state, which loses nothing: no job of that spec ran"
		}
		from += ". If it has none of these, the apply is refused and says how to go on (job.initial_savepoint_path, or a stateless upgrade)"
	}
	return from
}
