package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/datasourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

type latestCheckpointDataSource struct{ dataSourceBase }

func newLatestCheckpointDataSource() datasource.DataSource { return &latestCheckpointDataSource{} }

type latestCheckpointModel struct {
	CheckpointDir types.String `tfsdk:"checkpoint_dir"`
	StoreID       types.String `tfsdk:"store_id"`
	JobID         types.String `tfsdk:"job_id"`
	Require       types.Bool   `tfsdk:"require"`
	Found         types.Bool   `tfsdk:"found"`
	Path          types.String `tfsdk:"path"`
	CheckpointID  types.Int64  `tfsdk:"checkpoint_id"`
	MetadataPath  types.String `tfsdk:"metadata_path"`
	LastModified  types.String `tfsdk:"last_modified"`
}

func (d *latestCheckpointDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_latest_checkpoint"
}

func (d *latestCheckpointDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "The newest completed checkpoint (a `chk-N` directory that has `_metadata`) under a checkpoint directory in S3: " +
			"the path a restore points at. In-progress checkpoints are skipped, chk-10 sorts after chk-9, and the cost grows with " +
			"the number of checkpoint directories, never with the number of shared state files (it never lists inside shared/ or " +
			"taskowned/). Restoring needs every file the chosen checkpoint references: never expire or delete shared files on your own.",
		Attributes: map[string]schema.Attribute{
			"checkpoint_dir": schema.StringAttribute{Optional: true,
				Description: "s3://bucket/dir: execution.checkpointing.dir (e.g. flinkstate_state_store.x.checkpoint_dir).",
				Validators:  []validator.String{s3DirCheck}},
			"store_id": schema.StringAttribute{Optional: true, Description: "A state store ID (bucket/prefix); its checkpoints/ dir is searched.",
				Validators: []validator.String{storeIDCheck}},
			"job_id": schema.StringAttribute{Optional: true,
				Description: "Only this job's checkpoints (32 hex characters). Without it, the job whose newest completed checkpoint is newest wins.",
				Validators:  []validator.String{jobIDCheck}},
			"require":       schema.BoolAttribute{Optional: true, Description: "Fail when no completed checkpoint exists (default false: found = false)."},
			"found":         schema.BoolAttribute{Computed: true, Description: "Whether a completed checkpoint was found."},
			"path":          schema.StringAttribute{Computed: true, Description: "s3://.../<job>/chk-N of the newest completed checkpoint, or null."},
			"checkpoint_id": schema.Int64Attribute{Computed: true, Description: "N of chk-N."},
			"metadata_path": schema.StringAttribute{Computed: true, Description: ".../chk-N/_metadata."},
			"last_modified": schema.StringAttribute{Computed: true, Description: "When _metadata was written (RFC 3339)."},
		},
	}
}

func (d *latestCheckpointDataSource) ConfigValidators(context.Context) []datasource.ConfigValidator {
	return []datasource.ConfigValidator{datasourcevalidator.ExactlyOneOf(path.MatchRoot("checkpoint_dir"), path.MatchRoot("store_id"))}
}

func (d *latestCheckpointDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	ctx, cancel := d.meta.boundAWS(ctx, awsReadBound)
	defer cancel()
	var m latestCheckpointModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var bucket, dir string
	if !m.StoreID.IsNull() {
		s, err := store.Parse(m.StoreID.ValueString())
		if err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("store_id"), "Invalid store ID", err.Error())
			return
		}
		bucket, dir = s.Bucket, s.DirKey(store.CheckpointsDir)
	} else {
		var err error
		if bucket, dir, err = checkpoint.ParseS3URI(m.CheckpointDir.ValueString()); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("checkpoint_dir"), "Invalid checkpoint_dir", err.Error())
			return
		}
	}
	c := d.meta.awsOrDiag(ctx, &resp.Diagnostics)
	if c == nil {
		return
	}
	cp, err := checkpoint.Latest(ctx, c.S3, bucket, dir, m.JobID.ValueString())
	if err != nil {
		addProblem(&resp.Diagnostics, "Finding", "the latest checkpoint under s3://"+bucket+"/"+dir+"/", err.Error(), "")
		return
	}
	if cp == nil {
		if m.Require.ValueBool() {
			addProblem(&resp.Diagnostics, "Finding", "the latest checkpoint under s3://"+bucket+"/"+dir+"/",
				fmt.Sprintf("No completed checkpoint: no chk-N directory with _metadata under s3://%s/%s/ (job filter %q)", bucket, dir, m.JobID.ValueString()),
				"Wait for the job to complete a checkpoint, or set require = false to get found = false instead of an error.")
			return
		}
		m.Found = types.BoolValue(false)
		m.Path, m.MetadataPath, m.LastModified = types.StringNull(), types.StringNull(), types.StringNull()
		m.CheckpointID = types.Int64Null()
		if m.JobID.IsNull() {
			m.JobID = types.StringNull()
		}
	} else {
		m.Found = types.BoolValue(true)
		m.Path = types.StringValue(cp.Path)
		m.CheckpointID = types.Int64Value(cp.ID)
		m.MetadataPath = types.StringValue(cp.MetadataPath)
		m.LastModified = types.StringValue(cp.LastModified.UTC().Format(time.RFC3339))
		m.JobID = types.StringValue(cp.JobID)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
