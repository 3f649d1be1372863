package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// TestAccRealOperator_jobManagerExitSaysFlinksReason (issue 44): a create
// whose JobManager exits at start, on the real operator 1.15.0 with its pods
// run as real Flink 2.2.1 by the node stand-in, ends with the root cause
// Flink logged (the last "Caused by" of the JobManager container's log,
// read through the API server's pods/log from the node's kubelet endpoint),
// not only the operator's "the Flink processes exited". The test bed's
// Flink 2.2.1 distribution has no ForSt backend, so state.backend = "forst"
// makes the JobManager exit with ClassNotFoundException.
func TestAccRealOperator_jobManagerExitSaysFlinksReason(t *testing.T) {
	fx := newRealOperatorFixture(t)
	cfg := strings.Replace(realFlinkOperatorConfig(fx.bucket, fx.oidc, fx.role, fx.ns, "", ""), `backend             = "rocksdb"`, `backend             = "forst"`, 1)
	if !strings.Contains(cfg, `"forst"`) {
		t.Fatal("the configuration's backend was not replaced")
	}
	cfg = strings.Replace(cfg, `wait_for          = "running"`, "wait_for          = \"running\"\n  timeouts {\n    create = \"4m\"\n  }", 1)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config:      cfg,
			ExpectError: errorRE("ClassNotFoundException", "ForStStateBackendFactory"),
		}},
	})
}
