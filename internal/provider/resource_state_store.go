package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/s3state"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

type stateStoreResource struct{ resourceBase }

func newStateStoreResource() resource.Resource { return &stateStoreResource{} }

type stateStoreModel struct {
	ID            types.String `tfsdk:"id"`
	Bucket        types.String `tfsdk:"bucket"`
	Prefix        types.String `tfsdk:"prefix"`
	ForceDestroy  types.Bool   `tfsdk:"force_destroy"`
	URI           types.String `tfsdk:"uri"`
	CheckpointDir types.String `tfsdk:"checkpoint_dir"`
	SavepointDir  types.String `tfsdk:"savepoint_dir"`
	HADir         types.String `tfsdk:"ha_dir"`
}

func (r *stateStoreResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_state_store"
}

func (r *stateStoreResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	computed := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, Description: desc,
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}}
	}
	resp.Schema = schema.Schema{
		Description: "One Flink application's state location: a prefix in a bucket, with its checkpoint, savepoint and HA " +
			"directories. Creating it writes nothing. Destroying it refuses while checkpoints, savepoints or HA metadata are " +
			"stored there, unless force_destroy is set, and then deletes everything under the prefix and nothing outside it.",
		Attributes: map[string]schema.Attribute{
			"id": computed("`bucket/prefix`: what flinkstate_iam_role's state_store_ids and flinkstate_deployment's state.store_id take."),
			"bucket": schema.StringAttribute{
				Required:      true,
				Description:   "The bucket (e.g. flinkstate_bucket.state.bucket). It must exist.",
				Validators:    []validator.String{bucketNameCheck},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"prefix": schema.StringAttribute{
				Required: true,
				Description: "Key prefix of the application, e.g. `flink/orders`: no leading or trailing slash, no `//`, " +
					"no `.` or `..` segments, no wildcards.",
				Validators:    []validator.String{prefixCheck},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"force_destroy": schema.BoolAttribute{
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(false),
				Description: "On destroy, delete every object under the prefix (checkpoints, savepoints, HA metadata). " +
					"Default false: destroy refuses while state is stored there.",
			},
			"uri":            computed("`s3://bucket/prefix`."),
			"checkpoint_dir": computed("`s3://bucket/prefix/checkpoints`: execution.checkpointing.dir."),
			"savepoint_dir":  computed("`s3://bucket/prefix/savepoints`: execution.checkpointing.savepoint-dir."),
			"ha_dir":         computed("`s3://bucket/prefix/ha`: high-availability.storageDir."),
		},
	}
}

// ModifyPlan computes the ID and directories at plan time: they follow
// from bucket and prefix alone, and a role or deployment planned in the same
// run can then show its policy and configuration in full.
func (r *stateStoreResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan stateStoreModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() || plan.Bucket.IsUnknown() || plan.Prefix.IsUnknown() {
		return
	}
	r.planStore(plan.Bucket, plan.Prefix, req.State.Raw.IsNull(), &resp.Diagnostics)
	plan.fill()
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

func (m *stateStoreModel) fill() {
	s := store.Store{Bucket: m.Bucket.ValueString(), Prefix: m.Prefix.ValueString()}
	cp, sp, ha := s.Dirs()
	m.ID = types.StringValue(s.ID())
	m.URI = types.StringValue(s.URI())
	m.CheckpointDir, m.SavepointDir, m.HADir = types.StringValue(cp), types.StringValue(sp), types.StringValue(ha)
}

func (r *stateStoreResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	s, err := store.Parse(req.ID)
	if err != nil {
		resp.Diagnostics.AddError("Invalid import ID", err.Error()+" (expected bucket/prefix)")
		return
	}
	m := stateStoreModel{Bucket: types.StringValue(s.Bucket), Prefix: types.StringValue(s.Prefix), ForceDestroy: types.BoolValue(false)}
	m.fill()
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *stateStoreResource) s3(ctx context.Context, diags *diag.Diagnostics) *s3.Client {
	if c := r.meta.awsOrDiag(ctx, diags); c != nil {
		return c.S3
	}
	return nil
}

func (r *stateStoreResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan stateStoreModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	cl := r.s3(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if _, err := cl.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(plan.Bucket.ValueString())}); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("bucket"), "Bucket not reachable",
			fmt.Sprintf("s3:HeadBucket %s: %s", plan.Bucket.ValueString(), err))
		return
	}
	plan.fill()
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *stateStoreResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state stateStoreModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	cl := r.s3(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if _, err := cl.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(state.Bucket.ValueString())}); err != nil {
		if isNotFound(err) {
			resp.State.RemoveResource(ctx)
			return
		}
		resp.Diagnostics.AddError("Reading state store failed", fmt.Sprintf("s3:HeadBucket %s: %s", state.Bucket.ValueString(), err))
		return
	}
	state.fill()
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Update only changes force_destroy, which lives in state alone.
func (r *stateStoreResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan stateStoreModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	plan.fill()
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *stateStoreResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state stateStoreModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	cl := r.s3(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	st := store.Store{Bucket: state.Bucket.ValueString(), Prefix: state.Prefix.ValueString()}
	bucket, prefix := st.Bucket, st.Prefix
	if _, err := cl.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket)}); isNotFound(err) {
		return // the bucket, and so the store, is already gone
	}
	if state.ForceDestroy.ValueBool() {
		n, err := s3state.DeleteAll(ctx, cl, bucket, st.KeyPrefix())
		if err != nil {
			resp.Diagnostics.AddError("Deleting state failed", fmt.Sprintf("%s (deleted %d object versions before the error)", err, n))
			return
		}
		if n > 0 {
			resp.Diagnostics.AddWarning("State deleted",
				fmt.Sprintf("force_destroy deleted %d object versions under s3://%s/%s/ (checkpoints, savepoints and HA metadata); nothing outside that prefix was touched.", n, bucket, prefix))
		}
		return
	}
	var found []string
	for _, dir := range store.StateDirs {
		n, more, err := s3state.Contents(ctx, cl, bucket, st.DirKey(dir)+"/", 10000)
		if err != nil {
			resp.Diagnostics.AddError("Checking stored state failed", err.Error())
			return
		}
		if n > 0 {
			found = append(found, fmt.Sprintf("%s under %s/", countObjects(n, more), dir))
		}
	}
	if len(found) == 0 {
		return
	}
	msg := fmt.Sprintf("s3://%s/%s holds Flink state: %s.", bucket, prefix, strings.Join(found, ", "))
	if cp, err := checkpoint.InStore(ctx, cl, st, ""); err == nil && cp != nil {
		msg += fmt.Sprintf(" Newest completed checkpoint: %s (job %s, written %s).", cp.Path, cp.JobID, cp.LastModified.UTC().Format("2006-01-02 15:04:05 MST"))
	}
	resp.Diagnostics.AddAttributeError(path.Root("force_destroy"), "State store is not empty",
		msg+" Nothing was deleted. Restores need these files; move them, or set force_destroy = true and apply before destroying "+
			"to have the provider delete everything under the prefix.")
}
