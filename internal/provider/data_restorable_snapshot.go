package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
)

// flinkstate_restorable_snapshot: the newest snapshot a deployment can
// restore from where it is, read from S3 only, so that it answers in the
// region that is left (issue 35). The domain is checkpoint.LatestRestorable.

type restorableSnapshotDataSource struct{ dataSourceBase }

var (
	_ datasource.DataSourceWithConfigure        = (*restorableSnapshotDataSource)(nil)
	_ datasource.DataSourceWithConfigValidators = (*restorableSnapshotDataSource)(nil)
)

func newRestorableSnapshotDataSource() datasource.DataSource { return &restorableSnapshotDataSource{} }

type restorableSnapshotModel struct {
	SavepointDir  types.String `tfsdk:"savepoint_dir"`
	CheckpointDir types.String `tfsdk:"checkpoint_dir"`
	JobID         types.String `tfsdk:"job_id"`
	Require       types.Bool   `tfsdk:"require"`
	Found         types.Bool   `tfsdk:"found"`
	Path          types.String `tfsdk:"path"`
	Type          types.String `tfsdk:"type"`
	MetadataPath  types.String `tfsdk:"metadata_path"`
	LastModified  types.String `tfsdk:"last_modified"`
	Files         types.Int64  `tfsdk:"files"`
	Skipped       types.List   `tfsdk:"skipped"`
	Contents      types.Object `tfsdk:"contents"`
}

// snapshotDirs: where to look.
var snapshotDirs = atLeastOneOf("savepoint_dir", "checkpoint_dir")

func (d *restorableSnapshotDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_restorable_snapshot"
}

func (d *restorableSnapshotDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "The newest savepoint or retained checkpoint that a job can restore from **where it is**, read from S3 alone: " +
			"for a replica of the state bucket in another region (through a provider alias configured for that region), the " +
			"snapshot to set as `job.initial_savepoint_path` of the standby deployment. A snapshot qualifies when its `_metadata` is " +
			"there, every file it references lies in its own directory (it is *relocatable*: savepoints, canonical or native, name " +
			"their files relative to their directory; an incremental checkpoint names its shared files by absolute path in the bucket " +
			"it was written to, so a copy of it is not), and every one of those files exists (it has *fully arrived*: replication copies object by " +
			"object, in no guaranteed order, so a `_metadata` can arrive before the files it references). The newer snapshots passed " +
			"over are listed in `skipped` with the reason. Unlike `flinkstate_latest_savepoint`, it reads no Kubernetes object, which " +
			"a disaster takes away with the region. For a blue/green application (flinkstate_blue_green_deployment), both children " +
			"write to the template's directories, each job under its own job id, and the operator's transition savepoints go to the " +
			"savepoint directory like any other: it returns the newest snapshot that qualifies whichever child wrote it.",
		Attributes: map[string]schema.Attribute{
			"savepoint_dir": schema.StringAttribute{Optional: true,
				Description: snapshotDirs.doc("s3://bucket/dir holding savepoint-* directories, e.g. flinkstate_state_store.x.savepoint_dir " +
					"with the replica's bucket."),
				Validators: []validator.String{s3DirCheck}},
			"checkpoint_dir": schema.StringAttribute{Optional: true,
				Description: snapshotDirs.doc("s3://bucket/dir holding <job-id>/chk-N directories (execution.checkpointing.dir). Incremental " +
					"checkpoints copied from another bucket are reported in `skipped` as not relocatable."),
				Validators: []validator.String{s3DirCheck}},
			"job_id": schema.StringAttribute{Optional: true,
				Description: "Only this job's checkpoints (32 hex characters), e.g. the job_id of a blue/green deployment's active child " +
					"recorded while its region was up; savepoints are not filtered.",
				Validators: []validator.String{jobIDCheck}},
			"require": schema.BoolAttribute{Optional: true,
				Description: "Fail when no snapshot qualifies, naming why each one was passed over (default false: found = false)."},
			"found": schema.BoolAttribute{Computed: true, Description: "Whether a snapshot qualifies."},
			"path": schema.StringAttribute{Computed: true,
				Description: "s3://.../savepoint-... or .../<job>/chk-N of the newest snapshot that qualifies, or null."},
			"type":          schema.StringAttribute{Computed: true, Description: "`savepoint` or `checkpoint`."},
			"metadata_path": schema.StringAttribute{Computed: true, Description: "Its _metadata."},
			"last_modified": schema.StringAttribute{Computed: true,
				Description: "Last-Modified of its _metadata in the bucket read (RFC 3339). Snapshots are ordered by it, newest first " +
					"(those without _metadata by their newest object)."},
			"files":    schema.Int64Attribute{Computed: true, Description: "How many files its _metadata references, all present."},
			"contents": snapshotContentsAttribute("for the snapshot found (null when none is)"),
			"skipped": schema.ListAttribute{Computed: true, ElementType: types.StringType,
				Description: "The newer snapshots passed over, newest first, each as `<path>: why`: `no _metadata (in progress, not yet " +
					"replicated, or abandoned)`, `partly arrived: 2 of the 9 files it references are missing: s3://...` (the first missing " +
					"file), or `not relocatable: ... named by absolute path outside its directory: s3://<source-bucket>/...` (the first such path)."},
		},
	}
	markdownDescriptions(&resp.Schema)
}

func (d *restorableSnapshotDataSource) ConfigValidators(context.Context) []datasource.ConfigValidator {
	return []datasource.ConfigValidator{snapshotDirs.dataSource()}
}

func (d *restorableSnapshotDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	ctx, cancel := d.meta.boundAWS(ctx, awsReadBound)
	defer cancel()
	var m restorableSnapshotModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c := d.meta.awsOrDiag(ctx, &resp.Diagnostics)
	if c == nil {
		return
	}
	sp, chk := m.SavepointDir.ValueString(), m.CheckpointDir.ValueString()
	what := "the latest restorable snapshot under " + joinNonEmpty(sp, chk)
	res, err := checkpoint.LatestRestorable(ctx, c.S3, sp, chk, m.JobID.ValueString())
	if err != nil {
		addProblem(&resp.Diagnostics, "Finding", what, awsErr(ctx, err), "")
		return
	}
	skipped := make([]string, 0, len(res.Skipped))
	for _, sk := range res.Skipped {
		skipped = append(skipped, sk.Line())
	}
	l, diags := types.ListValueFrom(ctx, types.StringType, skipped)
	resp.Diagnostics.Append(diags...)
	m.Skipped = l
	if res.Snapshot == nil {
		if m.Require.ValueBool() {
			why := fmt.Sprintf("No snapshot restores from where it is: %d found", res.Looked)
			for _, s := range skipped {
				why += "\n  " + s
			}
			addProblem(&resp.Diagnostics, "Finding", what, why,
				"Wait for replication to bring a whole savepoint (a partly arrived one completes as its objects arrive), take savepoints "+
					"regularly (kubernetes.operator.periodic.savepoint.interval) so that one is there, or set require = false to get found = false.")
			return
		}
		m.Found = types.BoolValue(false)
		m.Path, m.Type, m.MetadataPath, m.LastModified = types.StringNull(), types.StringNull(), types.StringNull(), types.StringNull()
		m.Files = types.Int64Null()
		m.Contents = snapshotContents(nil)
	} else {
		m.Found = types.BoolValue(true)
		m.Path = types.StringValue(res.Snapshot.Path)
		m.Type = types.StringValue(res.Snapshot.Kind)
		m.MetadataPath = types.StringValue(res.Check.Completeness.MetadataURI)
		m.LastModified = types.StringValue(res.Snapshot.Time.UTC().Format(time.RFC3339))
		m.Files = types.Int64Value(int64(res.Check.Completeness.Referenced))
		m.Contents = snapshotContents(res.Check.Completeness.Metadata)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func joinNonEmpty(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + " and " + b
}
