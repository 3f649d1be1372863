package testbed

import "github.com/flinkstate/terraform-provider-flinkstate/internal/testbed/opmodel"

// Names of the operator model (package opmodel) that the provider's tests
// use through the test bed.
type (
	// Operator is the operator model (opmodel.Operator).
	Operator = opmodel.Operator
	// Faults are the model's injected faults (opmodel.Faults).
	Faults = opmodel.Faults
	// WritePause is Faults.SnapshotWritePause (opmodel.WritePause).
	WritePause = opmodel.WritePause
	// ContainerState is a container's waiting state (opmodel.ContainerState).
	ContainerState = opmodel.ContainerState
)

// LastStateDummyPath is the restore path the operator records for a
// last-state restore (opmodel.LastStateDummyPath).
const LastStateDummyPath = opmodel.LastStateDummyPath
