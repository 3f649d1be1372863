package deployop

import (
	"context"
	"time"

	"k8s.io/client-go/dynamic"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// The final savepoint a destroy or replacement takes before the
// FlinkDeployment is deleted (why, and how: kube.FinalStop).

// finalStopNotRunningFor is how long the final stop waits for a job seen
// not running after the stop was asked (kube.StopOptions.NotRunningFor):
// long enough for a restart of the job, short of the destroy's timeout.
const finalStopNotRunningFor = 30 * time.Second

// FinalFormat is the format the final stop asks for of a job whose state
// backend is backend: savepoint_before_upgrade's format_type, or NATIVE for
// a ForSt job (flinkconf.SavepointFormatFor).
func FinalFormat(backend, formatType string) string {
	format, _ := flinkconf.SavepointFormatFor(backend, formatType)
	return format
}

// FinalSavepoint is the final savepoint of FlinkDeployment Namespace/Name
// before it is deleted. Only the object the caller owns (UID; "" for any)
// is stopped: another one of that name is left alone.
type FinalSavepoint struct {
	Namespace, Name, UID string
	// Prior is the deployment as last applied: whether a final savepoint
	// applies (flinkdeploy.Desired.KeepsState), and drains
	// (flinkdeploy.Desired.FinalDrain).
	Prior flinkdeploy.Desired
	// State is its state block (its backend decides the format,
	// FinalFormat; its directories are named in the report,
	// flinkdeploy.FinalDirsOf); FormatType is
	// savepoint_before_upgrade.format_type ("" unset).
	State      flinkconf.State
	FormatType string
	// CarryTo is the replacement (namespace/name) that starts from the
	// savepoint, "" for none.
	CarryTo string
	Timeout time.Duration
}

// Take runs the final stop (kube.FinalStop) on the caller's client dyn and
// words its end (kube.FinalStopResult.Report; false: nothing to say). An
// error report means the delete must not happen. annotateErr is a failure
// to record a failed final savepoint on the FlinkDeployment, for the log.
func (f FinalSavepoint) Take(ctx context.Context, dyn dynamic.Interface) (rep kube.Report, ok bool, annotateErr error) {
	if !f.Prior.KeepsState() {
		return kube.Report{}, false, nil
	}
	q := kube.FinalStopRequest{Namespace: f.Namespace, Name: f.Name, UID: f.UID, Format: FinalFormat(f.State.Backend, f.FormatType),
		Drain: f.Prior.FinalDrain(f.CarryTo != ""), CarryTo: f.CarryTo, NotRunningFor: finalStopNotRunningFor, Timeout: f.Timeout,
		Every: savepointPoll}
	res := kube.FinalStop(ctx, dyn, q)
	dirs := flinkdeploy.FinalDirsOf(f.State)
	rep, ok = res.Report(q, kube.FinalStopPlaces{CheckpointDir: dirs.Checkpoint, HADir: dirs.HA})
	return rep, ok, res.AnnotateErr
}

// FindCarried is the path of a replacement's final savepoint that waits
// for the create of FlinkDeployment ns/name (kube.CarryTarget.Find), when
// the create restores from nothing else (restores: it has a job and no
// job.initial_savepoint_path); "" otherwise. A failed look stops the
// create: nothing is created on a guess.
func FindCarried(ctx context.Context, dyn dynamic.Interface, ns, name string, restores bool) (string, *Report) {
	if !restores {
		return "", nil
	}
	p, rep, ok := kube.CarryTarget{Namespace: ns, Name: name}.Find(ctx, dyn)
	if !ok {
		return "", &Report{Object: "FlinkDeployment " + ns + "/" + name, Report: rep}
	}
	return p, nil
}
