package provider

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

type latestCheckpointDataSource struct{ dataSourceBase }

var (
	_ datasource.DataSourceWithConfigure        = (*latestCheckpointDataSource)(nil)
	_ datasource.DataSourceWithConfigValidators = (*latestCheckpointDataSource)(nil)
)

func newLatestCheckpointDataSource() datasource.DataSource { return &latestCheckpointDataSource{} }

type latestCheckpointModel struct {
	CheckpointDir types.String `tfsdk:"checkpoint_dir"`
	StoreID       types.String `tfsdk:"store_id"`
	JobID         types.String `tfsdk:"job_id"`
	Namespace     types.String `tfsdk:"namespace"`
	BlueGreenName types.String `tfsdk:"blue_green_deployment_name"`
	Deployment    types.String `tfsdk:"active_deployment_name"`
	Require       types.Bool   `tfsdk:"require"`
	Complete      types.Bool   `tfsdk:"complete"`
	Skipped       types.List   `tfsdk:"skipped"`
	Found         types.Bool   `tfsdk:"found"`
	Path          types.String `tfsdk:"path"`
	CheckpointID  types.Int64  `tfsdk:"checkpoint_id"`
	MetadataPath  types.String `tfsdk:"metadata_path"`
	LastModified  types.String `tfsdk:"last_modified"`
	Contents      types.Object `tfsdk:"contents"`
}

func (d *latestCheckpointDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_latest_checkpoint"
}

func (d *latestCheckpointDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "The newest completed checkpoint (a `chk-N` directory that has `_metadata`) under a checkpoint directory in S3: " +
			"the path a restore points at. In-progress checkpoints are skipped, chk-10 sorts after chk-9, and the cost grows with " +
			"the number of checkpoint directories, never with the number of shared state files (it never lists inside shared/ or " +
			"taskowned/). Restoring needs every file the chosen checkpoint references: never expire or delete shared files on your own. " +
			"With `complete = true` it reads each candidate's `_metadata` and returns the newest checkpoint whose files all exist, " +
			"listing the newer ones it passed over and why. With `blue_green_deployment_name`, it searches only the job of a " +
			"FlinkBlueGreenDeployment's active child, read from Kubernetes: both children checkpoint to the same directory.",
		Attributes: map[string]schema.Attribute{
			"checkpoint_dir": schema.StringAttribute{Optional: true,
				Description: checkpointDirOrStore.doc("s3://bucket/dir: execution.checkpointing.dir (e.g. flinkstate_state_store.x.checkpoint_dir)."),
				Validators:  []validator.String{s3DirCheck}},
			"store_id": schema.StringAttribute{Optional: true, Description: checkpointDirOrStore.doc("A state store ID (bucket/prefix); its checkpoints/ dir is searched."),
				Validators: []validator.String{storeIDCheck}},
			"job_id": schema.StringAttribute{Optional: true, Computed: true,
				Description: bgJobConflict.other("blue_green_deployment_name", "Only this job's checkpoints (32 hex characters). Without it, "+
					"the job whose newest completed checkpoint is newest wins; the job of the checkpoint found is returned here."),
				Validators: []validator.String{jobIDCheck}},
			"blue_green_deployment_name": schema.StringAttribute{Optional: true,
				Description: bgJobConflict.doc(bgNeedsNamespace.doc("A FlinkBlueGreenDeployment (e.g. flinkstate_blue_green_deployment.x.name): " +
					"only the checkpoints of its active child's job, read from Kubernetes when the data source is read. Both children write " +
					"to the same checkpoint directory, each job under its own job id (the operator gives every new deployment a new one: " +
					"ApplicationReconciler.setJobIdIfNecessary), so the newest job directory need not be the one that serves: during a " +
					"transition both jobs run, and after an aborted one the new child's last checkpoint can be newer than the active one's. " +
					"The active child is the one whose job serves: blue or green in ACTIVE_*, the old one while SAVEPOINTING_* or " +
					"TRANSITIONING_TO_* (the operator deletes it only once the new one is ready). found = false while its job has no " +
					"completed checkpoint yet, e.g. right after a transition, when its state is the transition savepoint " +
					"(flinkstate_latest_savepoint with blue_green_deployment_name).")),
				Validators: []validator.String{objectNameCheck, bgJobConflict.string(), bgNeedsNamespace.string()}},
			"namespace": schema.StringAttribute{Optional: true, Description: bgNamespaceNeedsName.doc("Namespace of blue_green_deployment_name."),
				Validators: []validator.String{namespaceCheck, bgNamespaceNeedsName.string()}},
			"active_deployment_name": schema.StringAttribute{Computed: true,
				Description: "With blue_green_deployment_name: the active child whose job was searched, `<name>-blue` or `<name>-green`."},
			"require": schema.BoolAttribute{Optional: true, Description: "Fail when no completed checkpoint exists (default false: found = false)."},
			"complete": schema.BoolAttribute{Optional: true,
				Description: "Return the newest *complete* checkpoint: one whose `_metadata` reads (the provider reads Flink's own format " +
					"and refuses what it does not know) and every file it references exists, e.g. none of its shared files was deleted. " +
					"Newer ones that are not are listed in `skipped`. Default false: only the presence of `_metadata` counts. Cost: for " +
					"each checkpoint looked at, from the newest down to the first complete one, a GET of its `_metadata` (usually " +
					"kilobytes to a few megabytes) and a listing of each directory holding files it references (mostly `shared/`, " +
					"1000 keys a request); without `job_id`, the job is chosen first as without `complete`.",
			},
			"skipped": schema.ListAttribute{Computed: true, ElementType: types.StringType,
				Description: "With `complete = true`: the newer checkpoints passed over, newest first, each as `chk-N: why`, e.g. " +
					"`chk-7: 3 of the 12 files it references are missing: s3://.../shared/abc (and 2 more)`, or `chk-8: no _metadata " +
					"(in progress, or abandoned)`. Empty when the newest is complete; null without `complete`."},
			"found":         schema.BoolAttribute{Computed: true, Description: "Whether a completed checkpoint was found."},
			"path":          schema.StringAttribute{Computed: true, Description: "s3://.../<job>/chk-N of the newest completed checkpoint, or null."},
			"checkpoint_id": schema.Int64Attribute{Computed: true, Description: "N of chk-N."},
			"metadata_path": schema.StringAttribute{Computed: true, Description: ".../chk-N/_metadata."},
			"last_modified": schema.StringAttribute{Computed: true, Description: "When _metadata was written (RFC 3339)."},
			"contents":      snapshotContentsAttribute("with `complete = true` (which reads it; null otherwise, and when none is found)"),
		},
	}
	markdownDescriptions(&resp.Schema)
}

// checkpointDirOrStore: where to look, as a directory or a store.
var checkpointDirOrStore = exactlyOneOf("checkpoint_dir", "store_id")

// bgJobConflict, bgNeedsNamespace: a blue/green deployment names the job.
var (
	bgJobConflict    = conflictsWith("job_id")
	bgNeedsNamespace = requires("namespace")
	// bgNamespaceNeedsName: a namespace alone names nothing.
	bgNamespaceNeedsName = requires("blue_green_deployment_name")
)

func (d *latestCheckpointDataSource) ConfigValidators(context.Context) []datasource.ConfigValidator {
	return []datasource.ConfigValidator{checkpointDirOrStore.dataSource()}
}

func (d *latestCheckpointDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	ctx, cancel := d.meta.boundAWS(ctx, awsReadBound)
	defer cancel()
	var m latestCheckpointModel
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
	what := "the latest checkpoint under s3://" + bucket + "/" + dir + "/"
	jobID, complete := m.JobID.ValueString(), m.Complete.ValueBool()
	m.Deployment = types.StringNull()
	if bg := m.BlueGreenName.ValueString(); bg != "" {
		child, id, ok := d.activeJob(ctx, m.Namespace.ValueString(), bg, &resp.Diagnostics)
		if !ok {
			return
		}
		m.Deployment = types.StringValue(child)
		if id == "" {
			m.JobID = types.StringNull()
			d.none(ctx, &m, fmt.Sprintf("No completed checkpoint: the active child %s of FlinkBlueGreenDeployment %s/%s has no job id yet",
				child, m.Namespace.ValueString(), bg), what, resp)
			return
		}
		jobID = id
		what += jobID + "/ (the job of " + child + ", the active child)"
	}
	var cp *checkpoint.Checkpoint
	if !complete || jobID == "" {
		// Without complete, or to choose the job: the newest _metadata.
		var err error
		if cp, err = checkpoint.Latest(ctx, c.S3, bucket, dir, jobID); err != nil {
			addProblem(&resp.Diagnostics, "Finding", what, awsErr(ctx, err), "")
			return
		}
		if cp != nil {
			jobID = cp.JobID
		}
	}
	m.Skipped = types.ListNull(types.StringType)
	var skipped []string
	var meta *checkpoint.Metadata
	if complete {
		if jobID != "" {
			res, err := checkpoint.LatestComplete(ctx, c.S3, bucket, dir, jobID)
			if err != nil {
				addProblem(&resp.Diagnostics, "Finding", "the latest complete checkpoint under s3://"+bucket+"/"+dir+"/"+jobID+"/", awsErr(ctx, err), "")
				return
			}
			cp = res.Checkpoint
			if cp != nil && res.Completeness != nil {
				meta = res.Completeness.Metadata
			}
			for _, sk := range res.Skipped {
				skipped = append(skipped, skippedLine(sk))
			}
		}
		var diags diag.Diagnostics
		m.Skipped, diags = types.ListValueFrom(ctx, types.StringType, append([]string{}, skipped...))
		resp.Diagnostics.Append(diags...)
	}
	if cp == nil {
		if m.Require.ValueBool() && len(skipped) > 0 {
			addProblem(&resp.Diagnostics, "Finding", "the latest complete checkpoint under s3://"+bucket+"/"+dir+"/"+jobID+"/",
				"No complete checkpoint: "+strings.Join(skipped, "; "),
				"Restore from a savepoint instead (a flinkstate_snapshot's path, or data.flinkstate_latest_savepoint), or set require = false "+
					"to get found = false instead of an error.")
			return
		}
		if !m.BlueGreenName.IsNull() {
			m.JobID = types.StringValue(jobID)
		}
		d.none(ctx, &m, fmt.Sprintf("No completed checkpoint: no chk-N directory with _metadata under s3://%s/%s/ (job filter %q)", bucket, dir, jobID), what, resp)
		return
	}
	m.Found = types.BoolValue(true)
	m.Path = types.StringValue(cp.Path)
	m.CheckpointID = types.Int64Value(cp.ID)
	m.MetadataPath = types.StringValue(cp.MetadataPath)
	m.LastModified = types.StringValue(cp.LastModified.UTC().Format(time.RFC3339))
	m.JobID = types.StringValue(cp.JobID)
	m.Contents = snapshotContents(meta)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// none answers found = false, or with require the error why.
func (d *latestCheckpointDataSource) none(ctx context.Context, m *latestCheckpointModel, why, what string, resp *datasource.ReadResponse) {
	if m.Require.ValueBool() {
		addProblem(&resp.Diagnostics, "Finding", what, why,
			"Wait for the job to complete a checkpoint, or set require = false to get found = false instead of an error.")
		return
	}
	m.Found = types.BoolValue(false)
	m.Path, m.MetadataPath, m.LastModified = types.StringNull(), types.StringNull(), types.StringNull()
	m.CheckpointID = types.Int64Null()
	m.Contents = snapshotContents(nil)
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

// activeJob is the active child of the FlinkBlueGreenDeployment ns/name
// (flinkdeploy.ActiveChild of its status.blueGreenState) and that child's
// job id ("" while it has none).
func (d *latestCheckpointDataSource) activeJob(ctx context.Context, ns, name string, diags *diag.Diagnostics) (child, jobID string, ok bool) {
	c := d.meta.kubeOrDiag(diags)
	if c == nil {
		return "", "", false
	}
	what := "the active child of FlinkBlueGreenDeployment " + ns + "/" + name
	bg, err := kube.GetBlueGreen(ctx, c.Dynamic, ns, name)
	if err != nil {
		addProblem(diags, "Reading", what, err.Error(), "")
		return "", "", false
	}
	active := flinkdeploy.ActiveChild(kube.ReadBlueGreenStatus(bg).State)
	jobID, err = kube.ChildJobID(ctx, c.Dynamic, bg, active)
	if err != nil {
		addProblem(diags, "Reading", what, err.Error(), "")
		return "", "", false
	}
	return flinkdeploy.ChildName(name, active), jobID, true
}

// skippedLine is a checkpoint LatestComplete passed over, as skipped lists
// it: "chk-N: why", naming the first missing file.
func skippedLine(sk checkpoint.SkippedCheckpoint) string {
	if len(sk.Missing) == 0 {
		return fmt.Sprintf("chk-%d: %s", sk.ID, sk.Reason)
	}
	more := ""
	if len(sk.Missing) > 1 {
		more = fmt.Sprintf(" (and %d more)", len(sk.Missing)-1)
	}
	return fmt.Sprintf("chk-%d: %s: %s%s", sk.ID, sk.Reason, sk.Missing[0], more)
}

// checkpointDirOf is the bucket and key prefix of a checkpoint directory
// given as store_id (its checkpoints/) or checkpoint_dir.
func checkpointDirOf(storeID, checkpointDir types.String, diags *diag.Diagnostics) (bucket, dir string, ok bool) {
	if !storeID.IsNull() {
		s, err := store.Parse(storeID.ValueString())
		if err != nil {
			diags.AddAttributeError(path.Root("store_id"), "Invalid store ID", err.Error())
			return "", "", false
		}
		return s.Bucket, s.DirKey(store.CheckpointsDir), true
	}
	bucket, dir, err := checkpoint.ParseS3URI(checkpointDir.ValueString())
	if err != nil {
		diags.AddAttributeError(path.Root("checkpoint_dir"), "Invalid checkpoint_dir", err.Error())
		return "", "", false
	}
	return bucket, dir, true
}
