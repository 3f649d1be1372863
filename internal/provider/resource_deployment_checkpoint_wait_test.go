package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// newestCheckpointID is the id of the newest completed checkpoint of the
// deployment's job (job_id in state) under the test's prefix; 0 for none.
func newestCheckpointID(t *testing.T, s *terraform.State, prefix string) int64 {
	t.Helper()
	cp, err := checkpoint.Latest(context.Background(), testAWS(t).S3, "acme-flink-state", prefix+"/checkpoints", attrOf(s, depAddr, "job_id"))
	if err != nil {
		t.Fatal(err)
	}
	if cp == nil {
		return 0
	}
	return cp.ID
}

// wait_for = "checkpoint": a create ends once the job completed a
// checkpoint, and a last-state upgrade once the upgraded job completed one
// after the change (a higher id of the same job).
func TestAccDeployment_waitForCheckpoint(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	prefix := randName("ckwait-")
	var first int64
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: restoreConfig(ns, prefix, "flink:2.2.1-java17", "", `  wait_for = "checkpoint"`),
				Check: func(s *terraform.State) error {
					if first = newestCheckpointID(t, s, prefix); first == 0 {
						return fmt.Errorf("the create ended with no completed checkpoint of job %s", attrOf(s, depAddr, "job_id"))
					}
					return nil
				},
			},
			{
				Config: restoreConfig(ns, prefix, "flink:2.2.1-java21", "", `  wait_for = "checkpoint"`),
				Check: func(s *terraform.State) error {
					if n := newestCheckpointID(t, s, prefix); n <= first {
						return fmt.Errorf("the upgrade ended with checkpoint %d, not one after the change (the create's was %d)", n, first)
					}
					return nil
				},
			},
		},
	})
}

// A job that runs but completes no checkpoint (its tasks wait for slots)
// fails a create with wait_for = "checkpoint" when the wait runs out,
// saying so; RUNNING alone is not taken for a working job.
func TestAccDeployment_waitForCheckpointFailsWithoutOne(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	op := startOperator(t, ns)
	op.SetFaults(func(f *testbed.Faults) { f.NoCheckpoints = true })
	prefix := randName("ckwait-")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: restoreConfig(ns, prefix, "flink:2.2.1-java17", "", "  wait_for = \"checkpoint\"\n  timeouts {\n    create = \"15s\"\n  }"),
			ExpectError: errorRE("no checkpoint completed since the change", "the operator last reported the job RUNNING",
				"Flink completed no checkpoint of it"),
		}},
	})
}

// A session cluster has no job to checkpoint: validate says so.
func TestAccDeployment_waitForCheckpointNeedsAJob(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config:      sessionConfig(ns, `  wait_for = "checkpoint"`),
			PlanOnly:    true,
			ExpectError: errorRE("Nothing to checkpoint", "has no job block"),
		}},
	})
}
