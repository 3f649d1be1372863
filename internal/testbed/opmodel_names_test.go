package testbed

import "github.com/flinkstate/terraform-provider-flinkstate/internal/testbed/opmodel"

// The operator model's names (package opmodel) under the names this
// package's model and differential tests were written with.

type (
	deploymentStatus = opmodel.DeploymentStatus
	snapshotStatus   = opmodel.SnapshotStatus
)

var (
	readDeploymentStatus = opmodel.ReadDeploymentStatus
	readSnapshotStatus   = opmodel.ReadSnapshotStatus
	parseReconciled      = opmodel.ParseReconciled
	jobField             = opmodel.JobField
	hasFinalizer         = opmodel.HasFinalizer
	haEnabled            = opmodel.HAEnabled
	splitS3              = opmodel.SplitS3
	LastReconciledSpec   = opmodel.LastReconciledSpec
)

const (
	modeStateless      = opmodel.ModeStateless
	modeSavepoint      = opmodel.ModeSavepoint
	modeLastState      = opmodel.ModeLastState
	reconDeployed      = opmodel.ReconDeployed
	reconUpgrading     = opmodel.ReconUpgrading
	jmDeploying        = opmodel.JMDeploying
	jmDeployedNotReady = opmodel.JMDeployedNotReady
	jmReady            = opmodel.JMReady
	jmMissing          = opmodel.JMMissing
	jmError            = opmodel.JMError
	flinkRunning       = opmodel.FlinkRunning
	flinkReconciling   = opmodel.FlinkReconciling
	checkpointDirKey   = opmodel.CheckpointDirKey
	savepointDirKey    = opmodel.SavepointDirKey
	jobNotFound        = opmodel.JobNotFound
	eventWarning       = opmodel.EventWarning

	SnapshotFinalizer   = opmodel.SnapshotFinalizer
	DeploymentFinalizer = opmodel.DeploymentFinalizer
)
