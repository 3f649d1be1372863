package preflight

import (
	"fmt"
	"strings"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
)

// The restore pre-flights the provider runs before a job restores state:
// what each one compares (its Desired, built from the prior and planned
// configuration) and how its findings are worded. The provider reads the
// snapshot; these decide.

// refused is the summary of every refusal a pre-flight finds.
const refused = "Flink would refuse to restore the job's state"

// FirstValue is the value of the first of keys that cfg sets, or "".
func FirstValue(cfg map[string]string, keys ...string) string {
	for _, k := range keys {
		if v := cfg[k]; v != "" {
			return v
		}
	}
	return ""
}

// backendOf is state.backend.type (or its deprecated key) of cfg.
func backendOf(cfg map[string]string) string {
	return FirstValue(cfg, "state.backend.type", "state.backend")
}

// savepointFormat is the format a savepoint is taken in: requested, or
// CANONICAL by default; ForSt takes NATIVE only (flinkconf.SavepointFormatFor).
func savepointFormat(backend, requested string) string {
	format, _ := flinkconf.SavepointFormatFor(backend, strings.ToUpper(strings.TrimSpace(requested)))
	return format
}

// newJob is what the new job's configuration cfg asks of any restore:
// its parallelism, the per-operator overrides, its explicit max
// parallelism and its Flink version; each pre-flight adds the rest.
func newJob(parallelism int, cfg map[string]string, flinkVersion string) Desired {
	want := Desired{Parallelism: parallelism, Overrides: flinkconf.ParallelismOverrides(cfg), FlinkVersion: flinkVersion}
	want.MaxParallelism, _ = flinkconf.ExplicitMaxParallelism(cfg)
	return want
}

func warning(path []string, summary, detail string) flinkconf.Finding {
	return flinkconf.Finding{Severity: flinkconf.Warning, Path: path, Summary: summary, Detail: detail}
}

func refusal(path []string, detail string) flinkconf.Finding {
	return flinkconf.Finding{Severity: flinkconf.Error, Path: path, Summary: refused, Detail: detail}
}

// Upgrade is the pre-flight of an update of a running stateful job
// (flinkdeploy.Restores with no path): it reads the _metadata of the newest
// completed checkpoint of the running job (status.jobStatus.jobId), which
// is what a last-state upgrade restores (the operator resumes from the HA
// metadata, which names the newest completed checkpoint:
// flink-kubernetes-operator release-1.15.0, AbstractJobReconciler.restoreJob
// with the last-state dummy path), and refuses the update when Flink would
// refuse that restore.
//
// In savepoint mode the job restores the savepoint taken for the upgrade,
// not this checkpoint; the checkpoint stands in for it in the rules that
// depend on the job's operators (their max parallelism and the metadata
// version), and the backend rule, which depends on the snapshot's format,
// is left out. It is left out too when flink_version changes: the operator
// then takes a savepoint instead of the last checkpoint
// (AbstractJobReconciler.getJobUpgrade).
type Upgrade struct {
	// Subject names the deployment: "FlinkDeployment ns/name".
	Subject string
	// Prior and Planned are the running and the new deployment.
	Prior, Planned flinkdeploy.Desired
	// PriorConfig and PlannedConfig are their effective configurations.
	PriorConfig, PlannedConfig map[string]string
	// PreviousParallelism and Parallelism are their job.parallelism.
	PreviousParallelism, Parallelism int
	// JobID is the running job's id.
	JobID string
}

// Applies tells whether the pre-flight runs: the running job (Prior runs
// its job) is upgraded with its state restored from what the operator
// picks, not from a path (flinkdeploy.Restores).
func (u Upgrade) Applies() bool {
	if !u.Prior.HasJob || !u.Planned.HasJob || u.Prior.RunState() != flinkdeploy.JobRunning {
		return false
	}
	restoring, from := flinkdeploy.Restores(u.Prior, u.Planned)
	return restoring && from == ""
}

// Desired is what the upgrade asks of the restore.
func (u Upgrade) Desired() Desired {
	newCfg, oldCfg := u.PlannedConfig, u.PriorConfig
	want := newJob(u.Parallelism, newCfg, u.Planned.FlinkVersion)
	want.PreviousParallelism = u.PreviousParallelism
	want.PreviousMaxParallelism, _ = flinkconf.ExplicitMaxParallelism(oldCfg)
	backend, previous := backendOf(newCfg), backendOf(oldCfg)
	// The operator takes a savepoint-mode upgrade's savepoint with its
	// observe configuration (AbstractFlinkService.cancelJob): the running
	// spec's, with the new spec's kubernetes.operator.* keys and savepoint
	// directory laid over it (FlinkConfigManager.getObserveConfig,
	// addOperatorConfigsFromSpec, release-1.15.0). Its format is
	// kubernetes.operator.savepoint.format.type, CANONICAL by default; a
	// NATIVE one keeps the backend's own files, which only that backend
	// restores. ForSt takes NATIVE only (flinkconf.SavepointFormatFor).
	requested := newCfg[flinkconf.SavepointFormatKey]
	if requested == "" {
		requested = oldCfg[flinkconf.SavepointFormatKey]
	}
	format := savepointFormat(previous, requested)
	switch {
	case u.Planned.FlinkVersion != u.Prior.FlinkVersion:
		// The operator takes a savepoint instead (getJobUpgrade).
	case u.Planned.UpgradeMode == flinkconf.UpgradeLastState:
		want.Backend, want.PreviousBackend = backend, previous
		want.SavepointRoute = format == "CANONICAL" && previous != flinkconf.BackendForSt &&
			FirstValue(newCfg, "execution.checkpointing.savepoint-dir", "state.savepoints.dir") != "" // the new spec's (getObserveConfig)
	default:
		// Restored from the savepoint the upgrade takes, in format.
		want.Backend, want.PreviousBackend, want.TakenAs = backend, previous, format+" savepoint"
		want.FromPath = true
	}
	return want
}

// Skipped is the warning when the checkpoint could not be read (why): the
// pre-flight adds a refusal Flink would make, it is not a condition of
// every upgrade, so the update goes on.
func (u Upgrade) Skipped(why string) flinkconf.Finding {
	return warning(nil, "Restore pre-flight skipped",
		fmt.Sprintf("%s: the provider could not read the checkpoint the upgrade restores, so it did not check that "+
			"Flink will accept it (max parallelism, state backend, metadata version): %s. The update goes on.", u.Subject, why))
}

// Findings checks meta, the _metadata of the newest completed checkpoint
// at cpPath: a refusal for each rule Flink would break (nothing is written
// then: the old job keeps running), and a warning for operators without a
// uid when the job gets new code.
func (u Upgrade) Findings(cpPath string, meta *checkpoint.Metadata) []flinkconf.Finding {
	mode := u.Planned.UpgradeMode
	restores := "the newest completed checkpoint of job " + u.JobID + ", which this " + mode + " upgrade restores"
	if mode != flinkconf.UpgradeLastState {
		restores = "the newest completed checkpoint of job " + u.JobID + ", read for the savepoint this upgrade takes and restores (they record the same operators)"
	}
	var out []flinkconf.Finding
	for _, f := range Check(meta, u.Desired()) {
		out = append(out, refusal(nil, fmt.Sprintf("%s was not changed, and its job keeps running: it would restore %s (%s), and %s",
			u.Subject, cpPath, restores, f.Detail())))
	}
	if ops := GeneratedUIDs(meta); len(ops) > 0 && flinkdeploy.CodeChanges(u.Prior, u.Planned) {
		out = append(out, warning(nil, "Operators without a uid",
			fmt.Sprintf("%s: this change gives the job new code (image, job.jar_uri, job.entry_class or job.args), and %s "+
				"records state of operators whose ID Flink generated from the job graph (no uid() in the code): %s. If the new code "+
				"changes the graph around them, their IDs change and Flink refuses the restore (\"Cannot map checkpoint/savepoint state "+
				"for operator … to the new program\": Checkpoints.throwNonRestoredStateException), after the old job is stopped. "+
				"Set uid() on every stateful operator in the code; the snapshot's operators are listed in data.flinkstate_latest_checkpoint's contents.",
				u.Subject, cpPath, DescribeAll(ops))))
	}
	return out
}

// Path is the pre-flight of a restore from a path (Target):
// job.initial_savepoint_path on a create or a redeploy
// (savepointRedeployNonce), or the final savepoint a replacement carries
// (Carried; What names which). It runs after the path was proven complete
// and reads its _metadata: the snapshot's own operators, max parallelism,
// keyed-state handles and metadata version, which is what Flink checks
// when the new job restores it
// (StateAssignmentOperation.checkParallelismPreconditions,
// HeapRestoreOperation.restore, MetadataSerializers.getSerializer). The
// spec that wrote it is not known, so the rules that compare against the
// running spec read the snapshot alone (Desired's Previous fields zero).
type Path struct {
	// Subject names the deployment: "FlinkDeployment ns/name".
	Subject string
	// Target is the path restored, What says what it is.
	Target, What string
	// Create: the restore creates the deployment; Carried: Target is the
	// final savepoint of the deployment it replaces.
	Create, Carried bool
	// Config is the new effective configuration, Parallelism its
	// job.parallelism, FlinkVersion its flink_version.
	Config       map[string]string
	Parallelism  int
	FlinkVersion string
}

// Desired is what the restore from the path asks of it.
func (p Path) Desired() Desired {
	want := newJob(p.Parallelism, p.Config, p.FlinkVersion)
	want.Backend, want.FromPath = backendOf(p.Config), true
	return want
}

// Skipped is the warning when the _metadata could not be read (err, worded).
func (p Path) Skipped(err string) flinkconf.Finding {
	return warning(nil, "Restore pre-flight skipped",
		fmt.Sprintf("%s: the provider could not read the _metadata of %s (%s), so it did not check that Flink will "+
			"accept it (max parallelism, state backend, metadata version): %s.", p.Subject, p.Target, p.What, err))
}

// Findings checks meta, the _metadata at Target: a warning on
// flink_version when Flink 2 restores what Flink 1.x wrote, and a refusal
// for each rule Flink would break (nothing is written then).
func (p Path) Findings(meta *checkpoint.Metadata) []flinkconf.Finding {
	var out []flinkconf.Finding
	if v, err := flinkconf.ParseVersion(p.FlinkVersion); err == nil && v.Major >= 2 && WrittenByFlink1(meta) {
		out = append(out, warning([]string{"flink_version"}, "Flink 1.x state restored by Flink 2",
			fmt.Sprintf("%s restores %s (%s), whose _metadata (version %d) Flink 1.x wrote, with Flink %s. %s",
				p.Subject, p.Target, p.What, meta.Version, p.FlinkVersion, Flink2StateAdvice)))
	}
	verb := "changed, and its job keeps running"
	if p.Create {
		verb = "created"
	}
	for _, f := range Check(meta, p.Desired()) {
		detail := fmt.Sprintf("%s was not %s: it would restore %s (%s), and %s", p.Subject, verb, p.Target, p.What, f.Detail())
		if p.Carried {
			out = append(out, refusal(nil, detail+" The final savepoint's FlinkStateSnapshot is kept: "+
				"fix the configuration and apply again, and the create starts from it."))
			continue
		}
		out = append(out, refusal([]string{"job", "initial_savepoint_path"}, detail))
	}
	return out
}

// Handover is the pre-flight of a new job started from a savepoint of the
// running one, taken in Format ("" for the running deployment's own
// kubernetes.operator.savepoint.format.type, CANONICAL by default:
// KubernetesOperatorConfigOptions.OPERATOR_SAVEPOINT_FORMAT_TYPE): the
// newest completed checkpoint of the running job records the operators the
// savepoint will, and the savepoint's format decides which backend
// restores it (Desired.TakenAs). The stop's savepoint is CANONICAL unless
// the old backend is ForSt (flinkconf.SavepointFormatFor).
type Handover struct {
	Subject string // "FlinkDeployment ns/name is replaced"
	How     string // what happens to the running job and its state
	Skipped string // what checks the state when this pre-flight cannot
	// PriorConfig and PlannedConfig are the running and the new effective
	// configuration; Parallelism and FlinkVersion the new job's.
	PriorConfig, PlannedConfig map[string]string
	Parallelism                int
	FlinkVersion               string
	Format                     string
}

// Desired is what the new job asks of the savepoint.
func (h Handover) Desired() Desired {
	want := newJob(h.Parallelism, h.PlannedConfig, h.FlinkVersion)
	want.FromPath = true
	want.Backend = backendOf(h.PlannedConfig)
	want.PreviousBackend = backendOf(h.PriorConfig)
	format := h.Format
	if format == "" {
		format = h.PriorConfig[flinkconf.SavepointFormatKey]
	}
	want.TakenAs = savepointFormat(want.PreviousBackend, format) + " savepoint"
	return want
}

// SkippedWarning is the warning when the newest checkpoint could not be
// read (why): an unreadable checkpoint skips the check.
func (h Handover) SkippedWarning(why string) flinkconf.Finding {
	return warning(nil, "Restore pre-flight skipped",
		fmt.Sprintf("%s: the provider could not read the newest checkpoint of its job, so it did not check before the savepoint "+
			"that Flink will accept it with the new configuration: %s. %s.", h.Subject, why, capitalize(h.Skipped)))
}

// Findings checks meta, the _metadata of the running job's newest
// checkpoint at cpPath: a refusal for each rule Flink would break.
func (h Handover) Findings(cpPath string, meta *checkpoint.Metadata) []flinkconf.Finding {
	var out []flinkconf.Finding
	for _, f := range Check(meta, h.Desired()) {
		out = append(out, refusal(nil, fmt.Sprintf("%s: %s. Read from %s, the newest checkpoint of the running job (it records the operators the savepoint will): %s "+
			"Nothing was changed; the old job keeps running.", h.Subject, h.How, cpPath, f.Detail())))
	}
	return out
}

// capitalize upper-cases s's first letter.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// CrossingNotice is the plan's warning (none: nil) when the job
// restores its state (keepsState) across a flink_version change from
// Flink 1.x to Flink 2 (CrossesToFlink2).
func CrossingNotice(from, to string, keepsState bool) []flinkconf.Finding {
	if !keepsState || !CrossesToFlink2(from, to) {
		return nil
	}
	return []flinkconf.Finding{warning([]string{"flink_version"}, "Flink 1.x state restored by Flink 2",
		fmt.Sprintf("flink_version moves from %s to %s, and the job restores its state across it. %s", from, to, Flink2StateAdvice))}
}
