package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
)

// orphanReportBound bounds the report's S3 calls: it reads every retained
// _metadata and lists all of shared/ and taskowned/, which may take longer
// than a plan's usual awsReadBound.
const orphanReportBound = 5 * time.Minute

type orphanedStateFilesDataSource struct{ dataSourceBase }

var (
	_ datasource.DataSourceWithConfigure        = (*orphanedStateFilesDataSource)(nil)
	_ datasource.DataSourceWithConfigValidators = (*orphanedStateFilesDataSource)(nil)
)

func newOrphanedStateFilesDataSource() datasource.DataSource { return &orphanedStateFilesDataSource{} }

type orphanedStateFilesModel struct {
	CheckpointDir       types.String `tfsdk:"checkpoint_dir"`
	StoreID             types.String `tfsdk:"store_id"`
	JobID               types.String `tfsdk:"job_id"`
	Count               types.Int64  `tfsdk:"orphan_count"`
	TotalBytes          types.Int64  `tfsdk:"total_bytes"`
	Keys                types.List   `tfsdk:"keys"`
	RetainedCheckpoints types.List   `tfsdk:"retained_checkpoints"`
	Unsettled           types.List   `tfsdk:"unsettled"`
	Truncated           types.Bool   `tfsdk:"truncated"`
}

func (d *orphanedStateFilesDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_orphaned_state_files"
}

func (d *orphanedStateFilesDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "A report of the files in a job's `shared/` and `taskowned/` checkpoint directories that no retained checkpoint " +
			"references: it reads the `_metadata` of every `chk-N` of the job (Flink's own format; one it cannot read fails the " +
			"report, since what that checkpoint references is then unknown) and lists both directories. It only reads: it never " +
			"deletes anything, and it is not a list of what is safe to delete. It cannot see (1) a job restored from one of these " +
			"checkpoints in CLAIM mode, whose own checkpoints, stored elsewhere, reference this job's shared files; (2) a checkpoint " +
			"in progress, which writes its files before its `_metadata`: files newer than the newest `_metadata` are reported apart, " +
			"in `unsettled`, but with concurrent checkpoints even older ones may belong to one. Stop the job, or check both before " +
			"deleting anything on this report's word. Cost: a GET of each retained `_metadata` and a listing of `shared/` and " +
			"`taskowned/` (1000 keys a request, at most 1000 requests each; see `truncated`), within 5 minutes. Not on this report, " +
			"because it is not under the checkpoint directory: Flink's job result store, `<ha dir>/job-result-store/<deployment " +
			"name>/<uuid>/<job id>.json`, a new directory at every deploy that neither Flink nor the operator deletes and no restore " +
			"reads (flinkstate_state_store's destroy deletes it with the store).",
		Attributes: map[string]schema.Attribute{
			"checkpoint_dir": schema.StringAttribute{Optional: true,
				Description: checkpointDirOrStore.doc("s3://bucket/dir: execution.checkpointing.dir (e.g. flinkstate_state_store.x.checkpoint_dir)."),
				Validators:  []validator.String{s3DirCheck}},
			"store_id": schema.StringAttribute{Optional: true, Description: checkpointDirOrStore.doc("A state store ID (bucket/prefix); its checkpoints/ dir is used."),
				Validators: []validator.String{storeIDCheck}},
			"job_id": schema.StringAttribute{Required: true,
				Description: "The job (32 hex characters) whose directory, `<checkpoint dir>/<job_id>/`, is reported on.",
				Validators:  []validator.String{jobIDCheck}},
			"orphan_count": schema.Int64Attribute{Computed: true, Description: "How many orphaned files: the length of `keys` (`count` is a name Terraform reserves)."},
			"total_bytes":  schema.Int64Attribute{Computed: true, Description: "Their total size in bytes."},
			"keys": schema.ListAttribute{Computed: true, ElementType: types.StringType,
				Description: "The orphaned files, as s3:// URIs, sorted: unreferenced by every retained checkpoint, and written no later " +
					"than the newest `_metadata`."},
			"retained_checkpoints": schema.ListAttribute{Computed: true, ElementType: types.StringType,
				Description: "The checkpoints whose `_metadata` was read (s3://.../chk-N, newest first): what \"referenced\" means here. " +
					"chk-N directories without `_metadata` (in progress, or abandoned) are not among them."},
			"unsettled": schema.ListAttribute{Computed: true, ElementType: types.StringType,
				Description: "Unreferenced files written after the newest `_metadata` (all of them when no checkpoint is retained), as " +
					"s3:// URIs: a checkpoint in progress may be writing them, so they are not counted as orphans."},
			"truncated": schema.BoolAttribute{Computed: true,
				Description: "The listing of `shared/` or `taskowned/` stopped at its bound (1000 requests of 1000 keys): files past it " +
					"were not looked at, so the report is partial."},
		},
	}
	markdownDescriptions(&resp.Schema)
}

func (d *orphanedStateFilesDataSource) ConfigValidators(context.Context) []datasource.ConfigValidator {
	return []datasource.ConfigValidator{checkpointDirOrStore.dataSource()}
}

func (d *orphanedStateFilesDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	ctx, cancel := d.meta.boundAWS(ctx, orphanReportBound)
	defer cancel()
	var m orphanedStateFilesModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	bucket, dir, ok := checkpointDirOf(m.StoreID, m.CheckpointDir, &resp.Diagnostics)
	if !ok {
		return
	}
	c := d.meta.awsOrDiag(ctx, &resp.Diagnostics)
	if c == nil {
		return
	}
	jobDir := dir + "/" + m.JobID.ValueString()
	rep, err := checkpoint.Orphans(ctx, c.S3, bucket, jobDir)
	if err != nil {
		todo := ""
		if errors.As(err, new(*checkpoint.MetadataError)) {
			todo = "Nothing is reported: what that checkpoint references is unknown, so no file can be called orphaned while it is retained."
		}
		addProblem(&resp.Diagnostics, "Reporting", "the orphaned state files of s3://"+bucket+"/"+jobDir+"/", awsErr(ctx, err), todo)
		return
	}
	uri := func(key string) string { return "s3://" + bucket + "/" + key }
	keys := make([]string, len(rep.Orphans))
	for i, o := range rep.Orphans {
		keys[i] = uri(o.Key)
	}
	unsettled := make([]string, len(rep.Unsettled))
	for i, o := range rep.Unsettled {
		unsettled[i] = uri(o.Key)
	}
	retained := make([]string, len(rep.Checkpoints))
	for i, id := range rep.Checkpoints {
		retained[i] = fmt.Sprintf("s3://%s/%s/chk-%d", bucket, jobDir, id)
	}
	m.Count = types.Int64Value(int64(len(keys)))
	m.TotalBytes = types.Int64Value(rep.OrphanBytes)
	m.Truncated = types.BoolValue(rep.Truncated)
	var diags diag.Diagnostics
	m.Keys, diags = types.ListValueFrom(ctx, types.StringType, keys)
	resp.Diagnostics.Append(diags...)
	m.RetainedCheckpoints, diags = types.ListValueFrom(ctx, types.StringType, retained)
	resp.Diagnostics.Append(diags...)
	m.Unsettled, diags = types.ListValueFrom(ctx, types.StringType, unsettled)
	resp.Diagnostics.Append(diags...)
	if rep.Truncated {
		resp.Diagnostics.AddWarning("Orphan report is partial",
			fmt.Sprintf("Listing s3://%s/%s/shared/ or taskowned/ stopped at its bound: files past it were not looked at (truncated = true).",
				bucket, jobDir))
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
