package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
)

// readContents sets m.Contents from the _metadata at m.Path: null without a
// path; kept while the path is the one it was read for (prevPath) and it
// is known; otherwise read (one S3 request). A read that fails leaves it
// null with a warning: the snapshot is still what the operator recorded.
func (r *snapshotResource) readContents(ctx context.Context, m *snapshotModel, prevPath string, diags *diag.Diagnostics) {
	p := m.Path.ValueString()
	switch {
	case p == "":
		m.Contents = snapshotContents(nil)
		return
	case p == prevPath && !m.Contents.IsNull() && !m.Contents.IsUnknown():
		return
	}
	m.Contents = snapshotContents(nil)
	a, err := r.meta.AWS(ctx)
	if err != nil {
		diags.AddWarning("Snapshot contents not read", fmt.Sprintf("FlinkStateSnapshot %s: %s; contents is null.", m.ID.ValueString(), err))
		return
	}
	m.Contents = r.meta.readContents(ctx, a, p, "Snapshot contents not read",
		fmt.Sprintf("FlinkStateSnapshot %s completed with %s", m.ID.ValueString(), p), diags)
}
