package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
)

// suspendedConfig is restoreConfig with job.state set.
func suspendedConfig(ns, prefix, jobState string) string {
	return restoreConfig(ns, prefix, "flink:2.2.1-java17", `state = "`+jobState+`"`, "")
}

// A suspend ends at lifecycle SUSPENDED, which the default wait_for
// ("deployed") never accepted: the apply used to time out. Resume brings the
// job back, and the plan after each apply is empty.
func TestAccDeployment_suspendAndResume(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	prefix := randName("suspend-")
	short := `
  timeouts {
    update = "90s"
  }`
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: suspendedConfig(ns, prefix, "running")},
			{
				Config: strings.Replace(suspendedConfig(ns, prefix, "suspended"), "\n}\n", short+"\n}\n", 1),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(depAddr, tfjsonPath("lifecycle_state"), knownString("SUSPENDED")),
				},
			},
			{
				Config: suspendedConfig(ns, prefix, "running"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(depAddr, tfjsonPath("lifecycle_state"), knownvalue.StringRegexp(regexpMust(`^(DEPLOYED|STABLE)$`))),
				},
			},
		},
	})
}
