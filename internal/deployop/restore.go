package deployop

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/preflight"
)

// What a deployment restores from, checked before anything is written,
// and the savepoint before an upgrade. The decisions and their words are
// checkpoint's, kube's and flinkdeploy's; this sequences them.

// setupHalt is a client Env could not set up (Object: "the AWS clients",
// "the Kubernetes client").
func setupHalt(object string, err error) *Report {
	return &Report{Object: object, Report: kube.Report{Verb: "Setting up", Detail: err.Error()}}
}

// savepointPoll is how often a savepoint the operation waits for is read
// (the savepoint before an upgrade, the final savepoint).
var savepointPoll = time.Second

// restoreProblem is checkpoint.CheckRestoreTarget, with S3's errors worded
// by env (Words: the endpoint and the bound of the call).
func restoreProblem(ctx context.Context, env Env, s3 checkpoint.S3Reader, target string) *checkpoint.RestoreProblem {
	return checkpoint.CheckRestoreTarget(ctx, s3, target, func(err error) string { return env.Words(ctx, err) })
}

// RestoreTarget is job.initial_savepoint_path (Path) of FlinkDeployment
// Namespace/Name (Subject, as the words name it), checked before the
// deployment is created or redeployed from it.
type RestoreTarget struct {
	Subject, Namespace, Name, Path string
	// Unknown: Path is not known yet (not validated).
	Unknown bool
	// Check: the operation restores from Path (a create, or a redeploy:
	// flinkdeploy.Redeploys), so S3 and the snapshots recording it are
	// read, within Timeout.
	Check   bool
	Timeout time.Duration
	// Fate is what the operator's savepoint history cleanup does with
	// FlinkStateSnapshot ns/snapshot of FlinkDeployment ns/deployment
	// (kube.CleanupFate: "delete_and_dispose" from after on).
	Fate func(ctx context.Context, ns, deployment, snapshot string) (fate string, after time.Time, err error)
}

// Verify checks that Flink could restore from the path
// (checkpoint.CheckRestoreTarget, checkpoint.RestoreProblem.PathRefusal)
// and says when it is a savepoint the operator's savepoint history cleanup
// deletes with its data (kube.CleanupFate): a disposal due at the
// operator's next observe refuses the restore before anything changes; a
// later one is a warning (kube.Disposals).
func (t RestoreTarget) Verify(ctx context.Context, env Env) ([]flinkconf.Finding, *Report) {
	if !t.Unknown {
		// Checked again here, not only by the schema's validator: nothing
		// planned to restore is deployed without its path.
		if msg := checkpoint.ValidateRestorePath(t.Path); msg != "" {
			return []flinkconf.Finding{checkpoint.InvalidRestorePath(t.Subject, t.Path, msg)}, nil
		}
	}
	if !t.Check {
		return nil, nil
	}
	s3, err := env.S3(ctx)
	if err != nil {
		return nil, setupHalt("the AWS clients", err)
	}
	ctx, cancel := env.Bound(ctx, t.Timeout)
	defer cancel()
	if prob := restoreProblem(ctx, env, s3, t.Path); prob != nil {
		return []flinkconf.Finding{prob.PathRefusal(t.Subject)}, nil
	}
	dyn, err := env.Kube()
	if err != nil {
		return nil, setupHalt("the Kubernetes client", err)
	}
	ns, name := t.Namespace, t.Name
	entries, err := kube.SnapshotsAtPath(ctx, dyn, ns, t.Path)
	if err != nil {
		return []flinkconf.Finding{kube.DisposalUnchecked(ns, name, t.Path, kube.ReadableError(err))}, nil
	}
	return kube.Disposals(ns, name, t.Path, entries, time.Now(), func(e kube.SnapshotEntry) (string, time.Time, error) {
		return t.Fate(ctx, ns, e.Deployment, e.Name)
	}), nil
}

// VerifyCarried checks the final savepoint a replacement of subject starts
// from (carried) as job.initial_savepoint_path is checked
// (checkpoint.CheckRestoreTarget), within timeout: the replaced deployment
// is gone, so a savepoint that could not be restored must stop the create
// (checkpoint.RestoreProblem.CarriedRefusal).
func VerifyCarried(ctx context.Context, env Env, subject, carried string, timeout time.Duration) *Report {
	s3, err := env.S3(ctx)
	if err != nil {
		return setupHalt("the AWS clients", err)
	}
	ctx, cancel := env.Bound(ctx, timeout)
	defer cancel()
	if prob := restoreProblem(ctx, env, s3, carried); prob != nil {
		cause, todo := prob.CarriedRefusal()
		return &Report{Object: subject, Report: kube.Report{Verb: "Creating", Detail: cause, Advice: todo}}
	}
	return nil
}

// CheckTimeout is what is wrong with savepoint_before_upgrade.timeout s
// ("" nothing): a Go duration, as the timeouts blocks' are, and positive.
func CheckTimeout(s string) string {
	if d, err := time.ParseDuration(s); err != nil || d <= 0 {
		return fmt.Sprintf("%q is not a positive duration such as 10m, 90s or 1h30m", s)
	}
	return ""
}

// UpgradeSavepoint is savepoint_before_upgrade at the apply of an update
// of FlinkDeployment Namespace/Name from Prior to Planned.
type UpgradeSavepoint struct {
	Namespace, Name string
	Prior, Planned  flinkdeploy.Desired
	// Backend is the running job's state.backend; FormatType and Timeout
	// are savepoint_before_upgrade's ("" unset; Timeout a Go duration,
	// 10m when unset).
	Backend, FormatType, Timeout string
	// HA tells whether the new spec has Kubernetes HA (read only for a
	// job that is not running: kube.SavepointBeforeUpgrade.HA).
	HA func() bool
}

// Take takes a savepoint of the running job when the update changes the
// job (flinkdeploy.TakesUpgradeSavepoint) and waits for COMPLETED
// (kube.SavepointBeforeUpgrade), returning its path ("" when none was
// taken). An error finding leaves the deployment untouched: the caller
// must not apply. dyn is the caller's Kubernetes client.
func (u UpgradeSavepoint) Take(ctx context.Context, dyn dynamic.Interface) (string, []flinkconf.Finding) {
	// A suspended job cannot take a savepoint; its suspend took one (savepoint
	// mode) or kept HA metadata (last-state).
	if !flinkdeploy.TakesUpgradeSavepoint(u.Prior, u.Planned) {
		return "", nil
	}
	s := kube.SavepointBeforeUpgrade{Namespace: u.Namespace, Name: u.Name, Timeout: 10 * time.Minute, Every: savepointPoll,
		Redeploys: flinkdeploy.Redeploys(u.Prior, u.Planned), RestorePath: u.Planned.RestorePath, UpgradeMode: u.Planned.UpgradeMode,
		HA: u.HA, APIError: kube.ReadableError}
	if u.Timeout != "" {
		d, err := time.ParseDuration(u.Timeout)
		if err != nil {
			return "", []flinkconf.Finding{{Severity: flinkconf.Error, Path: []string{"savepoint_before_upgrade", "timeout"},
				Summary: "Invalid timeout", Detail: err.Error()}}
		}
		s.Timeout = d
	}
	// The running job's backend takes the savepoint (ForSt: NATIVE only).
	s.Format, _ = flinkconf.SavepointFormatFor(u.Backend, u.FormatType)
	if u.Planned.Spec != nil {
		s.Hash = u.Planned.Spec.Hash()
	}
	return s.Run(ctx, dyn)
}

// FlinkReason is Flink's own reason for a wait's end o (kube.WaitReason,
// read with the REST config cfg), and, for a refusal of state for an
// operator the new code lacks, which operator that is (NamedOperator).
func FlinkReason(ctx context.Context, env Env, cfg *rest.Config, ns, name string, o kube.WaitOutcome) string {
	words, cause := kube.WaitReason(ctx, cfg, ns, name, o)
	if words == "" || cause == "" {
		return words
	}
	return words + NamedOperator(ctx, env, cause)
}

// NamedOperator is, for Flink's "Cannot map checkpoint/savepoint state for
// operator <id>" in cause (preflight.MissingOperator), which operator of
// that snapshot it is, from the snapshot's _metadata
// (preflight.NameOperator): Flink names it by its hex ID only. "" when
// cause is another failure or the snapshot cannot be read.
func NamedOperator(ctx context.Context, env Env, cause string) string {
	snapshot, id, ok := preflight.MissingOperator(cause)
	if !ok {
		return ""
	}
	s3, err := env.S3(ctx)
	if err != nil {
		return ""
	}
	ctx, cancel := env.Bound(ctx, kube.RequestTimeout)
	defer cancel()
	meta, err := checkpoint.ReadMetadataAt(ctx, s3, snapshot)
	if err != nil {
		return ""
	}
	if op := preflight.NameOperator(meta, id); op != "" {
		return ". In " + snapshot + " that is the operator " + op + ": the new code has no operator of that ID (its uid() changed or " +
			"it was removed). Put its uid back, or set job.allow_non_restored_state = true to drop its state"
	}
	return ""
}
