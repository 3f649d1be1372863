package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

// A savepoint's target_dir must lie where the deployment's role may write:
// the operator triggers the savepoint in the job, whose pods write it with
// the role's credentials, and a role made by flinkstate_iam_role grants its
// state stores' prefixes only (iampolicy.Permissions); elsewhere S3 denies
// the writes and the snapshot fails at run time. What that is, in order:
//
//  1. the state stores of a flinkstate_iam_role planned in the same run for
//     the deployment's ServiceAccount (irsa or pod_identity block);
//  2. the deployment's state.store_id;
//  3. the store its checkpoint and savepoint directories lay out
//     (PREFIX/checkpoints and PREFIX/savepoints: store.FromDirs).
//
// When is it checked: planning a create makes no API call, so a new
// snapshot is compared at plan with a flinkstate_deployment of the same
// configuration (planned before it, as its deployment_name reference
// makes terraform do), and otherwise at apply, against the live
// FlinkDeployment's directories (3), before the FlinkStateSnapshot is
// created. A plan that changes target_dir of an existing snapshot (a
// replace) reads the live FlinkDeployment when the configuration does not
// hold it.

// checkSnapshotPlan: a savepoint needs a directory (target_dir or the
// deployment's savepoint dir: the operator fails the snapshot otherwise,
// FlinkStateSnapshot docs: "if not set, the savepoint directory of the
// FlinkDeployment is used"), and target_dir inside what the deployment's
// role may write. planned is false when the deployment is not in this
// configuration.
func (r *snapshotResource) checkSnapshotPlan(plan snapshotModel, diags *diag.Diagnostics) (planned bool) {
	if plan.Type.ValueString() != "savepoint" || plan.AlreadyExists.ValueBool() || !known(plan.Namespace, plan.DeploymentName) || plan.TargetDir.IsUnknown() {
		return true // nothing to check, in the plan or in the cluster
	}
	p := r.meta.planned()
	p.mu.Lock()
	d, ok := p.deployments[plan.Namespace.ValueString()+"/"+plan.DeploymentName.ValueString()]
	roleStores, roleKnown := p.roles[d.serviceAccount]
	p.mu.Unlock()
	if !ok {
		return false
	}
	name := plan.DeploymentName.ValueString()
	if _, fine := flinkconf.SavepointFormatFor(d.backend, plan.FormatType.ValueString()); !fine && !plan.FormatType.IsUnknown() {
		diags.AddAttributeError(path.Root("format_type"), "Savepoint format ForSt cannot take", fmt.Sprintf(
			"flinkstate_deployment %s has state.backend = \"forst\": %s Set format_type = \"NATIVE\".", name, flinkconf.ForStFormatAdvice))
	}
	if plan.TargetDir.IsNull() {
		if d.savepointDir == "" {
			diags.AddAttributeError(path.Root("target_dir"), "Savepoint without a directory", fmt.Sprintf(
				"flinkstate_deployment %s has no savepoint directory (state.savepoint_dir or state.store_id) and this savepoint sets no "+
					"target_dir: the operator would fail it. Set target_dir, or give the deployment a savepoint directory.", name))
		}
		return true
	}
	target := plan.TargetDir.ValueString()
	if _, err := store.ParseDir(target); err != nil {
		return true // refused by its validator
	}
	switch {
	case roleKnown && d.serviceAccount != "":
		var ids []string
		for _, s := range roleStores {
			if s.Holds(target) {
				return true
			}
			ids = append(ids, s.URI()+"/")
		}
		diags.AddAttributeError(path.Root("target_dir"), "Savepoint directory outside the role's state stores", fmt.Sprintf(
			"target_dir %s is outside the state stores (%s) that the flinkstate_iam_role for ServiceAccount %s grants, and "+
				"flinkstate_deployment %s runs as that ServiceAccount: S3 would deny the savepoint's writes and the snapshot would fail. "+
				"Choose a directory in one of them, add its store to the role's state_store_ids, or leave target_dir unset.",
			target, strings.Join(ids, ", "), d.serviceAccount, name))
	case d.storeURI != "":
		if s, err := store.Parse(strings.TrimPrefix(d.storeURI, "s3://")); err == nil && !s.Holds(target) {
			diags.AddAttributeError(path.Root("target_dir"), "Savepoint directory outside the state store", fmt.Sprintf(
				"target_dir %s is outside %s, the state store of flinkstate_deployment %s: its role grants access to the store's prefix only, "+
					"so the savepoint would fail. Choose a directory under %s/ (e.g. its savepoints/), or leave target_dir unset.",
				target, d.storeURI, name, d.storeURI))
		}
	default:
		if s, ok := store.FromDirs(d.checkpointDir, d.savepointDir); ok && !s.Holds(target) {
			diags.AddAttributeError(path.Root("target_dir"), "Savepoint directory outside the deployment's store", fmt.Sprintf(
				"target_dir %s is outside %s, where flinkstate_deployment %s keeps its checkpoints and savepoints (state.checkpoint_dir "+
					"and state.savepoint_dir): a role made for that store grants its prefix only, so the savepoint would fail. Choose a "+
					"directory under %s/, or leave target_dir unset.", target, s.URI(), name, s.URI()))
		}
	}
	return true
}

// liveConf is the live FlinkDeployment's spec.flinkConfiguration,
// flattened; ok is false when it cannot be read.
func liveConf(ctx context.Context, c *kube.Client, ns, name string) (map[string]string, bool) {
	live, err := kube.GetFlinkDeployment(ctx, c.Dynamic, ns, name)
	if err != nil {
		return nil, false
	}
	raw, _, _ := unstructured.NestedFieldNoCopy(live.Object, "spec", "flinkConfiguration")
	conf, _ := flinkdeploy.FlattenConfiguration(raw)
	return conf, true
}

// liveStore is the store a live FlinkDeployment's checkpoint and savepoint
// directories lay out (store.FromDirs); ok is false when it cannot be read
// or its directories follow no store's layout.
func liveStore(ctx context.Context, c *kube.Client, ns, name string) (store.Store, bool) {
	conf, ok := liveConf(ctx, c, ns, name)
	if !ok {
		return store.Store{}, false
	}
	// Under the current names or deprecated ones (CheckpointingOptions), nested or flat.
	cp, _, _ := flinkconf.Lookup(conf, "execution.checkpointing.dir")
	sp, _, _ := flinkconf.Lookup(conf, "execution.checkpointing.savepoint-dir")
	return store.FromDirs(cp, sp)
}

// checkTargetDirLive: on a plan that changes target_dir of an existing
// savepoint whose deployment this configuration does not hold, target_dir
// must lie in the store of the live FlinkDeployment's directories. A
// deployment that cannot be read is left to the apply.
func (r *snapshotResource) checkTargetDirLive(ctx context.Context, plan snapshotModel, diags *diag.Diagnostics) {
	if plan.Type.ValueString() != "savepoint" || plan.AlreadyExists.ValueBool() || !known(plan.Namespace, plan.DeploymentName, plan.TargetDir) {
		return
	}
	c, err := r.meta.Kube()
	if err != nil {
		return
	}
	ns, name, target := plan.Namespace.ValueString(), plan.DeploymentName.ValueString(), plan.TargetDir.ValueString()
	if s, ok := liveStore(ctx, c, ns, name); ok && !s.Holds(target) {
		diags.AddAttributeError(path.Root("target_dir"), "Savepoint directory outside the deployment's store", fmt.Sprintf(
			"target_dir %s is outside %s, where FlinkDeployment %s/%s keeps its checkpoints and savepoints: its role grants that "+
				"store's prefix only, so the savepoint would fail. Choose a directory under %s/, or leave target_dir unset.",
			target, s.URI(), ns, name, s.URI()))
	}
}

// checkTargetDirAtApply is checkTargetDirLive before a new savepoint is
// created, for a target_dir the plan could not compare (the deployment not
// in this configuration, or target_dir known only at apply).
func checkTargetDirAtApply(ctx context.Context, c *kube.Client, plan snapshotModel, diags *diag.Diagnostics) {
	if plan.Type.ValueString() != "savepoint" || plan.AlreadyExists.ValueBool() || !known(plan.Namespace, plan.DeploymentName, plan.TargetDir) {
		return
	}
	ns, name, target := plan.Namespace.ValueString(), plan.DeploymentName.ValueString(), plan.TargetDir.ValueString()
	if s, ok := liveStore(ctx, c, ns, name); ok && !s.Holds(target) {
		diags.AddAttributeError(path.Root("target_dir"), "Savepoint directory outside the deployment's store", fmt.Sprintf(
			"target_dir %s is outside %s, where FlinkDeployment %s/%s keeps its checkpoints and savepoints: its role grants that "+
				"store's prefix only, so the savepoint would fail. Choose a directory under %s/, or leave target_dir unset. Nothing "+
				"was created.", target, s.URI(), ns, name, s.URI()))
	}
}

// checkFormatAtApply: a savepoint of a ForSt job must be NATIVE
// (flinkconf.SavepointFormatFor); checked on the live FlinkDeployment's
// state.backend before the FlinkStateSnapshot is created, for a deployment
// the plan could not see.
func checkFormatAtApply(ctx context.Context, c *kube.Client, plan snapshotModel, diags *diag.Diagnostics) {
	if plan.Type.ValueString() != "savepoint" || plan.AlreadyExists.ValueBool() {
		return
	}
	ns, name := plan.Namespace.ValueString(), plan.DeploymentName.ValueString()
	conf, ok := liveConf(ctx, c, ns, name)
	if !ok {
		return // a missing deployment is reported by the operator's own status
	}
	// state.backend.type or its deprecated name (StateBackendOptions.STATE_BACKEND).
	backend, _, _ := flinkconf.Lookup(conf, "state.backend.type")
	if backend == "" {
		backend = conf["state.backend"]
	}
	if _, ok := flinkconf.SavepointFormatFor(backend, plan.FormatType.ValueString()); !ok {
		diags.AddAttributeError(path.Root("format_type"), "Savepoint format ForSt cannot take", fmt.Sprintf(
			"FlinkDeployment %s/%s runs state.backend.type = %q: %s Set format_type = \"NATIVE\". Nothing was created.", ns, name, backend,
			flinkconf.ForStFormatAdvice))
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
	conf, ok := liveConf(ctx, c, ns, name)
	if !ok {
		return // a missing deployment is reported by the operator's own status
	}
	// execution.checkpointing.savepoint-dir or a deprecated name
	// (CheckpointingOptions.SAVEPOINT_DIRECTORY), nested or flat.
	if v, _, _ := flinkconf.Lookup(conf, "execution.checkpointing.savepoint-dir"); v != "" {
		return
	}
	diags.AddAttributeError(path.Root("target_dir"), "Savepoint without a directory", fmt.Sprintf(
		"FlinkDeployment %s/%s has no savepoint directory (execution.checkpointing.savepoint-dir) and this savepoint sets no target_dir: "+
			"the operator would fail it. Set target_dir, or give the deployment a savepoint directory. Nothing was created.", ns, name))
}
