package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
)

// flinkStateKeys are a job's state as Flink lays it out under a store
// (FsCheckpointStorageAccess: checkpoints/<job-id>/chk-<n>/ with _metadata
// written last, shared/ and taskowned/ beside them; savepoints/savepoint-
// <job-id prefix>-<random>/; HA metadata under ha/): chk-9 and chk-10
// completed, chk-11 in progress (no _metadata yet).
func flinkStateKeys(prefix string) []string {
	job := prefix + "/checkpoints/" + testJobID
	return []string{
		job + "/chk-9/_metadata", job + "/chk-10/0b1c2d3e", job + "/chk-10/_metadata", job + "/chk-11/part-0",
		job + "/shared/5e6f7a8b", job + "/taskowned/9c0d1e2f",
		prefix + "/savepoints/savepoint-9f3c2a-0a1b2c3d4e5f/_metadata",
		prefix + "/ha/orders/completedCheckpoint1",
	}
}

func forceDestroyStoreConfig(bucket, prefix string) string {
	return fmt.Sprintf(`
resource "flinkstate_bucket" "state" {
  bucket        = %q
  force_destroy = true
}

resource "flinkstate_state_store" "orders" {
  bucket        = flinkstate_bucket.state.bucket
  prefix        = %q
  force_destroy = true
}
`, bucket, prefix)
}

// A planned replace (prefix renamed) or destroy of a
// force_destroy store that holds Flink state is announced in the PLAN, with
// what it deletes (counts per directory) and the newest completed
// checkpoint, before anything is applied.
func TestAccStateStore_forceDestroyAnnouncedAtPlan(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	bucket := randName("fs-plan-warn-")
	const addr = "flinkstate_state_store.orders"
	rec := &diagRecorder{}
	stateWarning := func(doing string) plancheck.PlanCheck {
		return rec.planWarning("force_destroy will delete Flink state",
			doing+" the state store "+bucket+"/flink/orders (force_destroy = true) deletes",
			"s3://"+bucket+"/flink/orders holds Flink state: 6 objects under checkpoints/, 1 object under savepoints/, 1 object under ha/.",
			"Newest completed checkpoint: s3://"+bucket+"/flink/orders/checkpoints/"+testJobID+"/chk-10 (job "+testJobID)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.factories(),
		Steps: []resource.TestStep{
			{Config: forceDestroyStoreConfig(bucket, "flink/orders")},
			{
				// The prefix is renamed: the store is replaced, which deletes its state.
				PreConfig: func() {
					putObjects(t, bucket, flinkStateKeys("flink/orders"))
					rec.reset()
				},
				Config:             forceDestroyStoreConfig(bucket, "flink/orders-v2"),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionReplace),
					stateWarning("Replacing"),
				}},
			},
			{
				PreConfig: rec.reset,
				Config:    forceDestroyStoreConfig(bucket, "flink/orders"),
				Destroy:   true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionDestroy),
					stateWarning("Destroying"),
				}},
			},
		},
	})
}

// The same for a force_destroy bucket: renaming it (a replace) or
// destroying it is announced in the plan with the number of objects it
// deletes.
func TestAccBucket_forceDestroyAnnouncedAtPlan(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	bucket := randName("fs-plan-warn-")
	const addr = "flinkstate_bucket.state"
	rec := &diagRecorder{}
	config := func(name string) string {
		return fmt.Sprintf(`
resource "flinkstate_bucket" "state" {
  bucket        = %q
  force_destroy = true
}
`, name)
	}
	objectsWarning := rec.planWarning("force_destroy will delete Flink state",
		"Destroying or replacing s3://"+bucket+" (force_destroy = true) deletes 8 objects",
		"Newest completed checkpoint: s3://"+bucket+"/flink/orders/checkpoints/"+testJobID+"/chk-10 (job "+testJobID+",")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.factories(),
		Steps: []resource.TestStep{
			{Config: config(bucket)},
			{
				PreConfig: func() {
					putObjects(t, bucket, flinkStateKeys("flink/orders"))
					rec.reset()
				},
				Config:             config(bucket + "-v2"),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionReplace),
					objectsWarning,
				}},
			},
			{
				PreConfig: rec.reset,
				Config:    config(bucket),
				Destroy:   true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionDestroy),
					objectsWarning,
				}},
			},
		},
	})
}
