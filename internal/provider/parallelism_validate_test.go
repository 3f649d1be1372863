package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// job.parallelism above an explicit pipeline.max-parallelism is refused at
// validate (no cluster, no provider configuration), naming the attribute,
// Flink's message and the way out.
func TestDeployment_parallelismAboveMaxRefusedAtValidate(t *testing.T) {
	cfg := strings.Replace(deploymentConfig("default", "flink:2.2.1-java17", `  flink_configuration = {
    "pipeline.max-parallelism" = "8"
  }`), "parallelism  = 2", "parallelism  = 12", 1)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config:      cfg,
			PlanOnly:    true,
			ExpectError: errorRE("Parallelism above the max parallelism", "job.parallelism (12)", "parallelism (12) is higher than the max", "at most 8"),
		}},
	})
}
