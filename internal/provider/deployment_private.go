package provider

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/deployop"
)

// deploymentPrivate is what flinkstate_deployment keeps in private state
// between operations: loaded once at the start of an operation
// (loadDeploymentPrivate) and saved once (save). The import mark is
// base.go's (takeImported).
type deploymentPrivate struct {
	// Marks: the object's UID (ownership.go's privateUID; saved only when
	// set, since Read records it itself: replacedOutsideTerraform), a wait
	// that did not end (privateWaitPending: ModifyPlan plans an update whose
	// apply waits again) and the carried final savepoint written to
	// spec.job.initialSavepointPath only (resource_deployment_restore.go).
	deployop.Marks
	// Unwritten: the provider defaults an imported object lacked
	// (flinkdeploy.AbsentDefaults); Adopt: its fields are not taken over
	// yet (kube.TakeOwnership on the next update).
	Unwritten []string
	Adopt     bool
	// ReplaceFrom: namespace/name being replaced (first plan call of a
	// replacement); CarryTo: namespace/name of the replacement (second
	// call, read by Delete).
	ReplaceFrom, CarryTo string
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

// privateText is a private-state key kept as it is, and its field.
type privateText struct {
	key string
	v   *string
}

// texts are deploymentPrivate's privateTexts.
func (d *deploymentPrivate) texts() []privateText {
	return []privateText{{privateWaitPending, &d.WaitPending}, {privateReplaceFrom, &d.ReplaceFrom}, {privateCarryTo, &d.CarryTo},
		{privateCarried, &d.Carried}, {privateRecordedSavepoint, &d.RecordedSavepoint}, {privateFinalFailed, &d.FinalFailed}}
}

func loadDeploymentPrivate(ctx context.Context, p privateGetter, diags *diag.Diagnostics) *deploymentPrivate {
	get := func(key string) string { return privateString(ctx, p, key, diags) }
	d := &deploymentPrivate{Adopt: get(privateAdopt) != ""}
	d.UID = objectUID(ctx, p, diags)
	for _, t := range d.texts() {
		*t.v = get(t.key)
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
	for _, t := range d.texts() {
		set(t.key, *t.v)
	}
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
}

// forgetImport drops what an imported predecessor left: a new object's
// defaults are all written, and it owns what it creates.
func (d *deploymentPrivate) forgetImport() { d.Unwritten, d.Adopt = nil, false }
