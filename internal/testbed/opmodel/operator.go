// Package opmodel is the operator model: the test bed's stand-in for the
// Flink Kubernetes Operator 1.15 (and for the Flink cluster it would start).
// Unless the real operator's jars are given, no operator and no Flink run on
// the test bed, so this model (Operator) reconciles
// FlinkDeployments and FlinkStateSnapshots by the operator's own rules and
// writes what Flink would write to S3. It decides nothing a test asks for:
// a test can only inject the named Faults below.
//
// The rules it models, each a small function citing its source (operator
// paths are apache/flink-kubernetes-operator release-1.15,
// flink-kubernetes-operator/src/main/java/org/apache/flink/kubernetes/operator/…;
// Flink paths are apache/flink flink-runtime):
//
//   - Generation and status: every reconciliation that records a spec sets
//     status.observedGeneration; lastReconciledSpec is the spec serialised as
//     {"spec":…,"resource_metadata":{"apiVersion","firstDeployment"}} with
//     job.state SUSPENDED while upgrading and job.upgradeMode the restore mode
//     used; reconciliationStatus.state UPGRADING/DEPLOYED; lastStableSpec once
//     the job runs; lifecycleState derived from these (ReconciliationStatus,
//     SpecUtils.writeSpecWithMeta, ReconciliationMetadata,
//     ReconciliationUtils.updateStatusForSpecReconciliation /
//     updateReconciliationMetadata / checkAndUpdateStableSpec,
//     CommonStatus.getLifecycleState) — specChange, recordSpec, lifecycle.
//   - Spec diff: initialSavepointPath, upgradeMode, allowNonRestoredState and
//     the snapshot/autoscaler nonces are IGNORE; flinkConfiguration keys under
//     kubernetes.operator., job.autoscaler, parallelism.default are IGNORE;
//     a savepointRedeployNonce changed to a new non-null value is
//     SAVEPOINT_REDEPLOY; anything else UPGRADE. An IGNORE change only moves
//     observedGeneration (JobSpec, FlinkDeploymentSpec, AbstractFlinkSpec
//     @SpecDiff; DiffType; ReflectiveDiffBuilder;
//     AbstractFlinkResourceReconciler.reconcile) — diffType.
//   - initialSavepointPath is used on the first deployment (recorded in
//     status.jobStatus.upgradeSavepointPath) and on SAVEPOINT_REDEPLOY, which
//     cancels the job statelessly and deploys from it, recording it the same
//     way; a new nonce with an empty path is a validation error
//     (AbstractFlinkResourceReconciler.updateStatusBeforeFirstDeployment,
//     AbstractJobReconciler.redeployWithSavepoint, DefaultValidator) —
//     firstDeploy, redeployFromSavepoint, validate.
//   - Upgrades on an UPGRADE diff of a running job, by the new spec's
//     upgradeMode: stateless cancels and starts empty with a new job id;
//     savepoint stops the job with a savepoint under the savepoint dir,
//     records it in status.jobStatus.upgradeSavepointPath, creates an UPGRADE
//     FlinkStateSnapshot (alreadyExists) for it, and restores from it with a
//     new job id; last-state keeps the job id and restores from the retained
//     checkpoints (upgradeSavepointPath KUBERNETES_OPERATOR_LAST_STATE), or
//     takes a savepoint when flinkVersion changes. The job is suspended in one
//     reconciliation (UPGRADING) and restored in the next
//     (AbstractJobReconciler.reconcileSpecChange / getJobUpgrade / restoreJob
//     / setUpgradeSavepointPath, ApplicationReconciler.deploy / cancelJob /
//     setJobIdIfNecessary, FlinkStateSnapshotUtils.createUpgradeSnapshotResource)
//     — upgrade, restore.
//   - A stateful upgrade of a job whose JobManager is MISSING or in ERROR
//     without HA metadata is refused with UpgradeFailureException in
//     status.error ("… Manual restore required."), observedGeneration
//     unchanged (ApplicationReconciler.getJobUpgrade, CommonStatus.MSG_*) —
//     upgradeFailure; seen on the real operator 1.15.0 for a deleted
//     JobManager Deployment (TestDifferential_upgradeNeverReady). Unless
//     the JobManager never started and the job was last deployed in
//     another mode than last-state: then the operator deletes it
//     (deleteJmThatNeverStarted) and restores the new spec from the
//     savepoint on record, or from empty state with none, e.g. a first
//     deployment whose image cannot be pulled (seen on the real operator
//     1.15.0: TestDifferential_fixNeverStartedNoSavepoint,
//     TestRealOperator_fixNotRunningSavepoint) — reconcileSpecChange,
//     writeWaitingJobManager.
//   - FlinkStateSnapshot lifecycle: a new snapshot is TRIGGER_PENDING; an
//     alreadyExists savepoint is COMPLETED at its path; a snapshot whose
//     FlinkDeployment is missing or whose job is not RUNNING is ABANDONED
//     (path cleared, error says why); otherwise it is triggered (IN_PROGRESS,
//     triggerId) and observed until COMPLETED with the path Flink reports,
//     under spec.savepoint.path or the deployment's
//     execution.checkpointing.savepoint-dir. A failure sets FAILED and
//     failures+1, and goes back to TRIGGER_PENDING until failures exceed
//     backoffLimit (FlinkStateSnapshotController.reconcile / updateErrorStatus,
//     StateSnapshotReconciler.reconcile / triggerCheckpointOrSavepoint,
//     StateSnapshotObserver, FlinkStateSnapshotUtils.abandonSnapshotIfJobNotRunning
//     / snapshotSuccessful / snapshotInProgress / getSnapshotLabels) —
//     reconcileSnapshot.
//   - Snapshot deletion: a checkpoint, a savepoint with disposeOnDelete false
//     or without jobReference, or one FAILED/TRIGGER_PENDING/ABANDONED is
//     released as is; IN_PROGRESS waits; a COMPLETED disposeOnDelete savepoint
//     is disposed (its files deleted) only while its job runs, otherwise the
//     finalizer stays (StateSnapshotReconciler.cleanup) — cleanupSnapshot.
//   - Finalizers: JOSDK's default "<plural>.<group>/finalizer" on both kinds,
//     added before the first reconciliation, removed by cleanup (JOSDK
//     ReconcilerUtils.getDefaultFinalizerName; the controllers are Cleaners).
//   - Flink's files: a running job's completed checkpoint is
//     <checkpoint-dir>/<job-id>/chk-N/ with state files, shared/ and
//     taskowned/ beside it, and chk-N/_metadata written last; a savepoint is
//     <dir>/savepoint-<first 6 of job id>-<12 random hex>/_metadata (Flink
//     AbstractFsCheckpointStorageAccess constants, initializeLocationForSavepoint;
//     FsCheckpointStorageAccess; PendingCheckpoint.finalizeCheckpoint writes
//     the metadata last) — flink.go. A restore from a path without _metadata
//     (resolveCheckpointPointer) makes the JobManager exit: with HA the
//     operator then reports "Job Not Found" (job RECONCILING, lifecycle
//     DEPLOYED), without HA a CrashLoopBackOff DeploymentFailedException,
//     never a FAILED job (seen on the real operator 1.15.0 with Flink 2.2.1:
//     TestDifferential_restoreFromMissingPath) — restoreUnresolvable.
//   - Job ids: a new random JobID on every deployment that is not a
//     last-state restore (ApplicationReconciler.setJobIdIfNecessary).
//
// Not modelled: rollbacks, scaling, session jobs, periodic snapshots, HA
// metadata loss, the JobManager's own start-up checks.
//
// With Flink set (testbed.RealFlink), what Flink does is no longer
// modelled: each deployment's job runs as real Flink 2.2.1 with its
// flinkConfiguration, savepoints (upgrade and snapshot) are taken by Flink,
// and the rules above only decide when. TestOperator_realFlink runs the
// model's savepoint, last-state and stateless upgrade and snapshot
// lifecycle scenarios on both and asserts the same outcome; make demo runs
// real Flink (FLINKSTATE_DEMO_FLINK=model for the placeholder files). With
// real Flink a checkpoint-type snapshot is refused (not modelled), and a job
// that fails after it ran is not observed.
//
// The model imports none of the provider's packages (internal/kube,
// internal/flinkconf, internal/flinkdeploy): its words for the operator's
// values are its own (operator_words.go), so a wrong word in the provider
// fails against the model. The test bed (package testbed) runs it for make
// demo and gives it real Flink (testbed.RealFlink, the Flink interface).
package opmodel

import (
	"context"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"k8s.io/client-go/dynamic"
)

// Finalizers the operator sets: JOSDK's default "<crd name>/finalizer"
// (ReconcilerUtils.getDefaultFinalizerName), added because both controllers
// implement Cleaner.
const (
	SnapshotFinalizer   = "flinkstatesnapshots.flink.apache.org/finalizer"
	DeploymentFinalizer = "flinkdeployments.flink.apache.org/finalizer"
	operatorManager     = "flink-kubernetes-operator"
)

// Faults are the only way a test changes what the model does. Each stands
// for something that happens outside the operator's rules.
type Faults struct {
	// Down: the operator is not running; nothing is reconciled (no
	// finalizers, no status, deleted objects keep their finalizers).
	Down bool
	// SavepointFailures: the next n savepoints Flink is asked for (snapshot
	// triggers and stop-with-savepoint) fail with SavepointError.
	SavepointFailures int
	SavepointError    string
	// ContainerWaiting: the JobManager's main container waits with this
	// reason and message (e.g. ImagePullBackOff) instead of starting.
	ContainerWaiting *ContainerState
	// JobNeverRuns: the JobManager comes up but the job stays RECONCILING.
	JobNeverRuns bool
	// NoCheckpoints: the job runs but completes no checkpoint, as a job
	// whose tasks wait for slots does (Flink's job is RUNNING, and its
	// CheckpointCoordinator declines every trigger while not all tasks
	// run: CheckpointFailureReason.NOT_ALL_REQUIRED_TASKS_RUNNING).
	NoCheckpoints bool
	// JobManagerNeverReady: the JobManager Deployment is created but never
	// becomes available (no kubelet runs it, or its pod never starts
	// without a container error the operator recognises): the JobManager
	// stays DEPLOYING and the job RECONCILING, as the real operator 1.15.0
	// reports on a test bed without a node
	// (AbstractFlinkDeploymentObserver.observeJmDeployment: "JobManager is
	// being deployed").
	JobManagerNeverReady bool
	// JobManagerDeleted: the JobManager's Deployment object is gone (deleted
	// by hand, or by something else), so the operator observes it MISSING.
	JobManagerDeleted bool
	// JobManagerUnreachable: the JobManager stops answering its REST API
	// while the status still says RUNNING. A savepoint trigger times out
	// (AbstractFlinkService.triggerSavepoint waits
	// kubernetes.operator.flink.client.timeout for the REST call), and from
	// then on the observer's job status request fails too, which moves a
	// RUNNING job to RECONCILING (JobStatusObserver.observe:
	// ifRunningMoveToReconciling), so the retried trigger finds a job that
	// is not running and abandons the snapshot. Held to the real operator
	// 1.15.0 with the JobManager's process stopped
	// (TestDifferential_finalSavepointUnreachable: one trigger timeout,
	// SavepointError, the job RECONCILING, ABANDONED on the retry, 20.5 s
	// in all); the trigger's wait is ClientTimeout.
	JobManagerUnreachable bool
	// DeploymentCreateRefused: the API server refuses the JobManager
	// Deployment's create with this message (an admission policy, a
	// quota), as testbed.RefuseDeploymentCreates makes the real one do. A
	// first deployment then fails in the operator and is retried until the
	// fault is cleared (deployRefused).
	DeploymentCreateRefused string
	// SnapshotWritePause: the operator's next reconciliation of a
	// FlinkStateSnapshot that moves it to State stops after it has done
	// its work (Flink asked, the result decided) and before it writes the
	// object's status (or, BeforeLabels, its labels, which it patches
	// first, conditional on the resourceVersion it read), sends the
	// snapshot's name on Held and waits for Release: a
	// test makes another client's write land at that exact moment, as one
	// did under load in CI (TestAccSnapshot_killedCreateTakenOver: the
	// provider's take-over of a killed create's snapshot while the operator
	// completed it). Consumed when it is hit.
	SnapshotWritePause *WritePause
}

// WritePause is Faults.SnapshotWritePause.
type WritePause struct {
	State        string
	BeforeLabels bool
	Held         chan<- string
	Release      <-chan struct{}
}

// ContainerState is a container's waiting state as the kubelet reports it.
type ContainerState struct{ Reason, Message string }

// Operator is the model. Namespace is the namespace it watches; S3, when
// set, is where Flink's checkpoints and savepoints are written (and read on
// restore); without it paths are reported but nothing is written or checked.
type Operator struct {
	Namespace string
	S3        *s3.Client
	Logf      func(string, ...any)
	// RetryBase scales the snapshot controller's retry delay, 10s × 2^(failures-1)
	// (FlinkStateSnapshotController.updateErrorStatus); tests shorten it.
	RetryBase time.Duration
	// Flink, when set, runs each deployment's job as real Flink
	// (testbed.RealFlink, operator_realflink.go) instead of reporting it and writing
	// placeholder files.
	Flink Flink
	// ClientTimeout is the operator's kubernetes.operator.flink.client.timeout
	// (10 s by default, KubernetesOperatorConfigOptions): with
	// Faults.JobManagerUnreachable a snapshot trigger fails only once it
	// has waited this long (AbstractFlinkService.triggerSavepoint: the REST
	// call's get(timeout)). Zero fails it at once, for fast tests.
	ClientTimeout time.Duration
	// ReconcileInterval is the operator's kubernetes.operator.reconcile.interval
	// (60 s when zero): how often it says an event again for a resource it
	// reschedules (a refused snapshot, a failed cleanup).
	ReconcileInterval time.Duration
	// DefaultConfig is the operator's own default Flink configuration (the
	// Helm chart's flink-conf.yaml in its ConfigMap), which its validator
	// merges under each spec's flinkConfiguration (DefaultValidator
	// .validateDeployment: configManager.getDefaultConfig + the spec's).
	DefaultConfig map[string]string

	mu      sync.Mutex
	said    map[string]time.Time // event key -> when the model last said it
	faults  Faults
	retryAt map[string]time.Time // snapshot UID -> next retry
	// failedAt: FlinkDeployment UID -> the generation whose reconciliation
	// threw an UpgradeFailureException, and when (upgradeFailureError).
	failedAt map[string]failedReconcile
	// unreachable: FlinkDeployment UIDs whose JobManager a savepoint
	// trigger found unreachable (Faults.JobManagerUnreachable).
	unreachable map[string]bool
	// triggering: snapshot UID -> when its trigger call to an unreachable
	// JobManager began (ClientTimeout).
	triggering map[string]time.Time
	nextChk    map[string]int    // job id -> checkpoints completed
	restores   map[string]string // deployment UID -> path its job restores from
	// refused: FlinkDeployment UIDs whose first deployment the API server
	// refused (Faults.DeploymentCreateRefused).
	refused map[string]bool
	// bgResults: a blue/green savepoint's trigger id -> what it came to.
	bgResults map[string]bgSavepointResult
}

// SetDefaultConfig changes the operator's default configuration while it
// runs (an operator upgraded or reconfigured under running jobs).
func (o *Operator) SetDefaultConfig(c map[string]string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.DefaultConfig = c
}

// markUnreachable records that a call found the JobManager of the
// FlinkDeployment uid unreachable (Faults.JobManagerUnreachable); o.mu is
// held.
func (o *Operator) markUnreachable(uid string) {
	if o.unreachable == nil {
		o.unreachable = map[string]bool{}
	}
	o.unreachable[uid] = true
}

// SetFaults changes the injected faults.
func (o *Operator) SetFaults(f func(*Faults)) {
	o.mu.Lock()
	defer o.mu.Unlock()
	f(&o.faults)
}

func (o *Operator) currentFaults() Faults {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.faults
}

// takeSavepointFailure consumes one injected savepoint failure.
func (o *Operator) takeSavepointFailure() (string, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.faults.SavepointFailures <= 0 {
		return "", false
	}
	o.faults.SavepointFailures--
	msg := o.faults.SavepointError
	if msg == "" {
		msg = "Checkpoint expired before completing."
	}
	return msg, true
}

func (o *Operator) logf(f string, a ...any) {
	if o.Logf != nil {
		o.Logf(f, a...)
	}
}

// Run reconciles every interval until ctx ends: snapshots first, then
// deployments, one reconciliation step per object per pass (the operator's
// controllers reschedule themselves in the same way).
func (o *Operator) Run(ctx context.Context, dyn dynamic.Interface, interval time.Duration) {
	if o.RetryBase == 0 {
		o.RetryBase = 10 * time.Second
	}
	for ctx.Err() == nil {
		if !o.currentFaults().Down {
			o.snapshots(ctx, dyn)
			o.blueGreens(ctx, dyn)
			o.deployments(ctx, dyn)
		}
		select {
		case <-ctx.Done():
		case <-time.After(interval):
		}
	}
}
