package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
)

type snapshotResource struct{ resourceBase }

var (
	_ resource.ResourceWithConfigure        = (*snapshotResource)(nil)
	_ resource.ResourceWithConfigValidators = (*snapshotResource)(nil)
	_ resource.ResourceWithImportState      = (*snapshotResource)(nil)
	_ resource.ResourceWithModifyPlan       = (*snapshotResource)(nil)
)

func newSnapshotResource() resource.Resource { return &snapshotResource{} }

type snapshotModel struct {
	ID              types.String   `tfsdk:"id"`
	Namespace       types.String   `tfsdk:"namespace"`
	DeploymentName  types.String   `tfsdk:"deployment_name"`
	Type            types.String   `tfsdk:"type"`
	FormatType      types.String   `tfsdk:"format_type"`
	DisposeOnDelete types.Bool     `tfsdk:"dispose_on_delete"`
	TargetDir       types.String   `tfsdk:"target_dir"`
	AlreadyExists   types.Bool     `tfsdk:"already_exists"`
	BackoffLimit    types.Int64    `tfsdk:"backoff_limit"`
	NamePrefix      types.String   `tfsdk:"name_prefix"`
	Triggers        types.Map      `tfsdk:"triggers"`
	Wait            types.Bool     `tfsdk:"wait"`
	Name            types.String   `tfsdk:"name"`
	State           types.String   `tfsdk:"state"`
	Path            types.String   `tfsdk:"path"`
	ResultTimestamp types.String   `tfsdk:"result_timestamp"`
	Error           types.String   `tfsdk:"error"`
	Contents        types.Object   `tfsdk:"contents"`
	Timeouts        timeouts.Value `tfsdk:"timeouts"`
}

// snapshotPollInterval is how often a create waits between status reads.
var snapshotPollInterval = time.Second

func (r *snapshotResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_snapshot"
}

func (r *snapshotResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replaceS := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	keepS := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	resp.Schema = schema.Schema{
		Description: "A FlinkStateSnapshot: a savepoint (or checkpoint) the Flink operator takes of a FlinkDeployment's job, " +
			"for example to keep before a risky change (for a savepoint before each upgrade, use flinkstate_deployment's " +
			"savepoint_before_upgrade). Every create makes a new object (generateName), except that it takes over the object an interrupted create of the " +
			"same configuration left (terraform killed while it waited, the object never saved in state; recognised by the provider's " +
			"label `terraform-provider-flinkstate/pending-create`, removed once the object is in state) and waits for it instead of " +
			"triggering a second snapshot; any change to `triggers` makes a new " +
			"snapshot; `triggers` are also stored on the object (annotation `terraform-provider-flinkstate/triggers`), so an import " +
			"keeps them. Create waits until the operator reports COMPLETED and fails with the operator's error on FAILED or " +
			"ABANDONED (the next plan replaces a failed snapshot). A wait that times out, or cannot read the object, keeps the " +
			"snapshot without triggering another: a warning, and the next plan shows an update that waits for it again. " +
			"Deleting the resource deletes the object; the savepoint's files are deleted with it only when " +
			"`dispose_on_delete = true` (the default here is false, unlike the operator's), so a savepoint outlives its resource " +
			"unless you say otherwise: decide who deletes retained savepoints. With `dispose_on_delete = true`, delete refuses " +
			"while a FlinkDeployment in the namespace names the savepoint's path as initialSavepointPath, and while the job that " +
			"took the savepoint is missing or not RUNNING (the operator disposes of it only through that job and would otherwise " +
			"hold the object until it runs again).",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true, Description: "`namespace/name`.", PlanModifiers: keepS},
			"namespace": schema.StringAttribute{Required: true, Description: "Namespace of the FlinkDeployment.",
				Validators: namespaceValidators(), PlanModifiers: replaceS},
			"deployment_name": schema.StringAttribute{Optional: true, Description: "Name of the FlinkDeployment whose job is snapshotted (spec.jobReference). " +
				"Required, except with already_exists = true, where it may be left out: a savepoint recorded without a job (the operator's " +
				"SavepointSpec allows it).",
				Validators: objectNameValidators(), PlanModifiers: replaceS},
			"type": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("savepoint"),
				Description: "`savepoint` (default) or `checkpoint`.", Validators: []validator.String{stringvalidator.OneOf("savepoint", "checkpoint")},
				PlanModifiers: replaceS},
			"format_type": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("CANONICAL"),
				Description: "Savepoint format: `CANONICAL` (default; portable across state backends) or `NATIVE` (backend-specific, faster).",
				Validators:  []validator.String{stringvalidator.OneOf("CANONICAL", "NATIVE")}, PlanModifiers: replaceS},
			"dispose_on_delete": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				Description: "Delete the savepoint's files when this resource (the FlinkStateSnapshot) is deleted. Default false " +
					"(the operator's own default is true). Changing it updates the object in place, e.g. to dispose of it on the next destroy."},
			"target_dir": schema.StringAttribute{Optional: true,
				Description: "Directory to write the savepoint to (s3://...); defaults to the deployment's savepoint dir. Not with already_exists (an existing savepoint is at path). " +
					"It must lie where the deployment's role may write: the state stores of a flinkstate_iam_role for its ServiceAccount, else its state.store_id, else the store its checkpoint and savepoint directories lay out. " +
					"Compared at plan with a deployment of the same configuration (a create makes no API call); otherwise at apply with the live FlinkDeployment's directories, and at plan when a change of target_dir replaces the snapshot.",
				Validators: []validator.String{s3DirCheck}, PlanModifiers: replaceS},
			"already_exists": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				Description:   "Record an existing savepoint at `path` instead of taking one.",
				PlanModifiers: []planmodifier.Bool{boolplanmodifier.RequiresReplace()}},
			"path": schema.StringAttribute{Optional: true, Computed: true,
				Description: "The snapshot's final path, set when it completes: what job.initial_savepoint_path takes. Empty until " +
					"the snapshot has completed with a path, which a deployment's initial_savepoint_path refuses (the job never " +
					"starts without the state it was planned to restore). Set it only with already_exists = true (the existing savepoint's " +
					"path); for a new snapshot it is refused at plan. An imported snapshot's generated configuration may keep the path it completed with.",
				Validators:    []validator.String{s3PathCheck},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplaceIfConfigured(), stringplanmodifier.UseStateForUnknown()}},
			"contents": snapshotContentsResourceAttribute("once the snapshot has completed with a path (its _metadata read from S3, " +
				"one request, then kept while the path stays)"),
			"backoff_limit": schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(1),
				Description: "Retries the operator makes before FAILED. Default 1. The operator's -1 (retry forever, its default) is refused " +
					"for a new snapshot, where nobody would be told; an imported one may keep it.",
				Validators: []validator.Int64{int64validator.Between(-1, 100)}},
			"name_prefix": schema.StringAttribute{Optional: true, Computed: true,
				Description:   "generateName of the object; default `<deployment_name>-`.",
				Validators:    []validator.String{stringvalidator.LengthBetween(1, 200), namePrefixCheck},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace(), stringplanmodifier.UseStateForUnknown()}},
			"triggers": schema.MapAttribute{Optional: true, ElementType: types.StringType,
				Description: "Arbitrary values; any change makes a new snapshot. For a savepoint before each upgrade use " +
					"flinkstate_deployment's savepoint_before_upgrade: a snapshot keyed on the deployment's image is taken after the upgrade.",
				PlanModifiers: []planmodifier.Map{mapplanmodifier.RequiresReplace()}},
			"wait": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(true),
				Description: "Wait for COMPLETED on create (default true). With false, path and state fill in on later refreshes."},
			"name":             schema.StringAttribute{Computed: true, Description: "Name the API server generated.", PlanModifiers: keepS},
			"state":            schema.StringAttribute{Computed: true, Description: "status.state: TRIGGER_PENDING, IN_PROGRESS, COMPLETED, FAILED or ABANDONED."},
			"result_timestamp": schema.StringAttribute{Computed: true, Description: "status.resultTimestamp."},
			"error":            schema.StringAttribute{Computed: true, Description: "The operator's error message, if any."},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeoutsBlock(ctx, timeouts.Opts{Create: true, Delete: true}, "create waits for COMPLETED (default 10m), delete for the operator's finalizer (default 5m)"),
		},
	}
	markdownDescriptions(&resp.Schema)
}

func (r *snapshotResource) ConfigValidators(context.Context) []resource.ConfigValidator {
	return []resource.ConfigValidator{
		snapshotConfigValidator{},
	}
}

// snapshotConfigValidator: path only with already_exists, and the reverse;
// no savepoint options on a checkpoint.
type snapshotConfigValidator struct{}

func (snapshotConfigValidator) Description(context.Context) string {
	return "path goes with already_exists; savepoint options not on checkpoints"
}
func (v snapshotConfigValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}
func (snapshotConfigValidator) ValidateResource(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m snapshotModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	exists := m.AlreadyExists.ValueBool()
	// path without already_exists is refused at plan, for a new snapshot
	// only (ModifyPlan): an imported one's generated configuration holds
	// the path it completed with.
	if m.DeploymentName.IsNull() && !exists && !m.AlreadyExists.IsUnknown() {
		resp.Diagnostics.AddAttributeError(path.Root("deployment_name"), "Missing deployment_name",
			"deployment_name is required: it names the FlinkDeployment whose job takes the snapshot. Only a savepoint recorded with "+
				"already_exists = true may leave it out.")
	}
	if exists && m.DisposeOnDelete.ValueBool() {
		resp.Diagnostics.AddAttributeError(path.Root("dispose_on_delete"), "Would delete a savepoint this configuration did not take",
			"dispose_on_delete = true with already_exists = true would delete the files of an existing savepoint (taken by someone else) "+
				"when this resource is destroyed. Remove dispose_on_delete, and delete that savepoint deliberately if it is no longer needed.")
	}
	if exists && m.Path.IsNull() {
		resp.Diagnostics.AddAttributeError(path.Root("already_exists"), "already_exists needs path",
			"already_exists = true records an existing savepoint: set path to it.")
	}
	if exists && !m.TargetDir.IsNull() {
		resp.Diagnostics.AddAttributeError(path.Root("target_dir"), "target_dir is for a new savepoint",
			"target_dir says where a new savepoint goes; with already_exists = true the savepoint exists at path. Remove target_dir.")
	}
	if m.Type.ValueString() == "checkpoint" {
		// Only settings that would do something: an imported checkpoint's
		// generated configuration holds the schema's defaults.
		for _, a := range []struct {
			name string
			set  bool
		}{{"format_type", m.FormatType.ValueString() == "NATIVE"}, {"target_dir", !m.TargetDir.IsNull()}, {"already_exists", m.AlreadyExists.ValueBool()},
			{"dispose_on_delete", m.DisposeOnDelete.ValueBool()}} {
			if a.set {
				resp.Diagnostics.AddAttributeError(path.Root(a.name), "Not for checkpoints",
					fmt.Sprintf("%s applies to savepoints only, and type is \"checkpoint\".", a.name))
			}
		}
	}
}

// ModifyPlan fills the default name prefix, and the path of an existing
// savepoint. For an existing snapshot whose wait did not end it plans an
// update whose apply waits again; one the operator gave up on (FAILED,
// ABANDONED) holds no savepoint and is replaced.
func (r *snapshotResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		var state snapshotModel
		if !req.State.Raw.IsNull() {
			if resp.Diagnostics.Append(req.State.Get(ctx, &state)...); !resp.Diagnostics.HasError() && state.DisposeOnDelete.ValueBool() &&
				state.Path.ValueString() != "" {
				resp.Diagnostics.AddAttributeWarning(path.Root("dispose_on_delete"), "Destroy deletes the savepoint's files",
					fmt.Sprintf("dispose_on_delete = true: destroying FlinkStateSnapshot %s has the Flink operator delete the savepoint at %s "+
						"(StateSnapshotReconciler.cleanup). Set dispose_on_delete = false and apply first to keep them.", state.ID.ValueString(), state.Path.ValueString()))
			}
		}
		return
	}
	var plan snapshotModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !req.State.Raw.IsNull() {
		var state, config snapshotModel
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
		resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
		if resp.Diagnostics.HasError() {
			return
		}
		if !config.Path.IsNull() && !config.Path.IsUnknown() && !plan.AlreadyExists.ValueBool() && !config.Path.Equal(state.Path) {
			resp.Diagnostics.AddAttributeError(path.Root("path"), "path is the snapshot's result",
				fmt.Sprintf("path is where the operator put this snapshot (%q) and cannot be chosen; remove it from the configuration, "+
					"or set target_dir for where a new snapshot goes.", state.Path.ValueString()))
			return
		}
		if !plan.TargetDir.Equal(state.TargetDir) {
			// A new target_dir: a replace, whose savepoint must be writable.
			if !r.checkSnapshotPlan(plan, &resp.Diagnostics) {
				r.checkTargetDirLive(ctx, plan, &resp.Diagnostics)
			}
			if resp.Diagnostics.HasError() {
				return
			}
		}
		if replaced := snapshotReplacedBy(plan, state, config); replaced != "" && state.DisposeOnDelete.ValueBool() &&
			state.Path.ValueString() != "" && state.State.ValueString() == kube.SnapshotCompleted {
			detail := fmt.Sprintf("The change to %s replaces FlinkStateSnapshot %s, and with dispose_on_delete = true deleting it has the "+
				"Flink operator delete the savepoint's files at %s (StateSnapshotReconciler.cleanup).", replaced, state.ID.ValueString(), state.Path.ValueString())
			if privateString(ctx, req.Private, privateDisposeAdopted, &resp.Diagnostics) != "" {
				// Adopted: the object, not this configuration, chose to dispose.
				resp.Diagnostics.AddAttributeError(path.Root(replaced), "Replacing the snapshot would delete its savepoint",
					detail+" This snapshot was imported with that setting (the operator's default for a savepoint that does not say). "+
						"Set dispose_on_delete = false and apply that alone first; the replacement then keeps the savepoint.")
				return
			}
			resp.Diagnostics.AddAttributeWarning(path.Root(replaced), "Replacing the snapshot deletes its savepoint",
				detail+" Set dispose_on_delete = false and apply that first to keep it.")
		}
		switch s := state.State.ValueString(); {
		case s == kube.SnapshotFailed || s == kube.SnapshotAbandoned:
			resp.RequiresReplace = append(resp.RequiresReplace, path.Root("state"))
		case waitPending(ctx, req.Private, &resp.Diagnostics) == "":
			return
		}
		plan.State, plan.ResultTimestamp, plan.Error = types.StringUnknown(), types.StringUnknown(), types.StringUnknown()
		if config.Path.IsNull() {
			plan.Path = types.StringUnknown()
			plan.Contents = types.ObjectUnknown(snapshotContentsType.AttrTypes)
		}
		resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
		return
	}
	var config snapshotModel
	if resp.Diagnostics.Append(req.Config.Get(ctx, &config)...); resp.Diagnostics.HasError() {
		return
	}
	if !config.Path.IsNull() && !config.Path.IsUnknown() && !plan.AlreadyExists.ValueBool() && !plan.AlreadyExists.IsUnknown() {
		resp.Diagnostics.AddAttributeError(path.Root("path"), "path needs already_exists",
			"path names an existing savepoint and is only set with already_exists = true; to choose where a new savepoint goes, set target_dir.")
		return
	}
	if plan.BackoffLimit.ValueInt64() < 0 && !plan.AlreadyExists.ValueBool() {
		resp.Diagnostics.AddAttributeError(path.Root("backoff_limit"), "Invalid backoff_limit",
			"backoff_limit = -1 has the operator retry a failing snapshot forever, and nobody would be told: set 0 to 100 (default 1).")
		return
	}
	if plan.NamePrefix.IsUnknown() && !plan.DeploymentName.IsUnknown() {
		prefix := plan.DeploymentName.ValueString() + "-"
		if plan.DeploymentName.IsNull() {
			prefix = "savepoint-"
		}
		plan.NamePrefix = types.StringValue(prefix)
	}
	r.checkSnapshotPlan(plan, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

// setStatus records the operator's status. path is empty (not null) until
// the snapshot has completed with a path: a deployment that restores from
// it refuses an empty initial_savepoint_path (checkpoint.ValidateRestorePath)
// instead of starting without state, as a null would let it.
func (m *snapshotModel) setStatus(st kube.SnapshotStatus) {
	m.State = types.StringValue(st.State)
	switch {
	case st.Path != "":
		m.Path = types.StringValue(st.Path)
	case m.Path.IsUnknown() || m.Path.IsNull():
		m.Path = types.StringValue("")
	}
	m.ResultTimestamp = optionalString(st.ResultTimestamp)
	m.Error = optionalString(kube.OperatorMessage(st.Error))
}

// Create takes the snapshot: it checks the target at apply, takes over the
// object an interrupted create of this configuration left or creates one,
// saves it in state, and waits for the operator to end it (wait = true).
func (r *snapshotResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan snapshotModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	c := r.meta.kubeOrDiag(&resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if checkSnapshotAtApply(ctx, c, plan, &resp.Diagnostics); resp.Diagnostics.HasError() {
		return
	}
	timeout, d := plan.Timeouts.Create(ctx, 10*time.Minute)
	resp.Diagnostics.Append(d...)
	want := snapshotCreateOf(ctx, plan, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	// Every call of this create, the wait included, ends within the create timeout.
	reqCtx := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout+kube.RequestTimeout)
	defer cancel()
	if !snapshotTargetUID(ctx, c, &want, &resp.Diagnostics) {
		return
	}
	created := r.takeOverOrCreateSnapshot(ctx, c, want, &resp.Diagnostics)
	if created == nil {
		return
	}
	ns, name := want.Namespace, created.GetName()
	// The mark stays while Terraform may not get this create's answer
	// (terraform gone: its request is cancelled); otherwise it goes, since
	// the object is in state (a failed wait taints it, it is not dropped),
	// once the operator is done with it (kube.ClearPendingCreate: as the
	// object is now; while it is not COMPLETED, a later Read removes it).
	defer clearPendingSnapshotMark(reqCtx, c, ns, name)
	setObjectUID(ctx, resp.Private, string(created.GetUID()), &resp.Diagnostics)
	plan.Name = types.StringValue(name)
	plan.ID = types.StringValue(ns + "/" + name)
	plan.setStatus(kube.ReadSnapshotStatus(created))
	plan.Contents = snapshotContents(nil)
	if !plan.Wait.ValueBool() {
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		return
	}
	// Saved before waiting: whatever happens next, the object is in state.
	setWaitPending(ctx, resp.Private, "the apply did not finish waiting", &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	st, err := kube.WaitSnapshot(ctx, c.Dynamic, ns, name, timeout, snapshotPollInterval)
	plan.setStatus(st)
	r.readContents(ctx, &plan, "", &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	reportSnapshotCreateWait(ctx, c, ns, created, st, err, resp)
}

// checkSnapshotAtApply runs the checks a plan could not make before the
// snapshot is triggered: the savepoint directory, the target directory and
// the format, against the live FlinkDeployment.
func checkSnapshotAtApply(ctx context.Context, c *kube.Client, plan snapshotModel, diags *diag.Diagnostics) {
	if checkSavepointDirAtApply(ctx, c, plan, diags); diags.HasError() {
		return
	}
	if checkTargetDirAtApply(ctx, c, plan, diags); diags.HasError() {
		return
	}
	checkFormatAtApply(ctx, c, plan, diags)
}

// snapshotCreateOf converts the planned snapshot into what the create asks
// of the cluster (kube.SnapshotCreate): an existing savepoint's path, or the
// target directory of a new one.
func snapshotCreateOf(ctx context.Context, plan snapshotModel, diags *diag.Diagnostics) kube.SnapshotCreate {
	spec := kube.SnapshotSpec{
		DeploymentName:  plan.DeploymentName.ValueString(),
		Type:            plan.Type.ValueString(),
		FormatType:      plan.FormatType.ValueString(),
		DisposeOnDelete: plan.DisposeOnDelete.ValueBool(),
		Path:            plan.TargetDir.ValueString(),
		AlreadyExists:   plan.AlreadyExists.ValueBool(),
		BackoffLimit:    plan.BackoffLimit.ValueInt64(),
	}
	if spec.AlreadyExists {
		spec.Path = plan.Path.ValueString()
	}
	return kube.SnapshotCreate{Namespace: plan.Namespace.ValueString(), GenerateName: plan.NamePrefix.ValueString(), Spec: spec,
		Triggers: stringMap(ctx, plan.Triggers, diags)}
}

// snapshotTargetUID records in want the UID of the FlinkDeployment whose
// job the snapshot is of: one an interrupted create made of an earlier
// FlinkDeployment of that name is not this one's. false: it could not be
// read (an error is added).
func snapshotTargetUID(ctx context.Context, c *kube.Client, want *kube.SnapshotCreate, diags *diag.Diagnostics) bool {
	ns, dep := want.Namespace, want.Spec.DeploymentName
	if dep == "" {
		return true
	}
	live, err := kube.GetFlinkDeployment(ctx, c.Dynamic, ns, dep)
	if err == nil {
		want.DeploymentUID = string(live.GetUID())
		return true
	}
	if notfound.Is(err) {
		return true
	}
	addProblem(diags, "Creating", "FlinkStateSnapshot in namespace "+ns,
		fmt.Sprintf("reading FlinkDeployment %s/%s: %s", ns, dep, readableAPIError(err)), "Nothing was created. Apply again.")
	return false
}

// takeOverOrCreateSnapshot returns the FlinkStateSnapshot this create
// waits for: the object an earlier apply's create of this same
// configuration made and never saved (terraform killed while it waited),
// recognised by the provider's mark (kube.PendingSnapshotCreate), rather
// than triggering a second savepoint; claimed in this run's memory only,
// nothing written to it while the operator may be patching it
// (kube.SnapshotClaims). Otherwise a POST with generateName: always a new
// object, never someone else's. nil: an error is added.
func (r *snapshotResource) takeOverOrCreateSnapshot(ctx context.Context, c *kube.Client, want kube.SnapshotCreate, diags *diag.Diagnostics) *unstructured.Unstructured {
	ns := want.Namespace
	created, err := kube.PendingSnapshotCreate(ctx, c.Dynamic, want, r.meta.run, &r.meta.snapshotClaims)
	if err != nil {
		addProblem(diags, "Creating", "FlinkStateSnapshot in namespace "+ns, err.Error(), "Nothing was created. Apply again.")
		return nil
	}
	if created != nil {
		diags.AddWarning("Snapshot of an interrupted apply taken over",
			fmt.Sprintf("FlinkStateSnapshot %s/%s was created for this same configuration by an earlier apply that did not finish (its state "+
				"was never saved): this create waits for it instead of triggering another %s.", ns, created.GetName(), want.Spec.Type))
		return created
	}
	created, err = kube.CreateSnapshot(ctx, c.Dynamic, ns, want.Object(r.meta.run))
	if err != nil {
		addProblem(diags, "Creating", "FlinkStateSnapshot in namespace "+ns, fmt.Sprintf("for deployment %s: %s", want.Spec.DeploymentName, readableAPIError(err)), "")
		return nil
	}
	return created
}

// clearPendingSnapshotMark removes the create's mark from
// FlinkStateSnapshot ns/name at the end of a create whose answer reaches
// Terraform (reqCtx not cancelled), once the operator is done with it
// (kube.ClearPendingCreate); a failure is logged, and the next refresh
// retries.
func clearPendingSnapshotMark(reqCtx context.Context, c *kube.Client, ns, name string) {
	if reqCtx.Err() != nil {
		return
	}
	cctx, ccancel := context.WithTimeout(reqCtx, kube.RequestTimeout)
	defer ccancel()
	now, err := kube.GetSnapshot(cctx, c.Dynamic, ns, name)
	if err == nil {
		err = kube.ClearPendingCreate(cctx, c.Dynamic, now)
	}
	if err != nil && !notfound.Is(err) {
		tflog.Warn(cctx, "removing the pending-create mark of the FlinkStateSnapshot (the next refresh retries)",
			map[string]any{"namespace": ns, "name": name, "error": err.Error()})
	}
}

// reportSnapshotCreateWait reports how the wait for the created snapshot
// (in namespace ns) ended (kube.ClassifySnapshotWait) and records whether
// the next plan waits again (setWaitPending).
func reportSnapshotCreateWait(ctx context.Context, c *kube.Client, ns string, created *unstructured.Unstructured, st kube.SnapshotStatus, err error,
	resp *resource.CreateResponse) {
	name := created.GetName()
	switch kube.ClassifySnapshotWait(st, err) {
	case kube.SnapshotDoneWithoutPath:
		setWaitPending(ctx, resp.Private, "", &resp.Diagnostics)
		resp.Diagnostics.AddWarning("Snapshot completed without a path",
			fmt.Sprintf("The operator marked FlinkStateSnapshot %s/%s COMPLETED without a path (for a checkpoint-type snapshot "+
				"StateSnapshotObserver.handleCheckpoint records the path Flink reports, which can be empty). It cannot be restored "+
				"from: path is empty, and a deployment whose job.initial_savepoint_path takes it refuses to deploy. Take a savepoint "+
				"(type = \"savepoint\") to restore from.", ns, name))
	case kube.SnapshotDone:
		setWaitPending(ctx, resp.Private, "", &resp.Diagnostics)
	case kube.SnapshotRefusedByOperator:
		// Nothing was triggered (the operator writes no status for a
		// snapshot it refuses), so nothing is lost by deleting it: the
		// apply fails, the object is gone, and the next plan is a create
		// again, not a replacement of a tainted snapshot.
		setWaitPending(ctx, resp.Private, "", &resp.Diagnostics)
		gone := "it was deleted again"
		if derr := kube.DeleteOwnedAndWait(ctx, c.Dynamic, kube.FlinkStateSnapshotGVR, ns, name, created.GetUID(), time.Minute); derr != nil {
			gone = "deleting it again failed (" + derr.Error() + "); the next refresh removes it from state once it is gone"
		} else {
			resp.State.RemoveResource(ctx)
		}
		addProblem(&resp.Diagnostics, "Creating", "FlinkStateSnapshot "+ns+"/"+name, err.Error()+". Nothing was triggered, and "+gone+".",
			"Point deployment_name at a FlinkDeployment that exists in namespace "+ns+" (create it first, or depend on it), then apply again.")
	case kube.SnapshotGaveUp:
		// The operator gave up: an error, so Terraform taints the object
		// and it is never taken for a completed snapshot.
		setWaitPending(ctx, resp.Private, "", &resp.Diagnostics)
		addProblem(&resp.Diagnostics, "Waiting for", "FlinkStateSnapshot "+ns+"/"+name, "Snapshot did not complete: "+err.Error(), "")
	default:
		// Not finished in time, or the API server was unreachable: the
		// snapshot may still complete. An error would taint it and the next
		// apply would trigger another savepoint; instead it is kept, and the
		// next plan shows an update whose apply waits again.
		setWaitPending(ctx, resp.Private, err.Error(), &resp.Diagnostics)
		resp.Diagnostics.AddWarning("Snapshot not completed yet",
			fmt.Sprintf("%s\n\nThe FlinkStateSnapshot %s/%s is kept (no new savepoint is triggered): the next plan shows it as an update, and that apply waits for it again.", err, ns, name))
	}
}

func (r *snapshotResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state snapshotModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	c := r.meta.kubeOrDiag(&resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	ns, name := state.Namespace.ValueString(), state.Name.ValueString()
	obj, err := kube.GetSnapshot(ctx, c.Dynamic, ns, name)
	if notfound.Is(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		addProblem(&resp.Diagnostics, "Reading", "FlinkStateSnapshot "+ns+"/"+name, readableAPIError(err), "")
		return
	}
	if replacedOutsideTerraform(ctx, req, resp, "FlinkStateSnapshot", obj) {
		return
	}
	// In state: no later create may take it for an interrupted one's
	// (a create whose mark removal failed, that Terraform stopped, or that
	// returned before the snapshot completed).
	if err := kube.ClearPendingCreate(ctx, c.Dynamic, obj); err != nil {
		tflog.Warn(ctx, "removing the pending-create mark of the FlinkStateSnapshot (the next refresh retries)",
			map[string]any{"namespace": ns, "name": name, "error": err.Error()})
	}
	readSnapshotSpec(obj, &state)
	if takeImported(ctx, req, resp) && state.DisposeOnDelete.ValueBool() {
		// Adopted with the operator disposing of its savepoint on delete
		// (its default, or the object's choice): not this configuration's
		// decision, so a replacement is refused until it says so.
		setPrivateString(ctx, resp.Private, privateDisposeAdopted, "true", &resp.Diagnostics)
	}
	prevPath := state.Path.ValueString()
	state.setStatus(kube.ReadSnapshotStatus(obj))
	r.readContents(ctx, &state, prevPath, &resp.Diagnostics)
	if state.Triggers.IsNull() {
		// After an import: the triggers this provider stored on the object.
		if t := kube.Triggers(obj); len(t) > 0 {
			state.Triggers = mapFrom(ctx, t, &resp.Diagnostics)
		}
	}
	if state.Wait.IsNull() {
		state.Wait = types.BoolValue(true)
	}
	state.Timeouts = knownTimeouts(ctx, state.Timeouts)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// readSnapshotSpec copies the object's spec into the model (for import and drift).
func readSnapshotSpec(obj *unstructured.Unstructured, m *snapshotModel) {
	m.ID = types.StringValue(obj.GetNamespace() + "/" + obj.GetName())
	m.Namespace = types.StringValue(obj.GetNamespace())
	m.Name = types.StringValue(obj.GetName())
	if gn := obj.GetGenerateName(); gn != "" {
		m.NamePrefix = types.StringValue(gn)
	} else if m.NamePrefix.IsNull() {
		m.NamePrefix = types.StringValue(obj.GetName())
	}
	dep, _, _ := unstructured.NestedString(obj.Object, "spec", "jobReference", "name")
	m.DeploymentName = optionalString(dep)
	// Absent fields read as the operator defaults them
	// (flink-kubernetes-operator-api release-1.15.0: FlinkStateSnapshotSpec.backoffLimit
	// -1, SavepointSpec.formatType CANONICAL, disposeOnDelete true,
	// alreadyExists false), never as this provider's defaults: an imported
	// savepoint the operator would dispose of on delete says so.
	m.BackoffLimit = types.Int64Value(-1)
	if bl, ok, _ := unstructured.NestedInt64(obj.Object, "spec", "backoffLimit"); ok {
		m.BackoffLimit = types.Int64Value(bl)
	}
	if sp, ok, _ := unstructured.NestedMap(obj.Object, "spec", "savepoint"); ok {
		m.Type = types.StringValue("savepoint")
		m.FormatType = types.StringValue("CANONICAL")
		if f, ok := sp["formatType"].(string); ok {
			m.FormatType = types.StringValue(f)
		}
		d, ok := sp["disposeOnDelete"].(bool)
		m.DisposeOnDelete = types.BoolValue(d || !ok)
		exists, _ := sp["alreadyExists"].(bool)
		m.AlreadyExists = types.BoolValue(exists)
		if p, _ := sp["path"].(string); p != "" && !exists {
			m.TargetDir = types.StringValue(p)
		} else if p != "" && m.Path.ValueString() == "" {
			// An existing savepoint's path is the spec's (its status has
			// none until the operator records it).
			m.Path = types.StringValue(p)
		}
	} else {
		// CheckpointSpec has no savepoint options: they read as the
		// schema's defaults, which a checkpoint ignores, so an import plans
		// no replacement.
		m.Type = types.StringValue("checkpoint")
		m.FormatType, m.DisposeOnDelete, m.AlreadyExists = types.StringValue("CANONICAL"), types.BoolValue(false), types.BoolValue(false)
	}
}

func (r *snapshotResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state snapshotModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	c := r.meta.kubeOrDiag(&resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if !plan.BackoffLimit.Equal(state.BackoffLimit) {
		// In place: it only bounds the operator's retries of a snapshot not
		// taken yet (an imported one may carry the operator's -1).
		patch := fmt.Sprintf(`{"spec":{"backoffLimit":%d}}`, plan.BackoffLimit.ValueInt64())
		if err := kube.PatchSnapshot(ctx, c.Dynamic, state.Namespace.ValueString(), state.Name.ValueString(), []byte(patch)); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("backoff_limit"), "Updating FlinkStateSnapshot failed", err.Error())
			return
		}
	}
	if !plan.DisposeOnDelete.Equal(state.DisposeOnDelete) {
		// The configuration decides about disposal from now on.
		setPrivateString(ctx, resp.Private, privateDisposeAdopted, "", &resp.Diagnostics)
		patch := fmt.Sprintf(`{"spec":{"savepoint":{"disposeOnDelete":%v}}}`, plan.DisposeOnDelete.ValueBool())
		if err := kube.PatchSnapshot(ctx, c.Dynamic, state.Namespace.ValueString(), state.Name.ValueString(), []byte(patch)); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("dispose_on_delete"), "Updating FlinkStateSnapshot failed", err.Error())
			return
		}
	}
	// Everything else either replaces the snapshot or lives in state only.
	plan.ID, plan.Name, plan.State, plan.Path, plan.ResultTimestamp, plan.Error =
		state.ID, state.Name, state.State, state.Path, state.ResultTimestamp, state.Error
	if waitPending(ctx, req.Private, &resp.Diagnostics) == "" || !plan.Wait.ValueBool() {
		setWaitPending(ctx, resp.Private, "", &resp.Diagnostics)
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		return
	}
	// A create that did not see its snapshot end: wait for the same
	// object again (within the create timeout), never trigger another.
	timeout, d := plan.Timeouts.Create(ctx, 10*time.Minute)
	resp.Diagnostics.Append(d...)
	ctx, cancel := context.WithTimeout(ctx, timeout+kube.RequestTimeout)
	defer cancel()
	ns, name := state.Namespace.ValueString(), state.Name.ValueString()
	st, err := kube.WaitSnapshot(ctx, c.Dynamic, ns, name, timeout, snapshotPollInterval)
	prevPath := state.Path.ValueString()
	if !plan.Contents.IsUnknown() {
		prevPath = plan.Path.ValueString()
	}
	plan.setStatus(st)
	r.readContents(ctx, &plan, prevPath, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	if kube.ClassifySnapshotWait(st, err).Ended() {
		// Ended: FAILED or ABANDONED is replaced by the next plan (ModifyPlan).
		setWaitPending(ctx, resp.Private, "", &resp.Diagnostics)
	} else {
		setWaitPending(ctx, resp.Private, err.Error(), &resp.Diagnostics)
	}
	if err != nil {
		addProblem(&resp.Diagnostics, "Waiting for", "FlinkStateSnapshot "+ns+"/"+name, "Snapshot did not complete: "+err.Error(), "")
	}
}

func (r *snapshotResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state snapshotModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	c := r.meta.kubeOrDiag(&resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := state.Timeouts.Delete(ctx, 5*time.Minute)
	resp.Diagnostics.Append(d...)
	if state.DisposeOnDelete.ValueBool() {
		// Disposing deletes the savepoint's files: not while a deployment restores from them.
		users, err := kube.DeploymentsRestoringFrom(ctx, c.Dynamic, state.Namespace.ValueString(), state.Path.ValueString())
		if err != nil {
			addProblem(&resp.Diagnostics, "Deleting", "FlinkStateSnapshot "+state.Namespace.ValueString()+"/"+state.Name.ValueString(),
				"checking which deployments restore from its savepoint: "+err.Error(), "Nothing was deleted.")
			return
		}
		if len(users) > 0 {
			resp.Diagnostics.AddAttributeError(path.Root("dispose_on_delete"), "Savepoint still in use",
				fmt.Sprintf("FlinkStateSnapshot %s/%s was not deleted: FlinkDeployment %v names its path %s as job.initialSavepointPath, "+
					"and dispose_on_delete = true would delete those files. Point the deployment elsewhere first, or set dispose_on_delete = false.",
					state.Namespace.ValueString(), state.Name.ValueString(), users, state.Path.ValueString()))
			return
		}
		// The operator disposes only through the running job; otherwise the
		// delete would wait on the finalizer until the timeout.
		why, err := kube.DisposalBlocked(ctx, c.Dynamic, state.Namespace.ValueString(), state.Name.ValueString())
		if err != nil {
			addProblem(&resp.Diagnostics, "Deleting", "FlinkStateSnapshot "+state.Namespace.ValueString()+"/"+state.Name.ValueString(),
				"checking that the operator can dispose of its savepoint: "+err.Error(), "Nothing was deleted.")
			return
		}
		if why != "" {
			resp.Diagnostics.AddAttributeError(path.Root("dispose_on_delete"), "Savepoint cannot be disposed of now",
				fmt.Sprintf("FlinkStateSnapshot %s/%s was not deleted: with dispose_on_delete = true the Flink operator deletes the savepoint's "+
					"files through the job that took it before it lets the object go, and %s, so the delete would wait on the operator's finalizer "+
					"until it timed out. Either run the job again and destroy, or set dispose_on_delete = false and apply (the savepoint's files at %s "+
					"are kept; delete them deliberately), then destroy.",
					state.Namespace.ValueString(), state.Name.ValueString(), why, state.Path.ValueString()))
			return
		}
	}
	deleteOwned(ctx, c, kube.FlinkStateSnapshotGVR, "FlinkStateSnapshot", state.Namespace.ValueString(), state.Name.ValueString(), timeout, req, resp)
}

func (r *snapshotResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if importNamespaceName(ctx, req, resp) {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("wait"), true)...)
		markImported(ctx, resp)
	}
}

// privateDisposeAdopted: the snapshot was imported with dispose_on_delete
// true, and the configuration has not changed it since.
const privateDisposeAdopted = "dispose_adopted"

// snapshotReplacedBy names an attribute whose change replaces the snapshot
// (the attributes with RequiresReplace), "" if none.
func snapshotReplacedBy(plan, state, config snapshotModel) string {
	for _, a := range []struct {
		name         string
		planV, state attr.Value
	}{
		{"namespace", plan.Namespace, state.Namespace}, {"deployment_name", plan.DeploymentName, state.DeploymentName},
		{"type", plan.Type, state.Type}, {"format_type", plan.FormatType, state.FormatType},
		{"target_dir", plan.TargetDir, state.TargetDir}, {"already_exists", plan.AlreadyExists, state.AlreadyExists},
		{"name_prefix", plan.NamePrefix, state.NamePrefix}, {"triggers", plan.Triggers, state.Triggers},
	} {
		if !a.planV.IsUnknown() && !a.planV.Equal(a.state) {
			return a.name
		}
	}
	if !config.Path.IsNull() && !config.Path.Equal(state.Path) {
		return "path"
	}
	return ""
}
