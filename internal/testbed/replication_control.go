package testbed

import "github.com/flinkstate/terraform-provider-flinkstate/internal/testbed/awsfront"

// ReplicationControl returns the control of this test bed's replication.
func (e Env) ReplicationControl() *awsfront.ReplicationControl {
	return awsfront.NewReplicationControl(e.AWSEndpoint + awsfront.ReplicationControlPath)
}
