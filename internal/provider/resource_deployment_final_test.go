package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// A session cluster (no job block) renamed is replaced with nothing to
// say about job state, and no final savepoint is carried: its plan once
// read the old job's upgrade_mode through a nil job block and panicked.
func TestPlanReplace_sessionCluster(t *testing.T) {
	state, plan := &deploymentModel{}, &deploymentModel{}
	state.Namespace, state.Name = types.StringValue("flink"), types.StringValue("session")
	plan.Namespace, plan.Name = types.StringValue("flink"), types.StringValue("session-2")
	private := &deploymentPrivate{}
	var d diag.Diagnostics
	planReplace(context.Background(), plan, state, private, &d)
	if len(d) != 0 || private.ReplaceFrom != "" {
		t.Fatalf("diagnostics %v, ReplaceFrom %q", d, private.ReplaceFrom)
	}
}
