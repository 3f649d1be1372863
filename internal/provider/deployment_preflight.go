package provider

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/preflight"
)

// preflightRestore runs the restore pre-flight (internal/preflight) before
// an update of a running stateful job is written: it reads the _metadata
// of the newest completed checkpoint of the running job (status.jobStatus.
// jobId, the job_id attribute), which is what a last-state upgrade restores
// (the operator resumes from the HA metadata, which names the newest
// completed checkpoint: flink-kubernetes-operator release-1.15.0,
// AbstractJobReconciler.restoreJob with the last-state dummy path), and
// refuses the update when Flink would refuse that restore. Nothing is
// written then: the old job keeps running.
//
// In savepoint mode the job restores the savepoint taken for the upgrade,
// not this checkpoint; the checkpoint stands in for it in the rules that
// depend on the job's operators (their max parallelism and the metadata
// version), and the backend rule, which depends on the snapshot's format,
// is left out. It is left out too when flink_version changes: the operator
// then takes a savepoint instead of the last checkpoint
// (AbstractJobReconciler.getJobUpgrade).
//
// When the checkpoint cannot be found or read, the update goes on with a
// warning: the pre-flight adds a refusal Flink would make, it is not a
// condition of every upgrade.
func (r *deploymentResource) preflightRestore(ctx context.Context, plan, state *deploymentModel, unwritten []string, timeout time.Duration, diags *diag.Diagnostics) {
	if diags.HasError() || plan.Job == nil || state.Job == nil || state.jobState() != "running" {
		return
	}
	if restoring, from := restoresOnUpdate(ctx, plan, state, unwritten); !restoring || from != "" {
		return
	}
	mode := plan.Job.UpgradeMode.ValueString()
	jobID := state.JobID.ValueString()
	var d diag.Diagnostics
	oldCfg, newCfg := stringMap(ctx, state.EffectiveConfig, &d), stringMap(ctx, plan.EffectiveConfig, &d)
	if d.HasError() {
		return
	}
	ns, name := plan.Namespace.ValueString(), plan.Name.ValueString()
	cp, meta, why := r.newestCheckpoint(ctx, state, timeout)
	if why != "" {
		diags.AddWarning("Restore pre-flight skipped",
			fmt.Sprintf("FlinkDeployment %s/%s: the provider could not read the checkpoint the upgrade restores, so it did not check that "+
				"Flink will accept it (max parallelism, state backend, metadata version): %s. The update goes on.", ns, name, why))
		return
	}
	if meta == nil {
		return // no job, checkpoint directory or completed checkpoint: the job starts without checkpointed state
	}
	want := preflight.Desired{
		Parallelism:         int(plan.Job.Parallelism.ValueInt64()),
		PreviousParallelism: int(state.Job.Parallelism.ValueInt64()),
		Overrides:           flinkconf.ParallelismOverrides(newCfg),
		FlinkVersion:        plan.FlinkVersion.ValueString(),
	}
	want.MaxParallelism, _ = flinkconf.ExplicitMaxParallelism(newCfg)
	want.PreviousMaxParallelism, _ = flinkconf.ExplicitMaxParallelism(oldCfg)
	backend, previous := firstValue(newCfg, "state.backend.type", "state.backend"), firstValue(oldCfg, "state.backend.type", "state.backend")
	// The operator takes a savepoint-mode upgrade's savepoint with its
	// observe configuration (AbstractFlinkService.cancelJob): the running
	// spec's, with the new spec's kubernetes.operator.* keys and savepoint
	// directory laid over it (FlinkConfigManager.getObserveConfig,
	// addOperatorConfigsFromSpec, release-1.15.0). Its format is
	// kubernetes.operator.savepoint.format.type, CANONICAL by default; a
	// NATIVE one keeps the backend's own files, which only that backend
	// restores. ForSt takes NATIVE only (flinkconf.SavepointFormatFor).
	requested := newCfg[kube.SavepointFormatKey]
	if requested == "" {
		requested = oldCfg[kube.SavepointFormatKey]
	}
	format, _ := flinkconf.SavepointFormatFor(previous, strings.ToUpper(strings.TrimSpace(requested)))
	switch {
	case plan.FlinkVersion.ValueString() != state.FlinkVersion.ValueString():
		// The operator takes a savepoint instead (getJobUpgrade).
	case mode == flinkconf.UpgradeLastState:
		want.Backend, want.PreviousBackend = backend, previous
		want.SavepointRoute = format == "CANONICAL" && previous != flinkconf.BackendForSt &&
			firstValue(newCfg, "execution.checkpointing.savepoint-dir", "state.savepoints.dir") != "" // the new spec's (getObserveConfig)
	default:
		// Restored from the savepoint the upgrade takes, in format.
		want.Backend, want.PreviousBackend, want.TakenAs = backend, previous, format+" savepoint"
		want.FromPath = true
	}
	restores := "the newest completed checkpoint of job " + jobID + ", which this " + mode + " upgrade restores"
	if mode != flinkconf.UpgradeLastState {
		restores = "the newest completed checkpoint of job " + jobID + ", read for the savepoint this upgrade takes and restores (they record the same operators)"
	}
	for _, f := range preflight.Check(meta, want) {
		diags.AddError("Flink would refuse to restore the job's state",
			fmt.Sprintf("FlinkDeployment %s/%s was not changed, and its job keeps running: it would restore %s (%s), and %s", ns, name,
				cp.Path, restores, f.Detail()))
	}
	if ops := preflight.GeneratedUIDs(meta); len(ops) > 0 && jobCodeChanges(plan, state) {
		diags.AddWarning("Operators without a uid",
			fmt.Sprintf("FlinkDeployment %s/%s: this change gives the job new code (image, job.jar_uri, job.entry_class or job.args), and %s "+
				"records state of operators whose ID Flink generated from the job graph (no uid() in the code): %s. If the new code "+
				"changes the graph around them, their IDs change and Flink refuses the restore (\"Cannot map checkpoint/savepoint state "+
				"for operator … to the new program\": Checkpoints.throwNonRestoredStateException), after the old job is stopped. "+
				"Set uid() on every stateful operator in the code; the snapshot's operators are listed in data.flinkstate_latest_checkpoint's contents.",
				ns, name, cp.Path, preflight.DescribeAll(ops)))
	}
}

// jobCodeChanges tells whether plan runs other code than state: a new
// image, jar, entry class or arguments.
func jobCodeChanges(plan, state *deploymentModel) bool {
	return !plan.Image.Equal(state.Image) || !plan.Job.JarURI.Equal(state.Job.JarURI) ||
		!plan.Job.EntryClass.Equal(state.Job.EntryClass) || !plan.Job.Args.Equal(state.Job.Args)
}

// firstValue is the value of the first of keys that cfg sets, or "".
func firstValue(cfg map[string]string, keys ...string) string {
	for _, k := range keys {
		if v := cfg[k]; v != "" {
			return v
		}
	}
	return ""
}

// preflightPath runs the restore pre-flight on a restore from a path,
// target: job.initial_savepoint_path on a create or a redeploy
// (savepointRedeployNonce), or the final savepoint a replacement carries
// (what names which). It runs after the path was proven complete
// (verifyRestoreTarget, verifyCarried) and reads its _metadata: the
// snapshot's own operators, max parallelism, keyed-state handles and
// metadata version, which is what Flink checks when the new job restores
// it (StateAssignmentOperation.checkParallelismPreconditions,
// HeapRestoreOperation.restore, MetadataSerializers.getSerializer). The
// spec that wrote it is not known here, so the rules that compare against
// the running spec read the snapshot alone (preflight.Desired's Previous
// fields zero). Nothing is written when Flink would refuse the restore.
func (r *deploymentResource) preflightPath(ctx context.Context, plan *deploymentModel, target, what string, create, carried bool, timeout time.Duration, diags *diag.Diagnostics) {
	if diags.HasError() || plan.Job == nil || target == "" {
		return
	}
	var d diag.Diagnostics
	cfg := stringMap(ctx, plan.EffectiveConfig, &d)
	if d.HasError() || cfg == nil {
		return // unknown at this point: the rules need the configuration
	}
	ns, name := plan.Namespace.ValueString(), plan.Name.ValueString()
	a, err := r.meta.AWS(ctx)
	if err != nil {
		return // verifyRestoreTarget reported it
	}
	actx, cancel := r.meta.boundAWS(ctx, timeout)
	defer cancel()
	meta, err := checkpoint.ReadMetadataAt(actx, a.S3, target)
	if err != nil {
		diags.AddWarning("Restore pre-flight skipped",
			fmt.Sprintf("FlinkDeployment %s/%s: the provider could not read the _metadata of %s (%s), so it did not check that Flink will "+
				"accept it (max parallelism, state backend, metadata version): %s.", ns, name, target, what, awsErr(actx, err)))
		return
	}
	want := preflight.Desired{
		Parallelism:  int(plan.Job.Parallelism.ValueInt64()),
		Overrides:    flinkconf.ParallelismOverrides(cfg),
		FlinkVersion: plan.FlinkVersion.ValueString(),
		Backend:      firstValue(cfg, "state.backend.type", "state.backend"),
		FromPath:     true,
	}
	want.MaxParallelism, _ = flinkconf.ExplicitMaxParallelism(cfg)
	if v, err := flinkconf.ParseVersion(want.FlinkVersion); err == nil && v.Major >= 2 && preflight.WrittenByFlink1(meta) {
		diags.AddAttributeWarning(path.Root("flink_version"), "Flink 1.x state restored by Flink 2",
			fmt.Sprintf("FlinkDeployment %s/%s restores %s (%s), whose _metadata (version %d) Flink 1.x wrote, with Flink %s. %s",
				ns, name, target, what, meta.Version, want.FlinkVersion, preflight.Flink2StateAdvice))
	}
	verb := "changed, and its job keeps running"
	if create {
		verb = "created"
	}
	for _, f := range preflight.Check(meta, want) {
		detail := fmt.Sprintf("FlinkDeployment %s/%s was not %s: it would restore %s (%s), and %s", ns, name, verb, target, what, f.Detail())
		if carried {
			diags.AddError("Flink would refuse to restore the job's state", detail+" The final savepoint's FlinkStateSnapshot is kept: "+
				"fix the configuration and apply again, and the create starts from it.")
			continue
		}
		diags.AddAttributeError(path.Root("job").AtName("initial_savepoint_path"), "Flink would refuse to restore the job's state", detail)
	}
}

// preflightHandover is the pre-flight of a replacement that carries the
// job's state across: at plan, before the old job is stopped, it reads the
// newest completed checkpoint of the running job (state's job_id), which
// records the operators the final savepoint will record, and refuses the
// plan when Flink would refuse to restore that state with the new
// configuration. The stop's savepoint is CANONICAL unless the old backend
// is ForSt (flinkconf.SavepointFormatFor); the deployment's own setting
// stands when no savepoint_before_upgrade says otherwise.
func (r *deploymentResource) preflightHandover(ctx context.Context, plan, state *deploymentModel, diags *diag.Diagnostics) {
	if state == nil || state.Job == nil {
		return
	}
	from := state.Namespace.ValueString() + "/" + state.Name.ValueString()
	r.preflightSavepointHandover(ctx, plan, state, state.finalSavepointFormat(ctx), savepointHandover{
		Subject: "FlinkDeployment " + from + " is replaced",
		How:     "its job would be stopped with a final savepoint and the new deployment started from it",
		Skipped: "the create checks the savepoint itself",
	}, diags)
}

// savepointHandover words a handover through a savepoint of the running
// job for the pre-flight's messages.
type savepointHandover struct {
	Subject string // "FlinkDeployment ns/name is replaced"
	How     string // what happens to the running job and its state
	Skipped string // what checks the state when this pre-flight cannot
}

// preflightSavepointHandover is the pre-flight of a new job started from a
// savepoint of the running one (state's job), taken in format ("" for the
// deployment's own kubernetes.operator.savepoint.format.type, CANONICAL by
// default: KubernetesOperatorConfigOptions.OPERATOR_SAVEPOINT_FORMAT_TYPE):
// the newest completed checkpoint of the running job records the operators
// the savepoint will, and the savepoint's format decides which backend
// restores it (preflight.Desired.TakenAs). An unreadable
// checkpoint skips the check with a warning; a job with none has no state
// to refuse.
func (b *resourceBase) preflightSavepointHandover(ctx context.Context, plan, state *deploymentModel, format string, h savepointHandover, diags *diag.Diagnostics) {
	if diags.HasError() || plan.Job == nil || state.Job == nil {
		return
	}
	var d diag.Diagnostics
	oldCfg, newCfg := stringMap(ctx, state.EffectiveConfig, &d), stringMap(ctx, plan.EffectiveConfig, &d)
	if d.HasError() || plan.EffectiveConfig.IsUnknown() || plan.Job.Parallelism.IsUnknown() {
		return
	}
	cp, meta, why := b.newestCheckpoint(ctx, state, kube.RequestTimeout)
	if why != "" {
		diags.AddWarning("Restore pre-flight skipped",
			fmt.Sprintf("%s: the provider could not read the newest checkpoint of its job, so it did not check before the savepoint "+
				"that Flink will accept it with the new configuration: %s. %s.", h.Subject, why, capitalize(h.Skipped)))
		return
	}
	if meta == nil {
		return
	}
	want := preflight.Desired{
		Parallelism:  int(plan.Job.Parallelism.ValueInt64()),
		Overrides:    flinkconf.ParallelismOverrides(newCfg),
		FlinkVersion: plan.FlinkVersion.ValueString(),
		FromPath:     true,
	}
	want.MaxParallelism, _ = flinkconf.ExplicitMaxParallelism(newCfg)
	want.Backend = firstValue(newCfg, "state.backend.type", "state.backend")
	want.PreviousBackend = firstValue(oldCfg, "state.backend.type", "state.backend")
	if format == "" {
		format = oldCfg[kube.SavepointFormatKey]
	}
	format, _ = flinkconf.SavepointFormatFor(want.PreviousBackend, strings.ToUpper(strings.TrimSpace(format)))
	want.TakenAs = format + " savepoint"
	for _, f := range preflight.Check(meta, want) {
		diags.AddError("Flink would refuse to restore the job's state",
			fmt.Sprintf("%s: %s. Read from %s, the newest checkpoint of the running job (it records the operators the savepoint will): %s "+
				"Nothing was changed; the old job keeps running.", h.Subject, h.How, cp.Path, f.Detail()))
	}
}

// capitalize upper-cases s's first letter.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// newestCheckpoint reads the newest completed checkpoint of m's job (its
// job_id, under its checkpoint directory) and the checkpoint's _metadata,
// within d: what a last-state upgrade restores, and what records the
// operators a savepoint of the job will. meta is nil when there is nothing
// to read (no job id, no s3:// checkpoint directory, no completed
// checkpoint); why says, worded, that a read failed.
func (r *resourceBase) newestCheckpoint(ctx context.Context, m *deploymentModel, d time.Duration) (cp *checkpoint.Checkpoint, meta *checkpoint.Metadata, why string) {
	bucket, dir, ok := m.checkpointStore(ctx)
	jobID := m.JobID.ValueString()
	if !ok || !checkpoint.ValidJobID(jobID) {
		return nil, nil, ""
	}
	a, err := r.meta.AWS(ctx)
	if err != nil {
		return nil, nil, err.Error()
	}
	actx, cancel := r.meta.boundAWS(ctx, d)
	defer cancel()
	cp, err = checkpoint.Latest(actx, a.S3, bucket, dir, jobID)
	if err != nil {
		return nil, nil, awsErr(actx, err)
	}
	if cp == nil {
		return nil, nil, ""
	}
	if meta, err = checkpoint.ReadMetadataAt(actx, a.S3, cp.Path); err != nil {
		return nil, nil, fmt.Sprintf("reading %s: %s", cp.MetadataPath, awsErr(actx, err))
	}
	return cp, meta, ""
}
