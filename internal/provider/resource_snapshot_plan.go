package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

// checkSnapshotPlan: a savepoint needs a directory (target_dir or the
// deployment's savepoint dir: the operator fails the snapshot otherwise,
// FlinkStateSnapshot docs: "if not set, the savepoint directory of the
// FlinkDeployment is used"), and with a state store, target_dir inside it.
func (r *snapshotResource) checkSnapshotPlan(plan snapshotModel, diags *diag.Diagnostics) {
	if plan.Type.ValueString() != "savepoint" || plan.AlreadyExists.ValueBool() || !known(plan.Namespace, plan.DeploymentName) || plan.TargetDir.IsUnknown() {
		return
	}
	p := r.meta.planned()
	p.mu.Lock()
	d, ok := p.deployments[plan.Namespace.ValueString()+"/"+plan.DeploymentName.ValueString()]
	p.mu.Unlock()
	if !ok {
		return
	}
	if plan.TargetDir.IsNull() {
		if d.savepointDir == "" {
			diags.AddAttributeError(path.Root("target_dir"), "Savepoint without a directory", fmt.Sprintf(
				"flinkstate_deployment %s has no savepoint directory (state.savepoint_dir or state.store_id) and this savepoint sets no "+
					"target_dir: the operator would fail it. Set target_dir, or give the deployment a savepoint directory.", plan.DeploymentName.ValueString()))
		}
		return
	}
	if d.storeURI == "" {
		return
	}
	target, err1 := store.ParseDir(plan.TargetDir.ValueString())
	store, err2 := store.ParseDir(d.storeURI)
	if err1 == nil && err2 == nil && !target.Within(store) {
		diags.AddAttributeError(path.Root("target_dir"), "Savepoint directory outside the state store", fmt.Sprintf(
			"target_dir %s is outside %s, the state store of flinkstate_deployment %s: its role grants access to the store's prefix only, "+
				"so the savepoint would fail. Choose a directory under %s/ (e.g. its savepoints/), or leave target_dir unset.",
			plan.TargetDir.ValueString(), d.storeURI, plan.DeploymentName.ValueString(), d.storeURI))
	}
}

// checkSavepointDirAtApply: a savepoint without target_dir needs the
// deployment's savepoint directory; checked on the live FlinkDeployment
// before the FlinkStateSnapshot is created, when the plan could not see it.
func checkSavepointDirAtApply(ctx context.Context, c *kube.Client, plan snapshotModel, diags *diag.Diagnostics) {
	if plan.Type.ValueString() != "savepoint" || plan.AlreadyExists.ValueBool() || !plan.TargetDir.IsNull() {
		return
	}
	ns, name := plan.Namespace.ValueString(), plan.DeploymentName.ValueString()
	live, err := kube.GetFlinkDeployment(ctx, c.Dynamic, ns, name)
	if err != nil {
		return // a missing deployment is reported by the operator's own status
	}
	raw, _, _ := unstructured.NestedFieldNoCopy(live.Object, "spec", "flinkConfiguration")
	conf, _ := flinkdeploy.FlattenConfiguration(raw)
	// execution.checkpointing.savepoint-dir or a deprecated name
	// (CheckpointingOptions.SAVEPOINT_DIRECTORY), nested or flat.
	if v, _, _ := flinkconf.Lookup(conf, "execution.checkpointing.savepoint-dir"); v != "" {
		return
	}
	diags.AddAttributeError(path.Root("target_dir"), "Savepoint without a directory", fmt.Sprintf(
		"FlinkDeployment %s/%s has no savepoint directory (execution.checkpointing.savepoint-dir) and this savepoint sets no target_dir: "+
			"the operator would fail it. Set target_dir, or give the deployment a savepoint directory. Nothing was created.", ns, name))
}
