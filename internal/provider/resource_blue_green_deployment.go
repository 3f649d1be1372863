package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
)

// blueGreenResource is flinkstate_blue_green_deployment: a
// FlinkBlueGreenDeployment of the operator 1.15.0 whose template is the
// FlinkDeployment spec flinkstate_deployment writes (deploymentSpecModel,
// the same attributes and the same conversion).
type blueGreenResource struct{ resourceBase }

var (
	_ resource.ResourceWithConfigure        = (*blueGreenResource)(nil)
	_ resource.ResourceWithImportState      = (*blueGreenResource)(nil)
	_ resource.ResourceWithModifyPlan       = (*blueGreenResource)(nil)
	_ resource.ResourceWithConfigValidators = (*blueGreenResource)(nil)
)

func newBlueGreenResource() resource.Resource { return &blueGreenResource{} }

// blueGreenModel is the data of flinkstate_blue_green_deployment.
type blueGreenModel struct {
	deploymentSpecModel
	ID                   types.String        `tfsdk:"id"`
	BlueGreen            *blueGreenOptsModel `tfsdk:"blue_green"`
	FinalSavepoint       types.Bool          `tfsdk:"final_savepoint"`
	ActiveChild          types.String        `tfsdk:"active_child"`
	ActiveDeploymentName types.String        `tfsdk:"active_deployment_name"`
	BlueGreenState       types.String        `tfsdk:"blue_green_state"`
	TransitionSavepoint  types.String        `tfsdk:"transition_savepoint_path"`
	JobID                types.String        `tfsdk:"job_id"`
	JobState             types.String        `tfsdk:"job_state"`
	EffectiveConfig      types.Map           `tfsdk:"effective_flink_configuration"`
	EffectivePod         types.String        `tfsdk:"effective_pod_template"`
	Timeouts             timeouts.Value      `tfsdk:"timeouts"`
}

// blueGreenOptsModel is the blue_green block: the operator's options, in
// spec.configuration.
type blueGreenOptsModel struct {
	AbortGracePeriod   types.String `tfsdk:"abort_grace_period"`
	RescheduleInterval types.String `tfsdk:"reschedule_interval"`
	DeletionDelay      types.String `tfsdk:"deletion_delay"`
}

// blueGreenOptions maps the block's attributes to the operator's keys.
var blueGreenOptions = []struct {
	attr, key string
	get       func(*blueGreenOptsModel) *types.String
}{
	{"abort_grace_period", flinkdeploy.BlueGreenAbortGracePeriod, func(m *blueGreenOptsModel) *types.String { return &m.AbortGracePeriod }},
	{"reschedule_interval", flinkdeploy.BlueGreenRescheduleInterval, func(m *blueGreenOptsModel) *types.String { return &m.RescheduleInterval }},
	{"deletion_delay", flinkdeploy.BlueGreenDeletionDelay, func(m *blueGreenOptsModel) *types.String { return &m.DeletionDelay }},
}

// deploymentSpecAttrs and deploymentSpecBlocks are the attributes of
// deploymentSpecModel, declared once in flinkstate_deployment's schema.
var (
	deploymentSpecAttrs = []string{"namespace", "name", "image", "flink_version", "mode", "service_account", "identity", "s3_plugin",
		"high_availability", "flink_configuration", "sensitive_flink_configuration", "pod_template"}
	deploymentSpecBlocks = []string{"job_manager", "task_manager", "job", "state"}
)

func (r *blueGreenResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_blue_green_deployment"
}

// blueGreenDurationCheck: the operator parses the options as Flink
// durations of its own Flink (TimeUtils.parseDuration), without the
// ISO-8601 form.
var blueGreenDurationCheck = check("Invalid duration", "a Flink duration such as 10 min, 15 s or 500 ms", func(s string) string {
	if d, err := flinkconf.ParseDuration(s); err != nil || flinkconf.IsISODuration(s) || d < 0 {
		return fmt.Sprintf("%q is not a duration such as 10 min, 15 s or 500 ms (the operator reads no ISO-8601 form)", s)
	}
	return ""
})

func (r *blueGreenResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	var dep resource.SchemaResponse
	(&deploymentResource{}).Schema(ctx, resource.SchemaRequest{}, &dep)
	keep := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	attrs := map[string]schema.Attribute{
		"id": schema.StringAttribute{Computed: true, Description: "`namespace/name`.", PlanModifiers: keep},
		"final_savepoint": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(true),
			Description: "For upgrade_mode `savepoint` or `last-state`: destroying the deployment first stops the active child's job with a " +
				"final savepoint (the operator's own stop, as flinkstate_deployment's final_savepoint does), records it in a FlinkStateSnapshot " +
				"<child>-final-* that outlives the deployment, and only then deletes the FlinkBlueGreenDeployment, whose children the " +
				"garbage collector deletes by their owner references. A stop that fails refuses the destroy and deletes nothing. Without it " +
				"(false) the children's jobs are cancelled (the operator's savepoint-on-deletion is off by default). Default true."},
		"active_child": schema.StringAttribute{Computed: true,
			Description: "`blue` or `green`: the child whose job serves (during a transition the old one, until the new one is ready)."},
		"active_deployment_name": schema.StringAttribute{Computed: true, Description: "The active child's FlinkDeployment, `<name>-blue` or `<name>-green`."},
		"blue_green_state": schema.StringAttribute{Computed: true,
			Description: "status.blueGreenState: INITIALIZING_BLUE, ACTIVE_BLUE, SAVEPOINTING_BLUE, TRANSITIONING_TO_GREEN, ACTIVE_GREEN, SAVEPOINTING_GREEN or TRANSITIONING_TO_BLUE."},
		"transition_savepoint_path": schema.StringAttribute{Computed: true,
			Description: "The savepoint the active child started from in the last transition (its job.initialSavepointPath, which the operator " +
				"sets to the savepoint it took of the other child: BlueGreenDeploymentService.configureInitialSavepoint). Null before the first transition. " +
				"Not a FlinkStateSnapshot: the operator takes it through Flink's REST API."},
		"job_id":    schema.StringAttribute{Computed: true, Description: "The active child's status.jobStatus.jobId."},
		"job_state": schema.StringAttribute{Computed: true, Description: "The active child's status.jobStatus.state."},
		"effective_flink_configuration": schema.MapAttribute{Computed: true, ElementType: types.StringType,
			Description: "The configuration the active child's job runs with: the template's flinkConfiguration (the derived keys plus " +
				"flink_configuration) and the keys the operator adds, named for the child (kubernetes.cluster-id `<name>-blue` or `<name>-green`). " +
				"Sensitive values read \"(sensitive)\"."},
		"effective_pod_template": schema.StringAttribute{Computed: true,
			Description: "spec.template.spec.podTemplate as written (JSON): pod_template merged with the provider's additions."},
	}
	for _, a := range deploymentSpecAttrs {
		attrs[a] = dep.Schema.Attributes[a]
	}
	moveAwareNames(attrs) // resource_blue_green_deployment_move.go
	blocks := map[string]schema.Block{
		"blue_green": schema.SingleNestedBlock{
			Description: "The operator's blue/green options (spec.configuration; FlinkBlueGreenDeploymentConfigOptions), as Flink durations.",
			Attributes: map[string]schema.Attribute{
				"abort_grace_period": schema.StringAttribute{Optional: true, Validators: []validator.String{blueGreenDurationCheck},
					Description: "How long a new child may take to be STABLE with its job RUNNING before the operator aborts the transition, " +
						"suspends it and keeps the old child (kubernetes.operator.bluegreen.abort.grace-period; the operator's default 10 min)."},
				"reschedule_interval": schema.StringAttribute{Optional: true, Validators: []validator.String{blueGreenDurationCheck},
					Description: "How often the operator checks a transition (kubernetes.operator.bluegreen.reconciliation.reschedule-interval; default 15 s)."},
				"deletion_delay": schema.StringAttribute{Optional: true, Validators: []validator.String{blueGreenDurationCheck},
					Description: "How long both children run once the new one is ready, before the old one is deleted " +
						"(kubernetes.operator.bluegreen.deployment-deletion.delay; default 0)."},
			},
		},
		"timeouts": timeoutsBlock(ctx, timeouts.Opts{Create: true, Update: true, Delete: true},
			"create and update wait for the ACTIVE state with the job running (SUSPENDED for a suspend), delete for a running transition to end, "+
				"the final savepoint and the children (default 10m each)"),
	}
	for _, b := range deploymentSpecBlocks {
		blocks[b] = dep.Schema.Blocks[b]
	}
	resp.Schema = schema.Schema{
		Description: "A FlinkBlueGreenDeployment of the Flink Kubernetes Operator 1.15.0: the operator runs the job as a child FlinkDeployment " +
			"`<name>-blue` or `<name>-green` written from the template, and applies a change that restarts the job as a transition: it takes a " +
			"savepoint of the running child (which keeps running), starts the other child from it, and deletes the old child once the new " +
			"one is STABLE with its job RUNNING. Both run side by side in between: the new job processes again what the old one processed " +
			"after the savepoint, and an exactly-once sink sees both (the plan says so). A change of only the fields the operator's diff " +
			"ignores rewrites the active child in place. The template is the FlinkDeployment spec flinkstate_deployment writes, with the " +
			"same attributes and checks. Created with a plain create (an existing object is never taken over); import adopts one. " +
			"A wait that runs out (timeouts) never loses the change: it says the state the transition is in and what the operator " +
			"waits for; after a create it is a warning (the object is kept, not tainted), after an update an error; either way the " +
			"next plan shows an update whose apply waits again for the same state. A failure the operator reports (an abort, a failed " +
			"savepoint, a child that cannot start) ends the apply with its words and the child that keeps running; so does a transition " +
			"savepoint the new child cannot restore (no _metadata, a referenced file missing), checked until the new child's job runs.",
		Attributes: attrs,
		Blocks:     blocks,
	}
	markdownDescriptions(&resp.Schema)
}

func (r *blueGreenResource) ConfigValidators(context.Context) []resource.ConfigValidator {
	return []resource.ConfigValidator{deploymentStateDirs.resource(), blueGreenChecks{}}
}

// blueGreenChecks are the validate-time checks of a blue/green deployment.
type blueGreenChecks struct{}

func (blueGreenChecks) Description(context.Context) string {
	return "the template's combination of attributes can run (flinkconf's checks, as for flinkstate_deployment), and a stateful " +
		"blue/green deployment has a savepoint directory"
}
func (c blueGreenChecks) MarkdownDescription(ctx context.Context) string { return c.Description(ctx) }

// ValidateResource runs the template's checks flinkstate_deployment runs
// on its spec (specChecks) and blueGreenSavepointDirCheck.
func (blueGreenChecks) ValidateResource(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m blueGreenModel
	if d := req.Config.Get(ctx, &m); !d.HasError() {
		specChecks(ctx, &m.deploymentSpecModel, &resp.Diagnostics)
	}
	blueGreenSavepointDirCheck(ctx, req, resp)
}

// asDeployment is the model as flinkstate_deployment's, for the shared
// conversion, with child's name (the operator names the child's cluster).
func (m *blueGreenModel) asDeployment(child string) *deploymentModel {
	d := &deploymentModel{deploymentSpecModel: m.deploymentSpecModel, EffectiveConfig: m.EffectiveConfig, EffectivePod: m.EffectivePod,
		OperatorAddedConfig: types.MapNull(types.StringType), RedeployNonce: types.Int64Null(), UpgradeSavepoint: types.StringNull(),
		FinalSavepoint: m.FinalSavepoint, DrainOnDestroy: types.BoolValue(false), WaitFor: types.StringValue("running")}
	if known(m.Name) {
		d.Name = types.StringValue(flinkdeploy.ChildName(m.Name.ValueString(), child))
	}
	return d
}

// fromDeployment copies back what the conversion set.
func (m *blueGreenModel) fromDeployment(d *deploymentModel) {
	name := m.Name
	m.deploymentSpecModel = d.deploymentSpecModel
	m.Name = name
	m.EffectiveConfig, m.EffectivePod = d.EffectiveConfig, d.EffectivePod
}

func (m *blueGreenModel) activeChild() string {
	if c := m.ActiveChild.ValueString(); c == flinkdeploy.Green {
		return c
	}
	return flinkdeploy.Blue
}

func (m *blueGreenModel) configuration() map[string]string {
	out := map[string]string{}
	if m.BlueGreen == nil {
		return out
	}
	for _, o := range blueGreenOptions {
		if v := o.get(m.BlueGreen); known(*v) {
			out[o.key] = v.ValueString()
		}
	}
	return out
}

// unsetOptions are the operator's option keys the configuration leaves out.
func (m *blueGreenModel) unsetOptions() []string {
	set := m.configuration()
	var out []string
	for _, o := range blueGreenOptions {
		if _, ok := set[o.key]; !ok {
			out = append(out, o.key)
		}
	}
	return out
}

// ModifyPlan derives the template's configuration as flinkstate_deployment
// does, and says what the operator does with an update.
func (r *blueGreenResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan blueGreenModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	var state *blueGreenModel
	if !req.State.Raw.IsNull() {
		state = &blueGreenModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, state)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	// Moved in from a flinkstate_deployment: planned as a create, with the
	// handover (resource_blue_green_deployment_move.go).
	mv, moved := r.movePlanState(ctx, req, &state, &resp.Diagnostics)
	child := flinkdeploy.Blue
	if state != nil {
		child = state.activeChild()
	}
	d := plan.asDeployment(child)
	var sd *deploymentModel
	if state != nil {
		sd = state.asDeployment(child)
	}
	in, cfg, ok := r.planTemplate(ctx, req.Config, &plan, d, sd, &resp.Diagnostics)
	if !ok {
		plan.EffectiveConfig, plan.EffectivePod = types.MapUnknown(types.StringType), types.StringUnknown()
		plan.unknownStatus()
		if mv != nil {
			r.planMoveUnknown(&plan, mv, &resp.Diagnostics)
		}
		resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
		return
	}
	if resp.Diagnostics.HasError() {
		return
	}
	if state == nil {
		if r.planBlueGreenCreate(ctx, &plan, d, moved, mv, &resp.Diagnostics); resp.Diagnostics.HasError() {
			return
		}
		resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
		return
	}
	if r.planBlueGreenUpdate(ctx, req, &plan, state, d, sd, in, cfg, &resp.Diagnostics); resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

// planTemplate plans the template as flinkstate_deployment's plan plans
// its spec (planMode, flinkconf.Derive, the shared plan checks), in d, the
// template as the active child's deployment (sd: its prior state, nil on a
// create), and copies the result back into plan. cfg is the derived
// configuration, spelled as the prior state has it. known is false while
// the configuration holds values known only at apply; the checks' errors
// are in diags.
func (r *blueGreenResource) planTemplate(ctx context.Context, config tfsdk.Config, plan *blueGreenModel, d, sd *deploymentModel,
	diags *diag.Diagnostics) (in flinkconf.Input, cfg map[string]string, known bool) {
	planMode(ctx, config, d, sd, nil, diags)
	w, dv, known := planConfiguration(ctx, d, sd, false, nil, nil, func(flinkconf.Input) {
		r.planCredentials(&d.deploymentSpecModel, "flinkstate_blue_green_deployment "+plan.Name.ValueString(), diags)
	}, diags)
	if !known || !diags.HasError() {
		plan.fromDeployment(d)
	}
	return w.Input, dv.Config, known
}

// planBlueGreenCreate plans a create: the blue child, ACTIVE_BLUE, and for
// an instance moved in from a flinkstate_deployment the handover (planMove).
func (r *blueGreenResource) planBlueGreenCreate(ctx context.Context, plan *blueGreenModel, blue *deploymentModel, moved *blueGreenModel, mv *bgMove,
	diags *diag.Diagnostics) {
	if blueGreenCreateSuspended(plan, diags); diags.HasError() {
		return
	}
	plan.ActiveChild, plan.ActiveDeploymentName = types.StringValue(flinkdeploy.Blue), types.StringUnknown()
	if known(plan.Name) {
		plan.ActiveDeploymentName = types.StringValue(flinkdeploy.ChildName(plan.Name.ValueString(), flinkdeploy.Blue))
	}
	// blue_green_state is known after apply: a create whose wait runs
	// out is kept (finish), short of ACTIVE_BLUE.
	plan.BlueGreenState, plan.TransitionSavepoint = types.StringUnknown(), types.StringNull()
	plan.JobID, plan.JobState = types.StringUnknown(), types.StringUnknown()
	if mv != nil {
		r.planMove(ctx, plan, blue, moved, mv, diags)
	}
}

// planBlueGreenUpdate plans an update: the operator's classification of
// the template change (flinkdeploy.ClassifyBlueGreen) and where it ends
// (flinkdeploy.UpdateOutcome), or, after a wait that ran out and with
// nothing new to write, the state that wait waits for again; a transition
// runs the restore pre-flight and says that both jobs run side by side.
func (r *blueGreenResource) planBlueGreenUpdate(ctx context.Context, req resource.ModifyPlanRequest, plan, state *blueGreenModel, d, sd *deploymentModel,
	in flinkconf.Input, cfg map[string]string, diags *diag.Diagnostics) {
	var dd diag.Diagnostics
	prior, okP := sd.spec(ctx, nil, &dd)
	next, okN := d.spec(ctx, nil, &dd)
	if !okP || !okN {
		plan.unknownStatus()
		return
	}
	child := state.activeChild()
	diff := flinkdeploy.ClassifyBlueGreen(prior, next)
	if pending := loadBlueGreenPrivate(ctx, req.Private, diags); diff == flinkdeploy.DiffIgnore && pending.WaitPending != "" {
		o := flinkdeploy.ResumedWaitOutcome(pending.Wait.Target, child)
		planOutcome(ctx, plan, o, in, cfg, diags)
		diags.AddWarning("A wait that ran out: this apply waits again",
			fmt.Sprintf("The last apply's wait for %s ran out: %s\n\nThe change is written and the operator goes on with it; this apply writes "+
				"nothing new and waits for %s again.", o.State, pending.WaitPending, o.State))
		return
	}
	o := flinkdeploy.UpdateOutcome(diff, child)
	nd := planOutcome(ctx, plan, o, in, cfg, diags)
	if !o.NewChild {
		// Rewritten in place (PATCH_CHILD, a suspend or resume): the
		// child's own diff decides whether its job restarts.
		return
	}
	if r.preflightTransition(ctx, plan, state, nd, sd, child, o.Child, diags); diags.HasError() {
		return
	}
	warnTransitionOverlap(plan.Name.ValueString(), child, o.Child, prior.UpgradeChanges(next), diags)
}

// planOutcome writes where an update ends (flinkdeploy.BlueGreenOutcome)
// into plan: the active child and the state the apply waits for, the new
// child's configuration (which names it), and what is known only after the
// apply. It returns the new child as a deployment (nil: no new child).
func planOutcome(ctx context.Context, plan *blueGreenModel, o flinkdeploy.BlueGreenOutcome, in flinkconf.Input, cfg map[string]string,
	diags *diag.Diagnostics) *deploymentModel {
	var nd *deploymentModel
	if o.NewChild {
		// The new child's configuration names the new child.
		nd = plan.asDeployment(o.Child)
		nd.shown(ctx, cfg, in, diags)
		plan.EffectiveConfig = nd.EffectiveConfig
		plan.TransitionSavepoint = types.StringUnknown()
	}
	if o.State != "" {
		plan.ActiveChild = types.StringValue(o.Child)
		plan.ActiveDeploymentName = types.StringValue(flinkdeploy.ChildName(plan.Name.ValueString(), o.Child))
		plan.BlueGreenState = types.StringValue(o.State)
	}
	if o.JobChanges {
		plan.JobID, plan.JobState = types.StringUnknown(), types.StringUnknown()
	}
	return nd
}

// warnTransitionOverlap says what a transition of blue/green deployment
// name from child from to child to, for the template changes changes, does
// to the job's output: both jobs run side by side.
func warnTransitionOverlap(name, from, to string, changes []string, diags *diag.Diagnostics) {
	diags.AddWarning("A blue/green transition: both jobs run side by side",
		fmt.Sprintf("The operator applies this change (%s) as a transition: it takes a savepoint of %s's running job, which keeps running, "+
			"starts %s from it, and deletes %s once %s is STABLE with its job RUNNING (after deletion_delay). In between both jobs run: %s "+
			"processes again everything %s processed after the savepoint, so a sink sees those records twice. An exactly-once Kafka sink "+
			"with one transactionalIdPrefix makes the two jobs fence each other; with distinct prefixes (derived from kubernetes.cluster-id, "+
			"which names each child) the overlap's records are committed twice, and the new job's Kafka writer, which aborts the "+
			"lingering transactions of the prefix its restored state names (the connector's ExactlyOnceKafkaWriter"+
			".abortLingeringTransactions), fences the old job's open transaction once. Twice the resources run during the transition.",
			strings.Join(changes, ", "), flinkdeploy.ChildName(name, from),
			flinkdeploy.ChildName(name, to), flinkdeploy.ChildName(name, from),
			flinkdeploy.ChildName(name, to), flinkdeploy.ChildName(name, to),
			flinkdeploy.ChildName(name, from)))
}

// preflightTransition is the restore pre-flight of a transition: the new
// child starts from a savepoint of the running child's job, taken for every
// upgrade mode but stateless (BlueGreenUtils.isSavepointRequired) in the
// running child's kubernetes.operator.savepoint.format.type
// (BlueGreenUtils.triggerSavepoint), so at plan, before anything is
// written, the newest completed checkpoint of that job stands in for the
// savepoint and the new spec is checked against it as
// flinkstate_deployment's handover is (preflightSavepointHandover). Without
// it Flink refuses the state only when the new child starts; the operator
// then aborts the transition after abort_grace_period and the old child
// keeps running.
func (r *blueGreenResource) preflightTransition(ctx context.Context, plan, state *blueGreenModel, next, prior *deploymentModel, from, to string, diags *diag.Diagnostics) {
	if prior.Job == nil || next.Job == nil || next.Job.UpgradeMode.ValueString() == flinkconf.UpgradeStateless ||
		!strings.EqualFold(state.JobState.ValueString(), "RUNNING") {
		return
	}
	prior.JobID = state.JobID
	name := plan.Name.ValueString()
	r.preflightSavepointHandover(ctx, next, prior, "", savepointHandover{
		Subject: fmt.Sprintf("FlinkBlueGreenDeployment %s/%s transitions from %s to %s", plan.Namespace.ValueString(), name,
			flinkdeploy.ChildName(name, from), flinkdeploy.ChildName(name, to)),
		How: fmt.Sprintf("the operator would take a savepoint of %s's job and start %s from it, and Flink would fail %s's job; the operator "+
			"then aborts the transition after abort_grace_period", flinkdeploy.ChildName(name, from), flinkdeploy.ChildName(name, to), flinkdeploy.ChildName(name, to)),
		Skipped: fmt.Sprintf("If Flink refuses the state, %s's job fails and the operator aborts the transition, %s running on", flinkdeploy.ChildName(name, to),
			flinkdeploy.ChildName(name, from)),
	}, diags)
}

func (m *blueGreenModel) unknownStatus() {
	m.ActiveChild, m.ActiveDeploymentName, m.BlueGreenState = types.StringUnknown(), types.StringUnknown(), types.StringUnknown()
	m.TransitionSavepoint, m.JobID, m.JobState = types.StringUnknown(), types.StringUnknown(), types.StringUnknown()
}

// render is the FlinkBlueGreenDeployment to write: the template rendered
// by the shared conversion (derived again, as the plan did).
func (m *blueGreenModel) render(ctx context.Context, live *unstructured.Unstructured, diags *diag.Diagnostics) (*unstructured.Unstructured, bool) {
	d := m.asDeployment(m.activeChild())
	op := &deploymentOp{}
	if live != nil {
		tmpl, _, _ := unstructured.NestedMap(live.Object, "spec", "template", "spec")
		op.Live = &unstructured.Unstructured{Object: map[string]any{"spec": tmpl}}
	}
	w, dv, ok := d.deriveWant(ctx, op, diags)
	if !ok {
		return nil, false
	}
	obj, ok := w.Render(dv, flinkdeploy.LiveConfiguration(op.Live), "")
	if !ok || diags.HasError() {
		addProblem(diags, "Applying", "FlinkBlueGreenDeployment", "the configuration still holds unknown values at apply time",
			"Apply again once the values it depends on are known.")
		return nil, false
	}
	tmpl, _ := obj.Object["spec"].(map[string]any)
	return flinkdeploy.RenderBlueGreen(m.Namespace.ValueString(), m.Name.ValueString(), tmpl, m.configuration()), true
}

func (r *blueGreenResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan blueGreenModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	c := r.meta.kubeOrDiag(&resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := plan.Timeouts.Create(ctx, 10*time.Minute)
	resp.Diagnostics.Append(d...)
	if checkIdentityAtApply(ctx, c, *plan.asDeployment(flinkdeploy.Blue), &resp.Diagnostics); resp.Diagnostics.HasError() {
		return
	}
	obj, ok := plan.render(ctx, nil, &resp.Diagnostics)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout+kube.RequestTimeout)
	defer cancel()
	ns, name := plan.Namespace.ValueString(), plan.Name.ValueString()
	live, err := kube.Create(ctx, c.Dynamic, kube.FlinkBlueGreenDeploymentGVR, obj)
	if apierrors.IsAlreadyExists(err) {
		addAlreadyExists(&resp.Diagnostics, "flinkstate_blue_green_deployment", "FlinkBlueGreenDeployment", ns, name)
		return
	}
	if live == nil {
		addProblem(&resp.Diagnostics, "Creating", "FlinkBlueGreenDeployment "+ns+"/"+name, readableAPIError(err), "")
		return
	}
	private := loadBlueGreenPrivate(ctx, resp.Private, &resp.Diagnostics)
	defer private.save(ctx, resp.Private, &resp.Diagnostics)
	private.UID = string(live.GetUID())
	plan.ID = types.StringValue(ns + "/" + name)
	// In state before the wait: whatever happens next, the object is there.
	plan.BlueGreenState, plan.JobID, plan.JobState = types.StringValue(""), types.StringValue(""), types.StringValue("")
	w := kube.BlueGreenWait{Namespace: ns, Name: name, Target: flinkdeploy.StateActiveBlue, Child: flinkdeploy.ChildName(name, flinkdeploy.Blue),
		Timeout: timeout, Every: deploymentPollInterval}
	private.waitStarts(w)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	r.finish(ctx, c, &plan, w, true, private, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// finish runs the wait and reads the status into the model. A wait that
// ran out keeps private's pending mark, so the next plan waits again:
// after a create it is a warning, not an error (Terraform would taint the
// object and replace the running job: flinkstate_deployment's apply does
// the same), after an update an error. Either says where the transition
// stands (kube.BlueGreenWait.Waiting). A failure the operator reported is
// an error naming the child that keeps running.
func (r *blueGreenResource) finish(ctx context.Context, c *kube.Client, m *blueGreenModel, w kube.BlueGreenWait, create bool, private *blueGreenPrivate, diags *diag.Diagnostics) {
	planned := m.activeChild()
	st, err := w.Run(ctx, c.Dynamic)
	m.readStatusNow(ctx, c, w.Namespace, w.Name)
	if now := m.activeChild(); now != planned {
		// The plan named the keys the operator adds for the child it
		// expected to be active; they are the other child's.
		m.renameChild(ctx, planned, now, diags)
	}
	if err == nil {
		private.waitDone()
		return
	}
	running := "no child runs a job yet"
	if js := m.JobState.ValueString(); js != "" {
		running = fmt.Sprintf("%s keeps running (its job %s)", m.ActiveDeploymentName.ValueString(), js)
	}
	subject := "FlinkBlueGreenDeployment " + w.Namespace + "/" + w.Name
	verb := "Updating"
	if create {
		verb = "Creating"
	}
	if errors.Is(err, kube.ErrTransitionSavepoint) {
		// The operator goes on with the transition: the pending mark
		// stays, and the next apply waits again (and says the same until
		// the files are back, or the operator's abort, in its words).
		private.WaitPending = err.Error()
		addProblem(diags, verb, subject, err.Error()+"; "+running+".",
			"The operator goes on with the transition: the new child's job fails when its tasks read the missing files, and the operator "+
				"aborts the transition after abort_grace_period (the old child running on). Restore the missing files (a bucket versioning's "+
				"previous versions, a replica) before then, or after the abort apply a new change: the operator takes a new savepoint for it. "+
				"Look for what deletes files under the savepoint directory (a lifecycle rule, a cleanup job).")
		return
	}
	if errors.Is(err, kube.ErrBlueGreenFailed) {
		// The operator recorded the spec it failed on (lastReconciledSpec)
		// and acts on it no further (BlueGreenDeploymentService
		// .checkAndInitiateDeployment: a FAILING resource is reconciled
		// again on a spec change): waiting again changes nothing.
		private.waitDone()
		addProblem(diags, verb, subject, err.Error()+"; "+running+".",
			"The FlinkBlueGreenDeployment keeps this spec, which the operator recorded and acts on no further, so the next plan shows no "+
				"change while the configuration asks for it. Fix what the operator names in the configuration (the image, the resources) and "+
				"apply again: it applies the new spec as a new transition.")
		return
	}
	// A wait that ran out (or was cut short): the change stays written and
	// the operator goes on with it.
	detail := err.Error()
	if ctx.Err() == nil {
		if why := w.Waiting(ctx, c.Dynamic, st); why != "" {
			detail += "; " + why
		}
	}
	detail += "; " + running + "."
	private.WaitPending = detail
	if create {
		diags.AddWarning("FlinkBlueGreenDeployment created but not active yet",
			fmt.Sprintf("%s: %s\n\nThe FlinkBlueGreenDeployment %s/%s is kept (not replaced): the next plan shows it as an update, and that apply "+
				"waits for %s again.", subject, detail, w.Namespace, w.Name, w.Target))
		return
	}
	addProblem(diags, "Waiting for", subject, detail,
		fmt.Sprintf("The change stays written and the operator goes on with it. The next plan shows this deployment as a pending update, "+
			"whose apply waits for %s again.", w.Target))
}

// renameChild turns effective_flink_configuration's operator-added keys
// (flinkconf.OperatorAdded: kubernetes.cluster-id and the like, named for
// the child) from child from's values to child to's.
func (m *blueGreenModel) renameChild(ctx context.Context, from, to string, diags *diag.Diagnostics) {
	var dd diag.Diagnostics
	w, ok := m.asDeployment(from).expand(ctx, nil, &dd)
	if !ok || dd.HasError() || m.EffectiveConfig.IsUnknown() {
		return
	}
	cfg := w.Renamed(stringMap(ctx, m.EffectiveConfig, diags), flinkdeploy.ChildName(m.Name.ValueString(), to))
	m.EffectiveConfig = mapFrom(ctx, cfg, diags)
}

// specFor is the child's spec from the model: its configuration's keys the
// operator adds name the child (a plan of a transition names the new one).
func (m blueGreenModel) specFor(ctx context.Context, child string, diags *diag.Diagnostics) (flinkdeploy.Spec, bool) {
	if from := m.activeChild(); from != child {
		m.renameChild(ctx, from, child, diags)
	}
	return m.asDeployment(child).spec(ctx, nil, diags)
}

// readStatus reads the operator's state and the active child's job.
func (m *blueGreenModel) readStatus(ctx context.Context, c *kube.Client, live *unstructured.Unstructured) {
	st := kube.ReadBlueGreenStatus(live)
	child := flinkdeploy.ServingChild(st.State, func(t string) bool {
		_, err := kube.GetFlinkDeployment(ctx, c.Dynamic, live.GetNamespace(), flinkdeploy.ChildName(live.GetName(), t))
		return !notfound.Is(err)
	})
	m.BlueGreenState = types.StringValue(st.State)
	m.ActiveChild = types.StringValue(child)
	m.ActiveDeploymentName = types.StringValue(flinkdeploy.ChildName(live.GetName(), child))
	m.JobID, m.JobState, m.TransitionSavepoint = types.StringValue(""), types.StringValue(""), types.StringNull()
	obj, err := kube.GetFlinkDeployment(ctx, c.Dynamic, live.GetNamespace(), m.ActiveDeploymentName.ValueString())
	if err != nil {
		return
	}
	cs := kube.ReadDeploymentStatus(obj)
	m.JobID, m.JobState = types.StringValue(cs.JobID), types.StringValue(cs.JobState)
	used, _, _ := unstructured.NestedString(obj.Object, "spec", "job", "initialSavepointPath")
	asked, _, _ := unstructured.NestedString(live.Object, "spec", "template", "spec", "job", "initialSavepointPath")
	if used != "" && used != asked {
		m.TransitionSavepoint = types.StringValue(used)
	}
}

func (r *blueGreenResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	if r.applyMove(ctx, req, resp) {
		return // the handover of a moved flinkstate_deployment
	}
	var plan, state blueGreenModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	c := r.meta.kubeOrDiag(&resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := plan.Timeouts.Update(ctx, 10*time.Minute)
	resp.Diagnostics.Append(d...)
	ns, name := plan.Namespace.ValueString(), plan.Name.ValueString()
	private := loadBlueGreenPrivate(ctx, req.Private, &resp.Diagnostics)
	defer private.save(ctx, resp.Private, &resp.Diagnostics)
	live, err := kube.GetBlueGreen(ctx, c.Dynamic, ns, name)
	if err == nil {
		if uid := private.UID; uid != "" && uid != string(live.GetUID()) {
			err = fmt.Errorf("it has UID %s, not %s: another object of that name, which this resource does not rewrite", live.GetUID(), uid)
		}
	}
	if err != nil {
		addProblem(&resp.Diagnostics, "Updating", "FlinkBlueGreenDeployment "+ns+"/"+name, readableAPIError(err), "Refresh and plan again.")
		return
	}
	if checkIdentityAtApply(ctx, c, *plan.asDeployment(state.activeChild()), &resp.Diagnostics); resp.Diagnostics.HasError() {
		// Nothing written: the state stays what it was.
		resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
		return
	}
	before := kube.ReadBlueGreenStatus(live)
	obj, ok := plan.render(ctx, live, &resp.Diagnostics)
	if !ok {
		return
	}
	var dd diag.Diagnostics
	prior, _ := state.specFor(ctx, state.activeChild(), &dd)
	next, _ := plan.specFor(ctx, state.activeChild(), &dd)
	diff := flinkdeploy.ClassifyBlueGreen(prior, next)
	ctx, cancel := context.WithTimeout(ctx, timeout+kube.RequestTimeout)
	defer cancel()
	applied, err := kube.Apply(ctx, c.Dynamic, kube.FlinkBlueGreenDeploymentGVR, obj)
	if err == nil {
		// An option the configuration leaves out that someone else wrote
		// (Read shows it, the plan removes it).
		_, err = kube.RemoveBlueGreenOptions(ctx, c.Dynamic, applied, plan.unsetOptions())
	}
	if err != nil {
		addProblem(&resp.Diagnostics, "Updating", "FlinkBlueGreenDeployment "+ns+"/"+name, readableAPIError(err), "")
		return
	}
	from := state.activeChild()
	target, child := from, flinkdeploy.ChildName(name, from)
	w := kube.BlueGreenWait{Namespace: ns, Name: name, Since: before.LastReconciled, Timeout: timeout, Every: deploymentPollInterval}
	if before.JobState == "FAILING" {
		w.SinceError = before.Error
	}
	switch {
	case diff == flinkdeploy.DiffIgnore && private.WaitPending != "":
		// Nothing new to write: the apply resumes the wait that ran out.
		w.Target, w.Job, w.Child, w.Since = private.Wait.Target, private.Wait.Job, private.Wait.Child, private.Wait.Since
		w.SinceError = private.Wait.SinceError
	case diff == flinkdeploy.DiffIgnore:
		plan.readStatusNow(ctx, c, ns, name)
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		return
	case diff == flinkdeploy.DiffTransition || diff == flinkdeploy.DiffSavepointRedeploy:
		target = flinkdeploy.Other(from)
		child = flinkdeploy.ChildName(name, target)
	case diff == flinkdeploy.DiffSuspend:
		// The active child suspended in place, then ACTIVE_x with the job
		// SUSPENDED (checkAndInitiateDeployment SUSPEND → patchFlinkDeployment;
		// monitorTransition → finalizeSuspendedDeployment).
		w.Job = flinkdeploy.JobSuspendedStatus
	}
	if w.Target == "" {
		w.Target, w.Child = "ACTIVE_"+strings.ToUpper(target), child
	}
	w.CheckStart, w.Recheck = r.checkTransitionSavepoint(ctx), transitionSavepointRecheck
	private.waitStarts(w)
	r.finish(ctx, c, &plan, w, false, private, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// transitionSavepointRecheck is how often a wait asks again whether the
// savepoint a transition's new child starts from is complete, while the
// child's job does not run yet (kube.BlueGreenWait.Recheck): a GET of its
// _metadata and a listing of its directory each time.
var transitionSavepointRecheck = 10 * time.Second

// checkTransitionSavepoint is the wait's check of the savepoint a
// transition starts the new child from (kube.BlueGreenWait.CheckStart):
// checkRestoreTarget, as flinkstate_deployment checks a carried
// savepoint, reporting only what Flink would fail on (no _metadata, a
// referenced file missing). A check S3 did not answer, or a _metadata the
// reader does not know, is no reason to end a transition the operator runs:
// the wait goes on. nil without AWS access (the operator's abort remains).
func (r *blueGreenResource) checkTransitionSavepoint(ctx context.Context) func(context.Context, string) string {
	a, err := r.meta.AWS(ctx)
	if err != nil {
		return nil
	}
	return func(ctx context.Context, p string) string {
		actx, cancel := r.meta.boundAWS(ctx, kube.RequestTimeout)
		defer cancel()
		prob := checkRestoreTarget(actx, a.S3, p)
		if prob == nil || (prob.Kind != checkpoint.RestoreIncomplete && prob.Kind != checkpoint.RestoreNoMetadata) {
			return ""
		}
		return prob.Detail
	}
}

func (m *blueGreenModel) readStatusNow(ctx context.Context, c *kube.Client, ns, name string) {
	if live, err := kube.GetBlueGreen(ctx, c.Dynamic, ns, name); err == nil {
		m.readStatus(ctx, c, live)
	}
}

func (r *blueGreenResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state blueGreenModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	c := r.meta.kubeOrDiag(&resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if r.readMove(ctx, c, req, resp, &state) {
		return // moved in, not handed over yet
	}
	imported := takeImported(ctx, req, resp)
	ns, name := state.Namespace.ValueString(), state.Name.ValueString()
	live, err := kube.GetBlueGreen(ctx, c.Dynamic, ns, name)
	if notfound.Is(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		addProblem(&resp.Diagnostics, "Reading", "FlinkBlueGreenDeployment "+ns+"/"+name, readableAPIError(err), "")
		return
	}
	if replacedOutsideTerraform(ctx, req, resp, "FlinkBlueGreenDeployment", live) {
		return
	}
	state.readStatus(ctx, c, live)
	if state.Timeouts.IsNull() || state.Timeouts.IsUnknown() {
		state.Timeouts = knownTimeouts(ctx, state.Timeouts)
	}
	if state.FinalSavepoint.IsNull() {
		state.FinalSavepoint = types.BoolValue(true)
	}
	// The template read back as flinkstate_deployment reads a live object.
	tmpl, _, _ := unstructured.NestedMap(live.Object, "spec", "template", "spec")
	child := state.asDeployment(state.activeChild())
	fake := &unstructured.Unstructured{Object: map[string]any{"apiVersion": flinkdeploy.APIVersion, "kind": flinkdeploy.Kind,
		"metadata": map[string]any{"namespace": ns, "name": child.Name.ValueString()}, "spec": tmpl}}
	child.fromSpec(ctx, fake, imported, nil, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	state.fromDeployment(child)
	hideHandoverSavepoint(ctx, req, &state, &resp.Diagnostics)
	state.ID = types.StringValue(ns + "/" + name)
	cfg, _, _ := unstructured.NestedStringMap(live.Object, "spec", "configuration")
	if state.BlueGreen != nil || len(cfg) > 0 {
		opts := &blueGreenOptsModel{}
		for _, o := range blueGreenOptions {
			*o.get(opts) = optionalString(cfg[o.key])
		}
		state.BlueGreen = opts
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *blueGreenResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	if r.deleteMove(ctx, req, resp) {
		return // moved in, not handed over: the old FlinkDeployment
	}
	var state blueGreenModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	c := r.meta.kubeOrDiag(&resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := state.Timeouts.Delete(ctx, 10*time.Minute)
	resp.Diagnostics.Append(d...)
	ns, name := state.Namespace.ValueString(), state.Name.ValueString()
	live, err := kube.GetBlueGreen(ctx, c.Dynamic, ns, name)
	if notfound.Is(err) {
		return
	}
	if err != nil {
		addProblem(&resp.Diagnostics, "Destroying", "FlinkBlueGreenDeployment "+ns+"/"+name, "reading it before its final savepoint: "+readableAPIError(err),
			"Nothing was deleted. Apply again once the API server answers.")
		return
	}
	uid := objectUID(ctx, req.Private, &resp.Diagnostics)
	ours := uid == "" || uid == string(live.GetUID())
	if ours {
		// Not while a transition runs: the operator would delete the old
		// child under its final savepoint, or the new one would go without
		// one. Wait for the transition to end, within the timeout.
		if live, err = kube.WaitTransitionEnds(ctx, c.Dynamic, ns, name, timeout, deploymentPollInterval); notfound.Is(err) {
			return
		} else if err != nil {
			addProblem(&resp.Diagnostics, "Destroying", "FlinkBlueGreenDeployment "+ns+"/"+name, readableAPIError(err),
				"Nothing was deleted. Destroy again once blue_green_state is ACTIVE_BLUE or ACTIVE_GREEN: the operator ends the "+
					"transition when the new child is ready, or aborts it after abort_grace_period.")
			return
		}
	}
	state.readStatus(ctx, c, live)
	if ours {
		// The active child's job stops with a final savepoint, as a
		// flinkstate_deployment's does (takeFinalSavepoint), before
		// anything is deleted.
		dep := &deploymentResource{resourceBase: r.resourceBase}
		dm := state.asDeployment(state.activeChild())
		dep.takeFinalSavepoint(ctx, c, dm, "", "", timeout, &resp.Diagnostics)
		if resp.Diagnostics.HasError() {
			return
		}
	}
	owner := string(live.GetUID())
	deleteOwned(ctx, c, kube.FlinkBlueGreenDeploymentGVR, "FlinkBlueGreenDeployment", ns, name, timeout, req, resp)
	if resp.Diagnostics.HasError() || !ours {
		return // another object's children are not this resource's
	}
	// Its children go by their owner references; deleted here too, so
	// none is left behind where the garbage collector lags.
	err = kube.DeleteChildren(ctx, c.Dynamic, ns, name, owner)
	if err == nil {
		err = kube.WaitChildrenGone(ctx, c.Dynamic, ns, name, timeout, deploymentPollInterval)
	}
	if err != nil {
		addProblem(&resp.Diagnostics, "Deleting", "FlinkBlueGreenDeployment "+ns+"/"+name, "its child FlinkDeployments: "+readableAPIError(err),
			"Delete the children named in the message (kubectl delete flinkdeployment) once their jobs are stopped.")
	}
}

func (r *blueGreenResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if importNamespaceName(ctx, req, resp) {
		markImported(ctx, resp)
	}
}
