package opmodel

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// What the test bed's model and differential tests (package testbed, which
// hold the model and the real operator to the same scenarios) read of an
// object as the model reads it, and the model's words they compare with.

// DeploymentStatus is the part of FlinkDeploymentStatus the model keeps.
type DeploymentStatus = deploymentStatus

// SnapshotStatus is FlinkStateSnapshotStatus.
type SnapshotStatus = snapshotStatus

// ReconciledSpec is a parsed reconciliationStatus.lastReconciledSpec.
type ReconciledSpec = reconciledSpec

// ReadDeploymentStatus reads a FlinkDeployment's status as the model does.
func ReadDeploymentStatus(obj *unstructured.Unstructured) DeploymentStatus {
	return readDeploymentStatus(obj)
}

// ReadSnapshotStatus reads a FlinkStateSnapshot's status as the model does.
func ReadSnapshotStatus(obj *unstructured.Unstructured) SnapshotStatus {
	return readSnapshotStatus(obj)
}

// ParseReconciled parses lastReconciledSpec (nil when it is not one).
func ParseReconciled(s string) *ReconciledSpec { return parseReconciled(s) }

// JobField is spec.job.<field>, or def when unset.
func JobField(spec map[string]any, field, def string) string { return jobField(spec, field, def) }

// HasFinalizer says whether obj carries finalizer f.
func HasFinalizer(obj *unstructured.Unstructured, f string) bool { return hasFinalizer(obj, f) }

// HAEnabled says whether the spec's configuration activates HA.
func HAEnabled(spec map[string]any) bool { return haEnabled(spec) }

// SplitS3 splits an s3:// URI into bucket and key.
func SplitS3(uri string) (bucket, key string, ok bool) { return splitS3(uri) }

// The model's words (operator_words.go), for tests that compare with them.
const (
	ModeStateless      = modeStateless
	ModeSavepoint      = modeSavepoint
	ModeLastState      = modeLastState
	ReconDeployed      = reconDeployed
	ReconUpgrading     = reconUpgrading
	JMDeploying        = jmDeploying
	JMDeployedNotReady = jmDeployedNotReady
	JMReady            = jmReady
	JMMissing          = jmMissing
	JMError            = jmError
	FlinkRunning       = flinkRunning
	FlinkReconciling   = flinkReconciling
	CheckpointDirKey   = checkpointDirKey
	SavepointDirKey    = savepointDirKey
	JobNotFound        = jobNotFound
	EventWarning       = eventWarning
)

// Lifecycle is status.lifecycleState as the model derives it.
func (st deploymentStatus) Lifecycle(deleting bool) string { return st.lifecycle(deleting) }

// Put writes an object to S3 as Flink would (a test's stand-in for a file
// Flink wrote).
func (o *Operator) Put(ctx context.Context, uri, body string) error { return o.put(ctx, uri, body) }

// SetReconcileInterval changes ReconcileInterval while the model runs.
func (o *Operator) SetReconcileInterval(d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ReconcileInterval = d
}

// SetClientTimeout changes ClientTimeout while the model runs.
func (o *Operator) SetClientTimeout(d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ClientTimeout = d
}
