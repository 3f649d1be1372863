package opmodel

import "k8s.io/apimachinery/pkg/runtime/schema"

// The operator model's own words for the values the Flink Kubernetes
// Operator 1.15.0 reads and writes, each as the operator's source spells it
// (flink-kubernetes-operator-api and flink-kubernetes-operator, release
// 1.15.0). They are not taken from the provider's packages: a wrong word in
// the provider must fail against the model, not pass because both share it.
const (
	// JobState (api/spec/JobState.java, @JsonProperty).
	jobRunning   = "running"
	jobSuspended = "suspended"

	// UpgradeMode (api/spec/UpgradeMode.java, @JsonProperty).
	modeStateless = "stateless"
	modeSavepoint = "savepoint"
	modeLastState = "last-state"

	// ReconciliationState (api/status/ReconciliationState.java).
	reconDeployed  = "DEPLOYED"
	reconUpgrading = "UPGRADING"

	// JobManagerDeploymentStatus (api/status/JobManagerDeploymentStatus.java;
	// the enum's names, not its reasons, are what status.jobManagerDeploymentStatus holds).
	jmDeploying        = "DEPLOYING"
	jmDeployedNotReady = "DEPLOYED_NOT_READY"
	jmReady            = "READY"
	jmMissing          = "MISSING"
	jmError            = "ERROR"

	// Flink's JobStatus (flink-core release-2.2.1,
	// org.apache.flink.api.common.JobStatus), which status.jobStatus.state holds.
	flinkRunning     = "RUNNING"
	flinkReconciling = "RECONCILING"
	flinkFinished    = "FINISHED"
	flinkFailed      = "FAILED"
	flinkCanceled    = "CANCELED"

	// ResourceLifecycleState (api/lifecycle/ResourceLifecycleState.java),
	// as CommonStatus.getLifecycleState derives it.
	lifecycleCreated   = "CREATED"
	lifecycleSuspended = "SUSPENDED"
	lifecycleUpgrading = "UPGRADING"
	lifecycleDeployed  = "DEPLOYED"
	lifecycleStable    = "STABLE"
	lifecycleFailed    = "FAILED"
	lifecycleDeleting  = "DELETING"

	// DiffType (api/diff/DiffType.java), the result of the spec diff.
	diffIgnore            = "IGNORE"
	diffUpgrade           = "UPGRADE"
	diffSavepointRedeploy = "SAVEPOINT_REDEPLOY"

	// FlinkStateSnapshotStatus.State (api/status/FlinkStateSnapshotStatus.java).
	snapshotCompleted      = "COMPLETED"
	snapshotFailed         = "FAILED"
	snapshotInProgress     = "IN_PROGRESS"
	snapshotTriggerPending = "TRIGGER_PENDING"
	snapshotAbandoned      = "ABANDONED"

	// SnapshotTriggerType (api/status/SnapshotTriggerType.java), the
	// snapshot.trigger-type label of a snapshot the operator creates.
	triggerUpgrade = "UPGRADE"

	// LastStateDummyPath is what the operator records as the restore path
	// of a last-state restore (AbstractJobReconciler.LAST_STATE_DUMMY_SP_PATH).
	LastStateDummyPath = "KUBERNETES_OPERATOR_LAST_STATE"

	// Flink's savepoint and checkpoint directory options (CheckpointingOptions
	// SAVEPOINT_DIRECTORY / CHECKPOINTS_DIRECTORY, Flink 2.x keys and their
	// 1.x fallbacks).
	savepointDirKey = "execution.checkpointing.savepoint-dir"
	// The operator's settings for its stop-with-savepoint
	// (KubernetesOperatorConfigOptions.DRAIN_ON_SAVEPOINT_DELETION,
	// OPERATOR_SAVEPOINT_FORMAT_TYPE; release-1.15.0).
	drainOnSavepointKey  = "kubernetes.operator.job.drain-on-savepoint-deletion"
	savepointFormatKey   = "kubernetes.operator.savepoint.format.type"
	lastStateFallbackKey = "kubernetes.operator.job.upgrade.last-state-fallback.enabled"
	savepointDirKeyOld   = "state.savepoints.dir"
	checkpointDirKey     = "execution.checkpointing.dir"
	checkpointDirOld     = "state.checkpoints.dir"
)

// The resources the model reads and writes: the operator's CRDs
// (helm/flink-kubernetes-operator/crds, group flink.apache.org, version
// v1beta1) and the Kubernetes objects it manages.
var (
	flinkDeploymentGVR    = schema.GroupVersionResource{Group: "flink.apache.org", Version: "v1beta1", Resource: "flinkdeployments"}
	flinkBlueGreenGVR     = schema.GroupVersionResource{Group: "flink.apache.org", Version: "v1beta1", Resource: "flinkbluegreendeployments"}
	flinkStateSnapshotGVR = schema.GroupVersionResource{Group: "flink.apache.org", Version: "v1beta1", Resource: "flinkstatesnapshots"}
	deploymentGVR         = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	configMapGVR          = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// FlinkBlueGreenDeployment's words (api/status/FlinkBlueGreenDeploymentState,
// api/bluegreen/BlueGreenDeploymentType and BlueGreenDiffType,
// api/spec/FlinkBlueGreenDeploymentConfigOptions). A state is its prefix
// and the child's type: ACTIVE_ + BLUE.
const (
	bgInitializingBlue = "INITIALIZING_BLUE"
	bgActive           = "ACTIVE_"
	bgSavepointing     = "SAVEPOINTING_"
	bgTransitioningTo  = "TRANSITIONING_TO_"
	bgBlue             = "BLUE"
	bgGreen            = "GREEN"
	bgTypeLabel        = "flink/blue-green-deployment-type"
	// Flink's JobStatus.FAILING, which markDeploymentFailing writes.
	bgJobFailing = "FAILING"
	// Flink's JobStatus.SUSPENDED, which finalizeSuspendedDeployment and
	// InitializingBlueStateHandler (a first deployment asked suspended) write.
	bgJobSuspended = "SUSPENDED"

	bgDiffSuspend    = "SUSPEND"
	bgDiffResume     = "RESUME"
	bgDiffPatchChild = "PATCH_CHILD"
	bgDiffTransition = "TRANSITION"

	bgAbortGracePeriod = "kubernetes.operator.bluegreen.abort.grace-period"
	bgDeletionDelay    = "kubernetes.operator.bluegreen.deployment-deletion.delay"
)
