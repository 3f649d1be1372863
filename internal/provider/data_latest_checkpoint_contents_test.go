package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
)

// With complete = true the data source returns what the real Flink 2.2.1
// checkpoint's _metadata records: its version, format, kind of keyed state
// and each operator (the test job: source "sequence", keyed counter
// "count", print sink; parallelism 1, max parallelism 128).
func TestAccLatestCheckpoint_contents(t *testing.T) {
	skipUnlessAcc(t)
	cp := loadRealCheckpoint(t)
	cp.plant(t, 3)
	ds := "data.flinkstate_latest_checkpoint.c"
	op := func(uid, name string, keyed bool) knownvalue.Check {
		return knownvalue.ObjectPartial(map[string]knownvalue.Check{
			"uid": knownvalue.StringExact(uid), "name": knownvalue.StringExact(name),
			"parallelism": knownvalue.Int64Exact(1), "max_parallelism": knownvalue.Int64Exact(128), "keyed_state": knownvalue.Bool(keyed),
		})
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
data "flinkstate_latest_checkpoint" "c" {
  store_id = "%[1]s/%[2]s"
  job_id   = %[3]q
  complete = true
}
`, cp.bucket, cp.prefix, cp.jobID),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(ds, tfjsonPath("contents").AtMapKey("metadata_version"), knownvalue.Int64Exact(6)),
				statecheck.ExpectKnownValue(ds, tfjsonPath("contents").AtMapKey("format"), knownvalue.StringExact("checkpoint")),
				statecheck.ExpectKnownValue(ds, tfjsonPath("contents").AtMapKey("keyed_state_kind"), knownvalue.StringExact("incremental")),
				statecheck.ExpectKnownValue(ds, tfjsonPath("contents").AtMapKey("operators"), knownvalue.ListExact([]knownvalue.Check{
					op("print", "Sink: Print to Std. Out", false), op("count", "KeyedProcess", true), op("sequence", "Source: sequence", false),
				})),
			},
		}},
	})
}

// Without complete the _metadata is not read: contents is null.
func TestAccLatestCheckpoint_contentsNullWithoutComplete(t *testing.T) {
	skipUnlessAcc(t)
	cp := loadRealCheckpoint(t)
	cp.plant(t, 3)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
data "flinkstate_latest_checkpoint" "c" {
  store_id = "%[1]s/%[2]s"
  job_id   = %[3]q
}
`, cp.bucket, cp.prefix, cp.jobID),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.flinkstate_latest_checkpoint.c", tfjsonPath("contents"), knownvalue.Null()),
			},
		}},
	})
}
