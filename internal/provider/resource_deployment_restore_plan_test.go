package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func restoreModel(path string, nonce types.Int64) *deploymentModel {
	return &deploymentModel{
		RedeployNonce:    nonce,
		UpgradeSavepoint: types.StringNull(),
		deploymentSpecModel: deploymentSpecModel{Job: &jobModel{InitialSavepointPath: optionalString(path), AllowNonRestoredState: types.BoolNull(),
			ClaimMode: types.StringNull()}},
	}
}

func warnings(d diag.Diagnostics) string {
	var out []string
	for _, w := range d.Warnings() {
		out = append(out, w.Summary()+": "+w.Detail())
	}
	return strings.Join(out, "\n")
}

func TestPlanRestore_nonce(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name        string
		plan, state *deploymentModel
		wantNonce   types.Int64
		wantWarning string
	}{
		{"create with a path: no nonce", restoreModel("s3://b/sp", types.Int64Unknown()), nil, types.Int64Null(), ""},
		{"path set on an existing deployment", restoreModel("s3://b/sp", types.Int64Unknown()), restoreModel("", types.Int64Null()),
			types.Int64Value(1), "redeployed from a snapshot"},
		{"path changed", restoreModel("s3://b/sp2", types.Int64Unknown()), restoreModel("s3://b/sp", types.Int64Value(1)),
			types.Int64Value(2), "current state is replaced"},
		{"path unchanged", restoreModel("s3://b/sp", types.Int64Unknown()), restoreModel("s3://b/sp", types.Int64Value(1)),
			types.Int64Value(1), ""},
		{"path removed: nonce kept, no redeploy", restoreModel("", types.Int64Unknown()), restoreModel("s3://b/sp", types.Int64Value(1)),
			types.Int64Value(1), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var d diag.Diagnostics
			var prior flinkdeploy.Desired
			if c.state != nil {
				prior = c.state.desired(ctx, nil)
			}
			planRestore(ctx, c.plan, c.state, prior, nil, &d)
			if !c.plan.RedeployNonce.Equal(c.wantNonce) {
				t.Errorf("nonce %s, want %s", c.plan.RedeployNonce, c.wantNonce)
			}
			w := warnings(d)
			if (c.wantWarning == "") != (w == "") || !strings.Contains(w, c.wantWarning) {
				t.Errorf("warnings %q, want %q", w, c.wantWarning)
			}
		})
	}
}

func TestPlanRestore_warnings(t *testing.T) {
	m := restoreModel("s3://b/sp", types.Int64Null())
	m.Job.AllowNonRestoredState = types.BoolValue(true)
	m.Job.ClaimMode = types.StringValue("CLAIM")
	var d diag.Diagnostics
	planRestore(context.Background(), m, nil, flinkdeploy.Desired{}, nil, &d)
	w := warnings(d)
	for _, want := range []string{"State may be dropped on restore", "Flink may delete the restored snapshot"} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings %q lack %q", w, want)
		}
	}
	if d.HasError() {
		t.Fatalf("errors: %v", d)
	}
}
