package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
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
	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/s3state"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

type stateStoreResource struct{ resourceBase }

var (
	_ resource.ResourceWithConfigure   = (*stateStoreResource)(nil)
	_ resource.ResourceWithImportState = (*stateStoreResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*stateStoreResource)(nil)
)

func newStateStoreResource() resource.Resource { return &stateStoreResource{} }

type stateStoreModel struct {
	ID            types.String   `tfsdk:"id"`
	Bucket        types.String   `tfsdk:"bucket"`
	Prefix        types.String   `tfsdk:"prefix"`
	ForceDestroy  types.Bool     `tfsdk:"force_destroy"`
	URI           types.String   `tfsdk:"uri"`
	CheckpointDir types.String   `tfsdk:"checkpoint_dir"`
	SavepointDir  types.String   `tfsdk:"savepoint_dir"`
	HADir         types.String   `tfsdk:"ha_dir"`
	OwnerToken    types.String   `tfsdk:"owner_token"`
	UnsafeRules   types.List     `tfsdk:"unsafe_lifecycle_rules"`
	Timeouts      timeouts.Value `tfsdk:"timeouts"`
}

func (r *stateStoreResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_state_store"
}

func (r *stateStoreResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	computed := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, Description: desc,
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}}
	}
	resp.Schema = schema.Schema{
		Description: "One Flink application's state location: a prefix in a bucket, with its checkpoint, savepoint and HA " +
			"directories. Creating it writes one small ownership marker, `<prefix>/" + store.MarkerName + "`, and refuses a prefix that " +
			"holds objects, belongs to another store or lies inside another store's prefix. Destroying it refuses while checkpoints, " +
			"savepoints or HA metadata are stored there, unless force_destroy is set, and then deletes everything under the prefix " +
			"(except stores nested below it) and nothing outside it, and only when the marker names this store's owner_token. " +
			"Flink's job result store, `ha/job-result-store/<deployment name>/<uuid>/<job id>.json` (the operator points it at a new " +
			"directory at every deploy, and neither Flink nor the operator ever deletes one), is not counted as stored state: no restore " +
			"reads it, and a destroy of a store this configuration owns deletes it with the marker, saying how many objects it deleted.",
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
				Description: "On destroy, delete every object under the prefix (checkpoints, savepoints, HA metadata, the job result store). " +
					"Default false: destroy refuses while state is stored there.",
			},
			"uri":            computed("`s3://bucket/prefix`."),
			"checkpoint_dir": computed("`s3://bucket/prefix/checkpoints`: execution.checkpointing.dir."),
			"savepoint_dir":  computed("`s3://bucket/prefix/savepoints`: execution.checkpointing.savepoint-dir."),
			"ha_dir":         computed("`s3://bucket/prefix/ha`: high-availability.storageDir."),
			"unsafe_lifecycle_rules": schema.ListAttribute{Computed: true, ElementType: types.StringType,
				Description: "IDs of the bucket's lifecycle rules that expire or transition current objects under this prefix or a parent " +
					"of it (e.g. a 7-day expiry on `flink/`). Always planned empty: such a rule added outside Terraform shows in the next " +
					"plan, and apply removes its current-object expiration and transitions (other rules and actions stay)."},
			"owner_token": schema.StringAttribute{Computed: true, Sensitive: true,
				Description: "Random token recorded in the store's ownership marker (`<prefix>/" + store.MarkerName + "`) and in this state: " +
					"force_destroy deletes only when the marker names this token. Known after the first apply; on import it is read from the marker."},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeoutsBlock(ctx, timeouts.Opts{Create: true, Read: true, Update: true, Delete: true},
				"every S3 call of the operation must be answered within it (create, update, delete: default 5m; read, also at plan: default 30s)"),
		},
	}
	markdownDescriptions(&resp.Schema)
}

// ModifyPlan computes the ID and directories at plan time: they follow
// from bucket and prefix alone, and a role or deployment planned in the same
// run can then show its policy and configuration in full.
func (r *stateStoreResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	var state *stateStoreModel
	if !req.State.Raw.IsNull() {
		state = &stateStoreModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, state)...)
	}
	if req.Plan.Raw.IsNull() {
		// Destroy: say at plan what force_destroy will delete.
		if state != nil && state.ForceDestroy.ValueBool() {
			r.warnStateDeleted(ctx, *state, "Destroying", resp)
		}
		return
	}
	var plan stateStoreModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() || plan.Bucket.IsUnknown() || plan.Prefix.IsUnknown() {
		return
	}
	replacing := state != nil && (!state.Bucket.Equal(plan.Bucket) || !state.Prefix.Equal(plan.Prefix))
	r.planStore(plan.Bucket, plan.Prefix, req.State.Raw.IsNull(), replacing, &resp.Diagnostics)
	plan.fill()
	plan.UnsafeRules = emptyList()
	if state != nil {
		plan.OwnerToken = state.OwnerToken
		if !state.Bucket.Equal(plan.Bucket) || !state.Prefix.Equal(plan.Prefix) {
			plan.OwnerToken = types.StringUnknown() // a new store, with a new marker
			if state.ForceDestroy.ValueBool() {
				r.warnStateDeleted(ctx, *state, "Replacing", resp)
			}
		} else if state.OwnerToken.ValueString() == "" {
			// No marker recorded (a store from before markers, an import of a
			// prefix without one, or a marker deleted out of band): the
			// apply records it.
			plan.OwnerToken = types.StringUnknown()
		}
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

// warnStateDeleted reads, for an existing store about to be destroyed or
// replaced with force_destroy, what that will delete, and warns at plan.
func (r *stateStoreResource) warnStateDeleted(ctx context.Context, state stateStoreModel, doing string, resp *resource.ModifyPlanResponse) {
	timeout, d := state.Timeouts.Read(ctx, awsReadBound)
	resp.Diagnostics.Append(d...)
	ctx, cancel := r.meta.boundAWS(ctx, timeout)
	defer cancel()
	cl := r.s3(ctx, &resp.Diagnostics)
	if cl == nil {
		return
	}
	st := store.Store{Bucket: state.Bucket.ValueString(), Prefix: state.Prefix.ValueString()}
	summary, err := describeState(ctx, cl, st)
	if err != nil {
		addProblemWarning(&resp.Diagnostics, "Counting what force_destroy would delete in", "state store "+st.ID(), awsErr(ctx, err),
			fmt.Sprintf("%s s3://%s/%s with force_destroy = true deletes everything under it.", doing, st.Bucket, st.Prefix))
		return
	}
	if summary == "" {
		return
	}
	resp.Diagnostics.AddWarning("force_destroy will delete Flink state",
		fmt.Sprintf("%s the state store %s (force_destroy = true) deletes %s Restores need these files: stop here unless that is intended.", doing, st.ID(), summary))
}

// describeState says what Flink state a store holds ("" when none): counts
// per directory and the newest completed checkpoint.
//
// The job result store's entries under ha/job-result-store/ (see
// store.JobResultStoreDir) are not counted: no restore reads them, and every
// deploy leaves a directory of them that nothing deletes, so they would keep
// every store that ever ran a job from being destroyed.
func describeState(ctx context.Context, cl *s3.Client, st store.Store) (string, error) {
	var found []string
	for _, dir := range store.StateDirs {
		n, more, err := s3state.Contents(ctx, cl, st.Bucket, st.DirKey(dir)+"/", 10000)
		if err != nil {
			return "", err
		}
		if dir == store.HADir && n > 0 && !more {
			jrs, err := jobResultEntries(ctx, cl, st)
			if err != nil {
				return "", err
			}
			n -= jrs
		}
		if n > 0 {
			found = append(found, fmt.Sprintf("%s under %s/", countObjects(n, more), dir))
		}
	}
	if len(found) == 0 {
		return "", nil
	}
	msg := fmt.Sprintf("s3://%s/%s holds Flink state: %s.", st.Bucket, st.Prefix, strings.Join(found, ", "))
	if cp, err := checkpoint.InStore(ctx, cl, st, ""); err == nil {
		msg += newestCheckpointNote(cp)
	}
	return msg, nil
}

// jobResultEntries counts the objects of Flink's job result store under the
// store (store.JobResultStoreDir).
func jobResultEntries(ctx context.Context, cl *s3.Client, st store.Store) (int, error) {
	n, _, err := s3state.Contents(ctx, cl, st.Bucket, st.DirKey(store.JobResultStoreDir)+"/", 10000)
	return n, err
}

// newestCheckpointNote is the sentence a force_destroy warning adds about
// the newest completed checkpoint it would delete ("" for none).
func newestCheckpointNote(cp *checkpoint.Checkpoint) string {
	if cp == nil {
		return ""
	}
	return fmt.Sprintf(" Newest completed checkpoint: %s (job %s, written %s).", cp.Path, cp.JobID, cp.LastModified.UTC().Format("2006-01-02 15:04:05 MST"))
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
		addProblem(&resp.Diagnostics, "Importing", "state store "+req.ID, err.Error(), "The import ID is bucket/prefix, e.g. acme-flink-state/flink/orders.")
		return
	}
	m := stateStoreModel{Bucket: types.StringValue(s.Bucket), Prefix: types.StringValue(s.Prefix), ForceDestroy: types.BoolValue(false),
		OwnerToken: types.StringNull(), UnsafeRules: types.ListNull(types.StringType)}
	// No timeouts block yet: the null value the schema types it as.
	resp.Diagnostics.Append(resp.State.GetAttribute(ctx, path.Root("timeouts"), &m.Timeouts)...)
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
	timeout, d := plan.Timeouts.Create(ctx, awsWriteBound)
	resp.Diagnostics.Append(d...)
	ctx, cancel := r.meta.boundAWS(ctx, timeout)
	defer cancel()
	cl := r.s3(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	st := store.Store{Bucket: plan.Bucket.ValueString(), Prefix: plan.Prefix.ValueString()}
	if err := s3state.FindBucket(ctx, cl, st.Bucket); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("bucket"), "Bucket not reachable", fmt.Sprintf("Bucket %s: %s", st.Bucket, awsErr(ctx, err)))
		return
	}
	// Never adopt: a prefix that is another store's, inside one, or holding
	// objects is refused before anything is written.
	if err := s3state.CheckFree(ctx, cl, st); err != nil {
		var c *s3state.ConflictError
		switch {
		case errors.As(err, &c) && c.ImportID != "":
			resp.Diagnostics.AddAttributeError(path.Root("prefix"), "State store already exists", alreadyExists(c.Detail+"; the store", c.ImportID))
		case errors.As(err, &c):
			resp.Diagnostics.AddAttributeError(path.Root("prefix"), "Prefix not free for a new state store", c.Detail+". Nothing was written.")
		default:
			addProblem(&resp.Diagnostics, "Creating", "state store "+st.ID(), fmt.Sprintf("checking s3://%s/%s/ before creating the store: %s", st.Bucket, st.Prefix, awsErr(ctx, err)), "Nothing was written.")
		}
		return
	}
	token := s3state.NewOwnerToken()
	if err := s3state.WriteMarker(ctx, cl, st, token, r.meta.userAgent(), true); err != nil {
		var c *s3state.ConflictError
		if errors.As(err, &c) {
			resp.Diagnostics.AddAttributeError(path.Root("prefix"), "Prefix not free for a new state store", c.Detail+". Nothing was written.")
			return
		}
		resp.Diagnostics.AddAttributeError(path.Root("prefix"), "Creating state store failed", awsErr(ctx, err))
		return
	}
	// The nesting check ran before the marker existed: a store created at
	// the same time above or below this prefix passed its own check too.
	// Checked again now that both markers exist; the loser (both, when the
	// two checks see each other) removes its own marker again.
	if err := s3state.CheckNotNested(ctx, cl, st); err != nil {
		undo := s3state.RemoveOwnMarker(ctx, cl, st, token)
		detail := err.Error() + ". This store's marker was removed again; nothing else was written."
		if undo != nil {
			detail = err.Error() + fmt.Sprintf(". Removing this store's marker again failed (%s): delete s3://%s/%s if no configuration manages the store.",
				awsErr(ctx, undo), st.Bucket, st.MarkerKey())
		}
		var c *s3state.ConflictError
		if errors.As(err, &c) {
			resp.Diagnostics.AddAttributeError(path.Root("prefix"), "Prefix not free for a new state store", detail)
		} else {
			addProblem(&resp.Diagnostics, "Creating", "state store "+st.ID(), "checking for stores created at the same time: "+detail, "")
		}
		return
	}
	plan.fill()
	plan.OwnerToken = types.StringValue(token)
	plan.UnsafeRules = emptyList()
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *stateStoreResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state stateStoreModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	timeout, d := state.Timeouts.Read(ctx, awsReadBound)
	resp.Diagnostics.Append(d...)
	ctx, cancel := r.meta.boundAWS(ctx, timeout)
	defer cancel()
	cl := r.s3(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	st := store.Store{Bucket: state.Bucket.ValueString(), Prefix: state.Prefix.ValueString()}
	if err := s3state.FindBucket(ctx, cl, st.Bucket); err != nil {
		if notfound.Is(err) {
			resp.State.RemoveResource(ctx)
			return
		}
		addProblem(&resp.Diagnostics, "Reading", "state store "+st.ID(), awsErr(ctx, err), "")
		return
	}
	m, err := s3state.ReadMarker(ctx, cl, st)
	if err != nil {
		addProblem(&resp.Diagnostics, "Reading", "state store "+st.ID(), awsErr(ctx, err), "")
		return
	}
	switch token := state.OwnerToken.ValueString(); {
	case m == nil:
		// No marker (deleted out of band, or never written): the next
		// apply records it again.
		state.OwnerToken = types.StringValue("")
	case state.OwnerToken.IsNull():
		// After import: importing is the explicit way to take a store over.
		state.OwnerToken = types.StringValue(m.Owner)
	case m.Owner != token:
		resp.Diagnostics.AddWarning("State store owned elsewhere",
			fmt.Sprintf("The ownership marker s3://%s/%s names another owner than this configuration's state. force_destroy will not "+
				"delete anything there. If this configuration should own the store, remove it from state and import it again.", st.Bucket, st.MarkerKey()))
	}
	rules, err := s3state.FindStoreUnsafeRules(ctx, cl, st)
	if err != nil {
		addProblem(&resp.Diagnostics, "Reading", "state store "+st.ID(), awsErr(ctx, err), "")
		return
	}
	state.UnsafeRules = listOfStrings(rules)
	state.Timeouts = knownTimeouts(ctx, state.Timeouts)
	state.fill()
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Update changes force_destroy, which lives in state alone, and records the
// ownership marker when the plan says it is missing.
func (r *stateStoreResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state stateStoreModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	timeout, d := plan.Timeouts.Update(ctx, awsWriteBound)
	resp.Diagnostics.Append(d...)
	ctx, cancel := r.meta.boundAWS(ctx, timeout)
	defer cancel()
	if resp.Diagnostics.HasError() {
		return
	}
	plan.fill()
	st := store.Store{Bucket: plan.Bucket.ValueString(), Prefix: plan.Prefix.ValueString()}
	if len(state.UnsafeRules.Elements()) > 0 {
		cl := r.s3(ctx, &resp.Diagnostics)
		if cl == nil {
			return
		}
		if err := s3state.RemoveStoreUnsafeRules(ctx, cl, st); err != nil {
			addProblem(&resp.Diagnostics, "Removing lifecycle expiry for", "state store "+st.ID(), awsErr(ctx, err), "Apply again once S3 answers.")
			return
		}
	}
	plan.UnsafeRules = emptyList()
	if plan.OwnerToken.IsUnknown() {
		cl := r.s3(ctx, &resp.Diagnostics)
		if cl == nil {
			return
		}
		m, err := s3state.ReadMarker(ctx, cl, st)
		if err != nil {
			addProblem(&resp.Diagnostics, "Recording ownership of", "state store "+st.ID(), awsErr(ctx, err), "Apply again once S3 answers.")
			return
		}
		if m != nil && m.Owner != state.OwnerToken.ValueString() {
			resp.Diagnostics.AddAttributeError(path.Root("prefix"), "State store owned elsewhere",
				fmt.Sprintf("s3://%s/%s names another owner (store %s): this configuration does not take it over. Nothing was changed.", st.Bucket, st.MarkerKey(), m.StoreID))
			return
		}
		token := state.OwnerToken.ValueString()
		if token == "" {
			token = s3state.NewOwnerToken()
		}
		if m == nil {
			if err := s3state.WriteMarker(ctx, cl, st, token, r.meta.userAgent(), true); err != nil {
				addProblem(&resp.Diagnostics, "Recording ownership of", "state store "+st.ID(), awsErr(ctx, err), "Apply again once S3 answers.")
				return
			}
		}
		plan.OwnerToken = types.StringValue(token)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *stateStoreResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state stateStoreModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	timeout, d := state.Timeouts.Delete(ctx, awsWriteBound)
	resp.Diagnostics.Append(d...)
	ctx, cancel := r.meta.boundAWS(ctx, timeout)
	defer cancel()
	cl := r.s3(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	st := store.Store{Bucket: state.Bucket.ValueString(), Prefix: state.Prefix.ValueString()}
	if err := s3state.FindBucket(ctx, cl, st.Bucket); notfound.Is(err) {
		return // the bucket, and so the store, is already gone
	} else if err != nil {
		addProblem(&resp.Diagnostics, "Deleting", "state store "+st.ID(), awsErr(ctx, err), "Nothing was deleted.")
		return
	}
	m, err := s3state.ReadMarker(ctx, cl, st)
	if err != nil {
		addProblem(&resp.Diagnostics, "Deleting", "state store "+st.ID(), awsErr(ctx, err), "Nothing was deleted.")
		return
	}
	owned := m != nil && state.OwnerToken.ValueString() != "" && m.Owner == state.OwnerToken.ValueString()
	if state.ForceDestroy.ValueBool() {
		if !owned {
			resp.Diagnostics.AddAttributeError(path.Root("force_destroy"), "State store not owned by this configuration",
				fmt.Sprintf("force_destroy deletes only a store whose ownership marker s3://%s/%s names this state's owner_token, and it %s. "+
					"Nothing was deleted. Run terraform apply first (it records the marker for a store this configuration created or imported), "+
					"or remove the store from state (terraform state rm) to leave its data alone.", st.Bucket, st.MarkerKey(), markerProblem(m)))
			return
		}
		// Stores nested below this one (from before markers were checked)
		// are theirs, not this one's.
		nested, err := s3state.NestedStores(ctx, cl, st)
		if err != nil {
			addProblem(&resp.Diagnostics, "Deleting the state of", "state store "+st.ID(), awsErr(ctx, err), "Nothing was deleted.")
			return
		}
		skip := func(key string) bool {
			for _, n := range nested {
				if strings.HasPrefix(key, n.KeyPrefix()) {
					return true
				}
			}
			return false
		}
		n, err := s3state.DeleteAll(ctx, cl, st.Bucket, st.KeyPrefix(), skip)
		if err != nil {
			addProblem(&resp.Diagnostics, "Deleting the state of", "state store "+st.ID(), fmt.Sprintf("%s (deleted %d object versions before the error)", awsErr(ctx, err), n),
				"The store stays in state: destroy again to delete the rest.")
			return
		}
		if n > 0 {
			msg := fmt.Sprintf("force_destroy deleted %d object versions under s3://%s/%s/ (checkpoints, savepoints, HA metadata, Flink's job result store and the ownership marker); nothing outside that prefix was touched.", n, st.Bucket, st.Prefix)
			if len(nested) > 0 {
				msg += fmt.Sprintf(" %d state stores nested below it were left alone.", len(nested))
			}
			resp.Diagnostics.AddWarning("State deleted", msg)
		}
		return
	}
	summary, err := describeState(ctx, cl, st)
	if err != nil {
		addProblem(&resp.Diagnostics, "Checking the stored state of", "state store "+st.ID(), awsErr(ctx, err), "Nothing was deleted.")
		return
	}
	if summary != "" {
		resp.Diagnostics.AddAttributeError(path.Root("force_destroy"), "State store is not empty",
			summary+" Nothing was deleted. Restores need these files; move them, or set force_destroy = true and apply before destroying "+
				"to have the provider delete everything under the prefix.")
		return
	}
	if owned {
		// What is left is the job result store's bookkeeping, if anything
		// (describeState does not count it): it goes with the store, so
		// the prefix is free again; a store this configuration does not
		// own keeps it.
		if n, err := s3state.DeleteAll(ctx, cl, st.Bucket, st.DirKey(store.JobResultStoreDir)+"/", nil); err != nil {
			addProblem(&resp.Diagnostics, "Deleting", "state store "+st.ID(), fmt.Sprintf("deleting its job result store entries: %s", awsErr(ctx, err)),
				"The store stays in state: destroy again.")
			return
		} else if n > 0 {
			resp.Diagnostics.AddWarning("Job result store entries deleted",
				fmt.Sprintf("The state store %s held no checkpoints, savepoints or HA metadata, only %d object versions of Flink's job result "+
					"store under s3://%s/%s/ (a directory per deploy, which neither Flink nor the operator deletes; no restore reads them): "+
					"they were deleted with the store.", st.ID(), n, st.Bucket, st.DirKey(store.JobResultStoreDir)))
		}
		// The store goes: its prefix is free again.
		if err := s3state.DeleteMarker(ctx, cl, st); err != nil {
			addProblem(&resp.Diagnostics, "Deleting", "state store "+st.ID(), awsErr(ctx, err), "")
		}
	}
}

func markerProblem(m *store.Marker) string {
	if m == nil {
		return "is missing"
	}
	return "names another owner (store " + m.StoreID + ")"
}
