package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// What the operator restores a job from when it upgrades (or suspends) a
// job that is not running, so that no savepoint can be taken first: the
// operator abandons a savepoint of such a job (SnapshotObserver, "Secondary
// resource … for savepoint … is not running"; seen on the real operator
// 1.15.0), and AbstractJobReconciler.getJobUpgrade with
// ApplicationReconciler.getJobUpgrade decides (flink-kubernetes-operator
// release-1.15.0).

// ConfigMapGVR: core/v1 ConfigMaps, where Flink's Kubernetes HA services
// keep the job's HA metadata.
var ConfigMapGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// LastStateDummyPath is what the operator records as the restore path of a
// last-state restore (AbstractJobReconciler.LAST_STATE_DUMMY_SP_PATH): no
// savepoint.
const LastStateDummyPath = "KUBERNETES_OPERATOR_LAST_STATE"

// HAMetadataAvailable is FlinkUtils.isKubernetesHaMetadataAvailable (what
// AbstractFlinkService.isHaMetadataAvailable asks with Kubernetes HA): a
// ConfigMap of the cluster (labels app=<cluster-id>,
// type=flink-native-kubernetes: Flink's KubernetesUtils.getCommonLabels),
// not being deleted, named "…-config-map" but not "…-cluster-config-map",
// or "…-jobmanager-leader" (isValidHaConfigMap). The cluster id of a
// FlinkDeployment is its name (the operator sets kubernetes.cluster-id:
// FlinkConfigBuilder.applyFlinkConfiguration).
func HAMetadataAvailable(ctx context.Context, dyn dynamic.Interface, namespace, clusterID string) (bool, error) {
	list, err := dyn.Resource(ConfigMapGVR).Namespace(namespace).List(ctx, metav1.ListOptions{
		LabelSelector: "app=" + clusterID + ",type=flink-native-kubernetes",
	})
	if err != nil {
		return false, fmt.Errorf("reading the HA ConfigMaps of %s/%s: %w", namespace, clusterID, err)
	}
	for _, cm := range list.Items {
		if cm.GetDeletionTimestamp() != nil {
			continue
		}
		n := cm.GetName()
		if strings.HasSuffix(n, "-config-map") && !strings.HasSuffix(n, "-cluster-config-map") || strings.HasSuffix(n, "-jobmanager-leader") {
			return true, nil
		}
	}
	return false, nil
}

// RecordedSavepoint is the savepoint the operator has on record for a
// FlinkDeployment, as SnapshotUtils.lastSavepointKnown and
// AbstractJobReconciler.restoreJob read it: status.jobStatus
// .upgradeSavepointPath, else savepointInfo.lastSavepoint.location. "" when
// none; LastStateDummyPath when the last restore was a last-state one.
func RecordedSavepoint(obj *unstructured.Unstructured) string {
	if p, _, _ := unstructured.NestedString(obj.Object, "status", "jobStatus", "upgradeSavepointPath"); p != "" {
		return p
	}
	p, _, _ := unstructured.NestedString(obj.Object, "status", "jobStatus", "savepointInfo", "lastSavepoint", "location")
	return p
}

// DeploymentGVR: apps/v1 Deployments, the JobManager's.
var DeploymentGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// JobManagerNeverStarted is FlinkUtils.jmPodNeverStarted (release-1.15.0):
// the JobManager Deployment (named as the FlinkDeployment) has its
// Available condition False since its creation (lastTransitionTime equal
// to its creationTimestamp: the deployment controller wrote it at its
// first sync and the pod never became available, e.g. its image cannot be
// pulled). Unsure (no such Deployment, no condition, or it cannot be read)
// is false, as the operator decides "to be on the safe side".
func JobManagerNeverStarted(ctx context.Context, dyn dynamic.Interface, namespace, name string) bool {
	dep, err := dyn.Resource(DeploymentGVR).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false
	}
	created := dep.GetCreationTimestamp()
	conds, _, _ := unstructured.NestedSlice(dep.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != "Available" {
			continue
		}
		var at metav1.Time
		if ts, ok := m["lastTransitionTime"].(string); !ok || at.UnmarshalQueryParameter(ts) != nil {
			continue
		}
		if m["status"] == "False" && at.Equal(&created) {
			return true
		}
	}
	return false
}

// reconciledSpec is what the provider reads of the spec the operator last
// reconciled (status.reconciliationStatus.lastReconciledSpec).
type reconciledSpec struct {
	UpgradeMode     string
	FirstDeployment bool
	Meta            bool // resource_metadata present
}

// lastReconciled reads status.reconciliationStatus.lastReconciledSpec as the
// operator does (SpecUtils.deserializeSpecWithMeta, flink-kubernetes-operator
// release-1.15.0): {"spec": …, "resource_metadata": …} as it writes it
// (writeSpecWithMeta), or, without resource_metadata, the spec itself (its
// older format). ok is false when there is none or it is not JSON.
func lastReconciled(obj *unstructured.Unstructured) (r reconciledSpec, ok bool) {
	text, _, _ := unstructured.NestedString(obj.Object, "status", "reconciliationStatus", "lastReconciledSpec")
	type job struct {
		Job struct {
			UpgradeMode string `json:"upgradeMode"`
		} `json:"job"`
	}
	var w struct {
		job
		Spec *job `json:"spec"`
		Meta *struct {
			FirstDeployment bool `json:"firstDeployment"`
		} `json:"resource_metadata"`
	}
	if text == "" || json.Unmarshal([]byte(text), &w) != nil {
		return r, false
	}
	r.UpgradeMode = w.Job.UpgradeMode
	if w.Meta != nil {
		r.Meta, r.FirstDeployment = true, w.Meta.FirstDeployment
		r.UpgradeMode = ""
		if w.Spec != nil {
			r.UpgradeMode = w.Spec.Job.UpgradeMode
		}
	}
	return r, true
}

// terminalJobStates are Flink's globally terminal JobStatus values
// (JobStatus.isGloballyTerminalState: FAILED, CANCELED, FINISHED), as
// ReconciliationUtils.isJobInTerminalState reads them.
var terminalJobStates = map[string]bool{"FAILED": true, "CANCELED": true, "FINISHED": true}

// RestoreSource is what a stateful upgrade of a job that is not running
// starts from.
type RestoreSource struct {
	// Proceeds: the operator applies the change by itself. When false it
	// waits for ever for an upgradeable state or refuses it
	// (UpgradeFailureException, "Manual restore required."), or would
	// start a job that ended, and may have held state, from empty state.
	Proceeds bool
	// From says what the job restarts with; Path is the savepoint, if one.
	From, Path string
	// Why cites the operator's decision.
	Why string
}

// NotRunningRestore tells what the operator does with a change to a job
// that is not running (jobStatus.state other than RUNNING), for the
// new spec's upgrade mode and whether it has Kubernetes HA, following
// getJobUpgrade:
//   - stateless: always available, nothing restored;
//   - a JobManager that never started (JobManagerNeverStarted; not
//     MISSING) of a job last reconciled in another mode than last-state:
//     the operator deletes it, marks the job FAILED and decides again
//     (ApplicationReconciler.getJobUpgrade, deleteJmThatNeverStarted), so
//     the job counts as terminal below and restores from the savepoint the
//     operator recorded (seen on the real operator 1.15.0:
//     TestRealOperator_fixNotRunningSavepoint), or, with none on record,
//     starts from empty state, which loses nothing: no job of that spec
//     ran (TestDifferential_fixNeverStartedNoSavepoint);
//   - a job in a terminal state: the savepoint the operator recorded
//     (useStatusSavepoint; a last-state dummy is "last checkpoint is
//     unknown … Manual restore required"; none recorded restores nothing,
//     which the provider does not count as proceeding: the job that ended
//     may have held state);
//   - savepoint mode otherwise falls back to last-state
//     (kubernetes.operator.job.upgrade.last-state-fallback.enabled, default
//     true), and last-state restores from the HA metadata when it exists
//     (ApplicationReconciler: lastStateUsingHaMeta) or cancels a job it can
//     still reach (allowLastStateCancel: the job neither RECONCILING nor
//     terminal, its JobManager's REST API up) and restores its latest
//     checkpoint;
//   - anything else: the operator waits (JobManager deploying) or refuses
//     (JobManager MISSING or in ERROR without HA metadata).
func NotRunningRestore(ctx context.Context, dyn dynamic.Interface, obj *unstructured.Unstructured, upgradeMode string, ha bool) (RestoreSource, error) {
	st := ReadDeploymentStatus(obj)
	jm := jobManagerStatus(obj)
	if upgradeMode == "stateless" || upgradeMode == "" {
		return RestoreSource{Proceeds: true, From: "empty state (a stateless upgrade restores nothing)",
			Why: "AbstractJobReconciler.getJobUpgrade: \"Stateless job, ready for upgrade\""}, nil
	}
	haMeta := false
	if ha {
		var err error
		if haMeta, err = HAMetadataAvailable(ctx, dyn, obj.GetNamespace(), obj.GetName()); err != nil {
			return RestoreSource{}, err
		}
	}
	jmAccessible := jm == "READY" // FlinkDeploymentStatus.isJmAccessible: the REST API answers
	deleted := ""
	last, _ := lastReconciled(obj)
	if jm != "MISSING" && jm != "" && last.UpgradeMode != "last-state" &&
		JobManagerNeverStarted(ctx, dyn, obj.GetNamespace(), obj.GetName()) {
		// deleteJmThatNeverStarted: jobStatus.state FAILED, the cluster
		// deleted (its HA data kept), then getJobUpgrade again.
		st.JobState, jm, jmAccessible = "FAILED", "MISSING", false
		deleted = "ApplicationReconciler.getJobUpgrade: the JobManager never started, so the operator deletes it " +
			"(\"Deleted application cluster that never started.\") and the job counts as FAILED; then "
	}
	if terminalJobStates[st.JobState] && (!haMeta || jmAccessible) {
		switch p := RecordedSavepoint(obj); p {
		case LastStateDummyPath:
			return RestoreSource{From: "nothing the operator can name", Why: "AbstractJobReconciler.getJobUpgrade: \"Job is in terminal state " +
				"but last checkpoint is unknown, possibly due to an unrecoverable restore error. Manual restore required.\""}, nil
		case "":
			if deleted != "" {
				// Nothing is lost: the JobManager of the spec the operator
				// last deployed never started, and that spec was deployed
				// without state (not last-state, and a savepoint restore
				// would be on record), e.g. a first deployment, which the
				// operator records as stateless
				// (AbstractFlinkResourceReconciler.updateStatusBeforeFirstDeployment).
				// Seen on the real operator 1.15.0:
				// TestDifferential_fixNeverStartedNoSavepoint.
				return RestoreSource{Proceeds: true, From: "empty state: the JobManager never started, so no job of the spec the operator last " +
					"deployed (upgrade mode " + orNone(last.UpgradeMode) + ") ran, and the operator has no savepoint on record",
					Why: deleted + "AbstractJobReconciler.getJobUpgrade: \"Job is in terminal state, ready for upgrade from observed latest " +
						"state\" with none on record (SnapshotUtils.lastSavepointKnown), so the new job starts without a savepoint"}, nil
			}
			return RestoreSource{From: "empty state: the operator has no savepoint on record for the " + strings.ToLower(st.JobState) + " job",
				Why: "AbstractJobReconciler.getJobUpgrade: a terminal job restarts from the savepoint in its status, here none"}, nil
		default:
			return RestoreSource{Proceeds: true, From: "the savepoint the operator recorded, " + p, Path: p,
				Why: deleted + "AbstractJobReconciler.getJobUpgrade: \"Job is in terminal state, ready for upgrade from observed latest state\""}, nil
		}
	}
	if haMeta {
		return RestoreSource{Proceeds: true, From: "the latest checkpoint in the job's HA metadata",
			Why: "ApplicationReconciler.getJobUpgrade: \"Job is not running but HA metadata is available for last state restore, ready for upgrade\""}, nil
	}
	if st.JobState != "" && st.JobState != "RECONCILING" && !terminalJobStates[st.JobState] && (jm == "READY" || jm == "DEPLOYED_NOT_READY") {
		return RestoreSource{Proceeds: true, From: "the latest checkpoint, which the operator records when it cancels the job",
			Why: "AbstractJobReconciler.getJobUpgrade: \"Job is not running, using cancel to perform last-state upgrade\""}, nil
	}
	why := "AbstractJobReconciler.reconcileSpecChange: \"waiting for upgradeable state\" while the JobManager is " + orNone(jm)
	if jm == "MISSING" || jm == "ERROR" {
		why = "ApplicationReconciler.getJobUpgrade: \"JobManager deployment is missing and HA metadata is not available to make " +
			"stateful upgrades. … Manual restore required.\""
	}
	return RestoreSource{From: "nothing: the job has no HA metadata, no savepoint the operator could use, and cannot be cancelled", Why: why}, nil
}
