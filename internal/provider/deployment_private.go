package provider

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
)

// deploymentPrivate is what flinkstate_deployment keeps in private state
// between operations: loaded once at the start of an operation
// (loadDeploymentPrivate) and saved once (save). The import mark is
// base.go's (takeImported).
type deploymentPrivate struct {
	// UID: the object this resource created or imported (ownership.go's
	// privateUID); saved only when set, since Read records it itself
	// (replacedOutsideTerraform).
	UID string
	// WaitPending: why the last create or update did not finish its wait
	// (privateWaitPending); while set, ModifyPlan plans an update whose
	// apply waits again.
	WaitPending string
	// Restoring: that pending wait is a restore wait too, from RestoreFrom
	// ("" for an upgrade: the operator picks the path).
	Restoring   bool
	RestoreFrom string
	// Unwritten: the provider defaults an imported object lacked
	// (flinkdeploy.AbsentDefaults); Adopt: its fields are not taken over
	// yet (kube.TakeOwnership on the next update).
	Unwritten []string
	Adopt     bool
	// ReplaceFrom: namespace/name being replaced (first plan call of a
	// replacement); CarryTo: namespace/name of the replacement (second
	// call, read by Delete); Carried: the carried final savepoint, written
	// to spec.job.initialSavepointPath only (resource_deployment_final.go).
	ReplaceFrom, CarryTo, Carried string
	// RecordedSavepoint: the savepoint the operator had on record when the
	// deployment was last read (kube.RecordedSavepoint); FinalFailed:
	// kube.FinalSavepointFailedAnnotation as last read.
	RecordedSavepoint, FinalFailed string
}

// The private-state keys of deploymentPrivate.
const (
	privateRestorePending    = "restore_pending" // "from:<path>"
	privateUnwritten         = "unwritten"       // comma-separated
	privateAdopt             = "adopt"           // "pending"
	privateReplaceFrom       = "replace_from"
	privateCarryTo           = "carry_to"
	privateCarried           = "carried"
	privateRecordedSavepoint = "recorded_savepoint"
	privateFinalFailed       = "final_savepoint_failed"
)

func loadDeploymentPrivate(ctx context.Context, p privateGetter, diags *diag.Diagnostics) *deploymentPrivate {
	get := func(key string) string { return privateString(ctx, p, key, diags) }
	d := &deploymentPrivate{
		UID:               objectUID(ctx, p, diags),
		WaitPending:       get(privateWaitPending),
		Adopt:             get(privateAdopt) != "",
		ReplaceFrom:       get(privateReplaceFrom),
		CarryTo:           get(privateCarryTo),
		Carried:           get(privateCarried),
		RecordedSavepoint: get(privateRecordedSavepoint),
		FinalFailed:       get(privateFinalFailed),
	}
	if v := get(privateRestorePending); v != "" {
		d.Restoring, d.RestoreFrom = true, strings.TrimPrefix(v, "from:")
	}
	if v := get(privateUnwritten); v != "" {
		d.Unwritten = strings.Split(v, ",")
	}
	return d
}

// save writes every key (an empty value removes it).
func (d *deploymentPrivate) save(ctx context.Context, p privateSetter, diags *diag.Diagnostics) {
	set := func(key, v string) { setPrivateString(ctx, p, key, v, diags) }
	setObjectUID(ctx, p, d.UID, diags)
	set(privateWaitPending, d.WaitPending)
	restore, adopt := "", ""
	if d.Restoring {
		restore = "from:" + d.RestoreFrom
	}
	if d.Adopt {
		adopt = "pending"
	}
	set(privateRestorePending, restore)
	set(privateUnwritten, strings.Join(d.Unwritten, ","))
	set(privateAdopt, adopt)
	set(privateReplaceFrom, d.ReplaceFrom)
	set(privateCarryTo, d.CarryTo)
	set(privateCarried, d.Carried)
	set(privateRecordedSavepoint, d.RecordedSavepoint)
	set(privateFinalFailed, d.FinalFailed)
}

// forgetImport drops what an imported predecessor left: a new object's
// defaults are all written, and it owns what it creates.
func (d *deploymentPrivate) forgetImport() { d.Unwritten, d.Adopt = nil, false }

// waitDone clears the marks of a wait that ended.
func (d *deploymentPrivate) waitDone() { d.WaitPending, d.Restoring, d.RestoreFrom = "", false, "" }
