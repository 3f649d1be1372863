package provider

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// TestAccRealOperator_jobManagerExitSaysFlinksReason (issue 44): a create
// whose JobManager exits at start, on the real operator 1.15.0 with its pods
// run as real Flink 2.2.1 by the node stand-in, ends with the root cause
// Flink logged (the last "Caused by" of the JobManager container's log,
// read through the API server's pods/log from the node's kubelet endpoint),
// not only the operator's "the Flink processes exited". An entry class the
// jar does not hold makes the application-mode JobManager exit at start
// (PackagedProgram.loadMainClass: "The program's entry point class … was
// not found in the jar file", caused by ClassNotFoundException).
func TestAccRealOperator_jobManagerExitSaysFlinksReason(t *testing.T) {
	fx := newRealOperatorFixture(t)
	cfg := strings.Replace(realFlinkOperatorConfig(fx.bucket, fx.oidc, fx.role, fx.ns, "", ""),
		fmt.Sprintf("entry_class  = %q", testbed.TestJobClass), `entry_class  = "org.flinkstate.testjob.NoSuchJob"`, 1)
	if !strings.Contains(cfg, "NoSuchJob") {
		t.Fatal("the configuration's entry class was not replaced")
	}
	cfg = strings.Replace(cfg, `wait_for          = "running"`, "wait_for          = \"running\"\n  timeouts {\n    create = \"4m\"\n  }", 1)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config:      cfg,
			ExpectError: errorRE("ClassNotFoundException", "org.flinkstate.testjob.NoSuchJob"),
		}},
	})
}

// TestAccRealOperator_missingOperatorIsNamed (issue 44): new code whose
// stateful operator has another uid (the counting job's --count-uid) cannot
// restore the savepoint the upgrade took: Flink refuses it naming only the
// operator's hex ID ("Cannot map checkpoint/savepoint state for operator
// <id> to the new program"), and the apply's error names the operator from
// the snapshot's _metadata: "KeyedProcess", uid "count".
func TestAccRealOperator_missingOperatorIsNamed(t *testing.T) {
	fx := newRealOperatorFixture(t)
	first := realFlinkOperatorConfig(fx.bucket, fx.oidc, fx.role, fx.ns, "", "")
	renamed := realFlinkOperatorConfig(fx.bucket, fx.oidc, fx.role, fx.ns, `    args = ["--count-uid", "count-v2"]`, "")
	renamed = strings.Replace(renamed, `wait_for          = "running"`, "wait_for          = \"running\"\n  timeouts {\n    update = \"4m\"\n  }", 1)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: first},
			{
				Config: renamed,
				ExpectError: errorRE("Cannot map checkpoint/savepoint state for operator b71731f1c0df9c3076c4a455334d0ad6",
					`the operator "KeyedProcess" (uid "count", ID b71731f1c0df9c3076c4a455334d0ad6)`, "allow_non_restored_state"),
			},
		},
	})
}
