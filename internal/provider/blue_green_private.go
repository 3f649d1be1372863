package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// blueGreenPrivate is what flinkstate_blue_green_deployment keeps in
// private state between operations, loaded once at the start of an
// operation (loadBlueGreenPrivate) and saved once (save), as
// deploymentPrivate is for flinkstate_deployment, with the same keys where
// they mean the same (privateUID, privateWaitPending).
type blueGreenPrivate struct {
	// UID: the object this resource created or imported (ownership.go).
	UID string
	// WaitPending: why the last create or update did not finish its wait
	// (a wait that ran out; "" once a wait ended). While set, ModifyPlan
	// plans an update whose apply waits again, for Wait.
	WaitPending string
	// Wait: the wait to resume: its target state, the child it started or
	// rewrote, and the lastReconciledTimestamp and FAILING error before the
	// write.
	Wait struct{ Target, Job, Child, Since, SinceError string }
}

// The private-state keys of blueGreenPrivate's pending wait.
const (
	privateWaitTarget = "wait_target"
	privateWaitJob    = "wait_job"
	privateWaitChild  = "wait_child"
	privateWaitSince  = "wait_since"
	privateWaitError  = "wait_since_error"
)

func loadBlueGreenPrivate(ctx context.Context, p privateGetter, diags *diag.Diagnostics) *blueGreenPrivate {
	get := func(key string) string { return privateString(ctx, p, key, diags) }
	b := &blueGreenPrivate{UID: objectUID(ctx, p, diags), WaitPending: get(privateWaitPending)}
	b.Wait.Target, b.Wait.Job = get(privateWaitTarget), get(privateWaitJob)
	b.Wait.Child, b.Wait.Since, b.Wait.SinceError = get(privateWaitChild), get(privateWaitSince), get(privateWaitError)
	return b
}

// save writes every key (an empty value removes it).
func (b *blueGreenPrivate) save(ctx context.Context, p privateSetter, diags *diag.Diagnostics) {
	set := func(key, v string) { setPrivateString(ctx, p, key, v, diags) }
	setObjectUID(ctx, p, b.UID, diags)
	set(privateWaitPending, b.WaitPending)
	set(privateWaitTarget, b.Wait.Target)
	set(privateWaitJob, b.Wait.Job)
	set(privateWaitChild, b.Wait.Child)
	set(privateWaitSince, b.Wait.Since)
	set(privateWaitError, b.Wait.SinceError)
}

// waitStarts marks w pending before it runs: an apply killed during the
// wait leaves the mark, and the next plan waits again.
func (b *blueGreenPrivate) waitStarts(w kube.BlueGreenWait) {
	b.WaitPending = "the apply did not finish waiting"
	b.Wait.Target, b.Wait.Job, b.Wait.Child, b.Wait.Since, b.Wait.SinceError = w.Target, w.Job, w.Child, w.Since, w.SinceError
}

// waitDone clears the marks of a wait that ended.
func (b *blueGreenPrivate) waitDone() {
	b.WaitPending = ""
	b.Wait = struct{ Target, Job, Child, Since, SinceError string }{}
}
