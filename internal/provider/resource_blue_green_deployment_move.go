package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
)

// A `moved` block from flinkstate_deployment to
// flinkstate_blue_green_deployment (Terraform >= 1.8) hands the running
// job's state over in one apply:
//
//   - MoveState (on an unconfigured provider: it reads nothing) converts
//     the deployment's state into blue/green state (the shared spec
//     attributes as they were, the old job's id and state) and marks it in
//     private state with the old FlinkDeployment (bgMove).
//   - Read of a marked instance reads the old FlinkDeployment, which still
//     runs the job (the FlinkBlueGreenDeployment does not exist yet).
//   - ModifyPlan plans the handover as a create of the blue/green
//     deployment (ACTIVE_BLUE, the children named for the new name) and
//     says so in a warning; the restore pre-flight runs against the old
//     job's newest checkpoint as for a replacement's handover.
//   - Update of a marked instance stops the old job with a savepoint
//     (takeFinalSavepoint, kube.StopWithSavepoint: the operator's own stop),
//     recorded in a FlinkStateSnapshot that names the blue/green deployment
//     as where it goes (kube.CarryToAnnotation, as a replacement's carried
//     savepoint), checks it, deletes the old FlinkDeployment (UID-checked),
//     and creates the FlinkBlueGreenDeployment with
//     spec.template.spec.job.initialSavepointPath that savepoint, then waits
//     for ACTIVE_BLUE as Create does.
//
// The operator starts the first child from the template's
// job.initialSavepointPath: InitializingBlueStateHandler.handle calls
// initiateDeployment(..., isFirstDeployment = true), and
// BlueGreenUtils.prepareFlinkDeployment keeps the template's
// initialSavepointPath for a first deployment; the child <name>-blue is a
// new FlinkDeployment, whose first deployment restores it
// (flink-kubernetes-operator release-1.15.0). The old FlinkDeployment's
// deletion deletes its HA metadata (ApplicationReconciler.cleanupInternal:
// deleteClusterDeployment(..., deleteHaData = true)); <name>-blue is another
// Flink cluster (kubernetes.cluster-id <name>-blue) with a new job id
// (ApplicationReconciler.setJobIdIfNecessary: JobID.generate() for a
// deployment that does not resume from HA metadata), so nothing of the old
// cluster's HA data or checkpoint paths is shared, and the blue/green
// deployment may keep the old deployment's name.
//
// A failure before the stop changes nothing. After it, the savepoint is
// recorded twice: in private state (bgMove.Savepoint, kept by Terraform
// with a failed update's state) and in the cluster (the FlinkStateSnapshot
// <old>-final-* with the carry annotation), and the old FlinkDeployment is
// suspended, not running: the next apply resumes from that savepoint; the
// old job is never restarted from scratch.

var _ resource.ResourceWithMoveState = (*blueGreenResource)(nil)

// privateBGMove marks a flinkstate_blue_green_deployment moved in from a
// flinkstate_deployment whose handover has not created the
// FlinkBlueGreenDeployment yet (bgMove, JSON).
const privateBGMove = "bluegreen_move"

// privateBGHandover is the savepoint the first child started from after a
// move: written to the template's job.initialSavepointPath by the provider,
// not by the configuration (Read shows it as unset).
const privateBGHandover = "bluegreen_handover_savepoint"

// bgMove is what a moved instance knows of the FlinkDeployment it hands
// over from.
type bgMove struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// UID of the old FlinkDeployment (flinkstate_deployment's private
	// state), "" if it did not record one.
	UID string `json:"uid,omitempty"`
	// Savepoint: the old job's savepoint the blue child starts from, once
	// the stop took it.
	Savepoint string `json:"savepoint,omitempty"`
	// OldDeleted: the apply deleted the old FlinkDeployment.
	OldDeleted bool `json:"old_deleted,omitempty"`
}

func (m *bgMove) id() string { return m.Namespace + "/" + m.Name }

func loadBGMove(ctx context.Context, p privateGetter, diags *diag.Diagnostics) *bgMove {
	if p == nil {
		return nil
	}
	b, d := p.GetKey(ctx, privateBGMove)
	diags.Append(d...)
	if len(b) == 0 {
		return nil
	}
	var m bgMove
	if json.Unmarshal(b, &m) != nil || m.Name == "" {
		return nil
	}
	return &m
}

// save records m; nil removes the mark.
func (m *bgMove) save(ctx context.Context, p privateSetter, diags *diag.Diagnostics) {
	var b []byte
	if m != nil {
		b, _ = json.Marshal(m)
	}
	diags.Append(p.SetKey(ctx, privateBGMove, b)...)
}

// MoveState accepts a flinkstate_deployment of this provider.
func (r *blueGreenResource) MoveState(ctx context.Context) []resource.StateMover {
	var dep resource.SchemaResponse
	(&deploymentResource{}).Schema(ctx, resource.SchemaRequest{}, &dep)
	return []resource.StateMover{{SourceSchema: &dep.Schema, StateMover: moveDeploymentToBlueGreen}}
}

// fromThisProvider: Terraform sends the source's full provider address
// (terraform v1.11.4 cross_provider_move.go), OpenTofu the name the source
// type implies (see fromKubernetesProvider).
func fromThisProvider(req resource.MoveStateRequest) bool {
	return strings.HasSuffix(req.SourceProviderAddress, "/flinkstate") || req.SourceProviderAddress == "flinkstate"
}

func moveDeploymentToBlueGreen(ctx context.Context, req resource.MoveStateRequest, resp *resource.MoveStateResponse) {
	if req.SourceTypeName != "flinkstate_deployment" || !fromThisProvider(req) {
		return
	}
	const target = "flinkstate_blue_green_deployment"
	if req.SourceState == nil {
		// The framework could not read it with this version's schema.
		moveProblem(&resp.Diagnostics, req, target, "its state does not have the attributes of this provider version's flinkstate_deployment",
			"Remove the moved block, apply once with this provider version (the refresh rewrites the flinkstate_deployment's state), then add it again.")
		return
	}
	var src deploymentModel
	resp.Diagnostics.Append(req.SourceState.Get(ctx, &src)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !known(src.Namespace) || !known(src.Name) {
		moveProblem(&resp.Diagnostics, req, target, "its state names no FlinkDeployment", "Remove the moved block.")
		return
	}
	mv := &bgMove{Namespace: src.Namespace.ValueString(), Name: src.Name.ValueString()}
	if req.SourcePrivate != nil {
		mv.UID = objectUID(ctx, req.SourcePrivate, &resp.Diagnostics)
	}
	bg := blueGreenModel{
		deploymentSpecModel: src.deploymentSpecModel,
		ID:                  src.ID, FinalSavepoint: src.FinalSavepoint,
		// Nothing blue/green yet: the plan shows what the handover makes.
		ActiveChild: types.StringNull(), ActiveDeploymentName: src.Name, BlueGreenState: types.StringNull(),
		TransitionSavepoint: types.StringNull(), JobID: src.JobID, JobState: src.JobState,
		EffectiveConfig: src.EffectiveConfig, EffectivePod: src.EffectivePod, Timeouts: src.Timeouts,
	}
	resp.Diagnostics.Append(resp.TargetState.Set(ctx, &bg)...)
	mv.save(ctx, resp.TargetPrivate, &resp.Diagnostics)
	// Not read yet: a plan without refresh is refused (moveServer).
	resp.Diagnostics.Append(resp.TargetPrivate.SetKey(ctx, privateMoved, []byte(`true`))...)
}

// moveAwareNames: namespace and name force a replacement, except for an
// instance moved in from a flinkstate_deployment, whose handover creates
// the FlinkBlueGreenDeployment of the configured name anyway (a
// replacement would delete nothing and create without the handover).
func moveAwareNames(attrs map[string]schema.Attribute) {
	notMoving := func(ctx context.Context, req planmodifier.StringRequest, resp *stringplanmodifier.RequiresReplaceIfFuncResponse) {
		resp.RequiresReplace = loadBGMove(ctx, req.Private, &resp.Diagnostics) == nil
	}
	for _, a := range []string{"namespace", "name"} {
		if s, ok := attrs[a].(schema.StringAttribute); ok {
			s.PlanModifiers = []planmodifier.String{stringplanmodifier.RequiresReplaceIf(notMoving,
				"Changing it replaces the resource (except in the apply that hands a moved flinkstate_deployment over).", "")}
			attrs[a] = s
		}
	}
}

// oldDeployment is the moved-in state as the flinkstate_deployment it was:
// its spec, job and configuration. Its final_savepoint does not apply: a
// handover of a stateful job always takes the savepoint.
func (m *blueGreenModel) oldDeployment(mv *bgMove) *deploymentModel {
	d := m.asDeployment(flinkdeploy.Blue)
	d.Namespace, d.Name = types.StringValue(mv.Namespace), types.StringValue(mv.Name)
	d.JobID, d.JobState, d.LifecycleState = m.JobID, m.JobState, types.StringNull()
	d.FinalSavepoint = types.BoolValue(true)
	return d
}

// readMove is Read of a marked instance: the old FlinkDeployment runs the
// job. handled is false for an instance that is not marked.
func (r *blueGreenResource) readMove(ctx context.Context, c *kube.Client, req resource.ReadRequest, resp *resource.ReadResponse, state *blueGreenModel) (handled bool) {
	mv := loadBGMove(ctx, req.Private, &resp.Diagnostics)
	if mv == nil {
		return false
	}
	live, err := kube.GetFlinkDeployment(ctx, c.Dynamic, mv.Namespace, mv.Name)
	switch {
	case err == nil:
		st := kube.ReadDeploymentStatus(live)
		state.JobID, state.JobState = types.StringValue(st.JobID), types.StringValue(st.JobState)
	case notfound.Is(err) && !mv.OldDeleted && r.pendingHandover(ctx, c, mv, resp):
		// An apply that stopped and deleted it was cut off before Terraform
		// recorded so: the savepoint is recorded in the cluster.
		state.JobState = types.StringValue("")
	case notfound.Is(err) && !mv.OldDeleted:
		resp.Diagnostics.AddWarning("FlinkDeployment moved to blue/green is gone",
			fmt.Sprintf("FlinkDeployment %s, moved into this flinkstate_blue_green_deployment by a moved block, was deleted outside "+
				"Terraform before its state was handed over: there is no job to hand over, and the next plan creates the blue/green "+
				"deployment from job.initial_savepoint_path, or without state. Retained checkpoints of the old job stay in its "+
				"checkpoint directory (data.flinkstate_latest_checkpoint with complete = true finds the newest complete one).", mv.id()))
		resp.State.RemoveResource(ctx)
		return true
	case notfound.Is(err):
		// The last apply deleted it after the stop: the handover resumes
		// from the savepoint it recorded.
		state.JobState = types.StringValue("")
	default:
		addProblem(&resp.Diagnostics, "Reading", "FlinkDeployment "+mv.id()+" (moved to blue/green, not handed over yet)", readableAPIError(err), "")
		return true
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
	return true
}

// pendingHandover looks for the savepoint a handover recorded for its
// successor and has not passed on (kube.PendingCarry); when there is one,
// the instance goes on from it (recorded in private state).
func (r *blueGreenResource) pendingHandover(ctx context.Context, c *kube.Client, mv *bgMove, resp *resource.ReadResponse) bool {
	carried, err := kube.PendingCarry(ctx, c.Dynamic, mv.Namespace, mv.Name)
	if err != nil || carried.Path == "" {
		return false
	}
	mv.Savepoint, mv.OldDeleted = carried.Path, true
	mv.save(ctx, resp.Private, &resp.Diagnostics)
	return true
}

// movePlanState is ModifyPlan's hook: for a marked instance the prior state
// is the old deployment's, and the plan is a create of the blue/green
// deployment (state nil); moved keeps the old state for planMove.
func (r *blueGreenResource) movePlanState(ctx context.Context, req resource.ModifyPlanRequest, state **blueGreenModel, diags *diag.Diagnostics) (*bgMove, *blueGreenModel) {
	mv := loadBGMove(ctx, req.Private, diags)
	if mv == nil || *state == nil {
		return nil, nil
	}
	moved := *state
	*state = nil
	return mv, moved
}

// planMove says what the handover does and refuses what it cannot do,
// before anything is changed (flinkdeploy.PlanMove decides). blue is the
// planned first child.
func (r *blueGreenResource) planMove(ctx context.Context, plan *blueGreenModel, blue *deploymentModel, moved *blueGreenModel, mv *bgMove, diags *diag.Diagnostics) {
	ns, name := plan.Namespace.ValueString(), plan.Name.ValueString()
	if known(plan.Namespace) && known(plan.Name) {
		plan.ID = types.StringValue(ns + "/" + name)
	} else {
		plan.ID = types.StringUnknown()
	}
	c := r.meta.kubeOrDiag(diags)
	if c == nil || diags.HasError() || !known(plan.Namespace) || !known(plan.Name) {
		return
	}
	what := fmt.Sprintf("FlinkDeployment %s to FlinkBlueGreenDeployment %s/%s", mv.id(), ns, name)
	if refuseSuspendedMove(plan, what, diags) || !moveTargetFree(ctx, c, ns, name, mv, what, diags) {
		return
	}
	old := moved.oldDeployment(mv)
	f := moveFacts(plan, old, mv)
	if !mv.OldDeleted && !readMoveSource(ctx, c, mv, what, &f, diags) {
		return
	}
	r.sayMovePlan(ctx, plan, blue, old, mv, f, what, diags)
}

// moveFacts is what the move knows of the old deployment (moved in as old,
// marked mv) and of the template (plan), in the terms of flinkdeploy's
// move rules; the old FlinkDeployment's status is read separately
// (readMoveSource).
func moveFacts(plan *blueGreenModel, old *deploymentModel, mv *bgMove) flinkdeploy.MoveFacts {
	f := flinkdeploy.MoveFacts{OldDeleted: mv.OldDeleted, Carried: mv.Savepoint, KeepsState: old.keepsState(),
		Pinned: plan.Job != nil && known(plan.Job.InitialSavepointPath)}
	if f.Pinned {
		f.PinnedPath = plan.Job.InitialSavepointPath.ValueString()
	}
	if old.Job != nil {
		f.OldPath = old.Job.InitialSavepointPath.ValueString()
	}
	return f
}

// refuseSuspendedMove refuses a move whose template's job.state is
// suspended (InitializingBlueStateHandler.handle: "Blocking initial
// deployment ... job.state is SUSPENDED"): true when it did.
func refuseSuspendedMove(plan *blueGreenModel, what string, diags *diag.Diagnostics) bool {
	if plan.Job == nil || !strings.EqualFold(plan.Job.State.ValueString(), flinkdeploy.JobSuspended) {
		return false
	}
	addProblem(diags, "Moving", what, "job.state is suspended, and the operator does not start a new blue/green deployment "+
		"that is suspended (it waits for job.state running before it writes the first child)",
		"Nothing was changed. Remove job.state (or set it to running) to hand the job over.")
	return true
}

// moveTargetFree tells whether FlinkBlueGreenDeployment ns/name does not
// exist yet: the handover creates it and never takes over an object it did
// not create. false: an error is added.
func moveTargetFree(ctx context.Context, c *kube.Client, ns, name string, mv *bgMove, what string, diags *diag.Diagnostics) bool {
	_, err := kube.GetBlueGreen(ctx, c.Dynamic, ns, name)
	switch {
	case err == nil:
		addProblem(diags, "Moving", what, "a FlinkBlueGreenDeployment "+ns+"/"+name+" exists already; the handover creates it and never takes over an object it did not create",
			"Nothing was changed. Give the blue/green deployment another name, or import that one instead of moving. If it is the "+
				"one an apply of this move created and was cut off before recording (its template's job.initialSavepointPath is the "+
				"old job's savepoint, and FlinkDeployment "+mv.id()+" is gone), take it over: terraform state rm ADDRESS, then "+
				"terraform import ADDRESS "+ns+"/"+name+".")
		return false
	case !notfound.Is(err):
		addProblem(diags, "Moving", what, "reading FlinkBlueGreenDeployment "+ns+"/"+name+": "+readableAPIError(err), "Nothing was changed. Plan again.")
		return false
	}
	return true
}

// readMoveSource reads the old FlinkDeployment's status into f, and
// refuses another object of its name than the one the flinkstate_deployment
// managed. false: an error is added.
func readMoveSource(ctx context.Context, c *kube.Client, mv *bgMove, what string, f *flinkdeploy.MoveFacts, diags *diag.Diagnostics) bool {
	live, err := kube.GetFlinkDeployment(ctx, c.Dynamic, mv.Namespace, mv.Name)
	if err != nil {
		addProblem(diags, "Moving", what, "reading the FlinkDeployment: "+readableAPIError(err), "Nothing was changed. Plan again.")
		return false
	}
	if mv.UID != "" && string(live.GetUID()) != mv.UID {
		addProblem(diags, "Moving", what, fmt.Sprintf("FlinkDeployment %s now has UID %s, not %s: it is another object than the "+
			"flinkstate_deployment managed, which this move does not stop or delete", mv.id(), live.GetUID(), mv.UID),
			"Nothing was changed. Remove the moved block and import the objects as they are.")
		return false
	}
	st := kube.ReadDeploymentStatus(live)
	f.JobState, f.LifecycleState = st.JobState, st.LifecycleState
	f.UpgradeSavepointPath, _, _ = unstructured.NestedString(live.Object, "status", "jobStatus", "upgradeSavepointPath")
	return true
}

// moveClusters says that the blue child is another Flink cluster than the
// old deployment's.
func moveClusters(blueName string) string {
	return fmt.Sprintf("%s is a new Flink cluster (kubernetes.cluster-id %s) with a new job id; the old FlinkDeployment's HA metadata is "+
		"deleted with it (ApplicationReconciler.cleanupInternal).", blueName, blueName)
}

// sayMovePlan reports what the move does with the job's state
// (flinkdeploy.PlanMove), as a warning, or an error for what it refuses.
func (r *blueGreenResource) sayMovePlan(ctx context.Context, plan *blueGreenModel, blue, old *deploymentModel, mv *bgMove, f flinkdeploy.MoveFacts,
	what string, diags *diag.Diagnostics) {
	ns, name := plan.Namespace.ValueString(), plan.Name.ValueString()
	blueName := flinkdeploy.ChildName(name, flinkdeploy.Blue)
	switch flinkdeploy.PlanMove(f) {
	case flinkdeploy.MoveResumes:
		from := "without state (upgrade_mode stateless)"
		switch f.ResumeSource() {
		case flinkdeploy.FromPinned:
			from = "from job.initial_savepoint_path " + f.PinnedPath
		case flinkdeploy.FromHandover:
			from = "from " + f.Carried + ", the savepoint the old job was stopped with"
		}
		diags.AddWarning("Move to blue/green resumes",
			fmt.Sprintf("The last apply of this move stopped the job of FlinkDeployment %s and deleted it, but did not create the "+
				"blue/green deployment. This apply creates FlinkBlueGreenDeployment %s/%s, whose first child %s starts %s, and waits "+
				"for ACTIVE_BLUE. %s", mv.id(), ns, name, blueName, from, moveClusters(blueName)))
	case flinkdeploy.MoveWithoutState:
		diags.AddWarning("Move to blue/green starts without state",
			fmt.Sprintf("FlinkDeployment %s runs no stateful job (upgrade_mode stateless, or no job): this apply deletes it and creates "+
				"FlinkBlueGreenDeployment %s/%s, whose first child %s starts from job.initial_savepoint_path, if set, or from empty state. %s",
				mv.id(), ns, name, blueName, moveClusters(blueName)))
	case flinkdeploy.MoveRefusedNotRunning:
		// takeFinalSavepoint: no savepoint of a job that is not running.
		addProblem(diags, "Moving", what, fmt.Sprintf("the job of FlinkDeployment %s is %s (lifecycle %s), not running, so no savepoint of "+
			"it can be taken to hand over", mv.id(), kube.OrNone(f.JobState), kube.OrNone(f.LifecycleState)),
			"Nothing was changed. Bring the job back to running (remove the moved block and apply the flinkstate_deployment) and plan "+
				"the move again; or, to start the blue/green deployment from a retained checkpoint, set job.initial_savepoint_path to it "+
				"(data.flinkstate_latest_checkpoint with complete = true finds the newest complete one).")
	case flinkdeploy.MoveRefusedRollback:
		addAttributeProblem(diags, path.Root("job").AtName("initial_savepoint_path"), "Moving", what,
			"job.initial_savepoint_path names "+f.PinnedPath+", the path the old deployment was created "+
				"from: the blue/green deployment would start from that older savepoint, dropping everything the job did since",
			"Nothing was changed. Remove job.initial_savepoint_path: the blue/green deployment then starts from the savepoint the old job is stopped with.")
	case flinkdeploy.MoveFromPinned:
		diags.AddWarning("Move to blue/green starts from job.initial_savepoint_path",
			fmt.Sprintf("FlinkDeployment %s is stopped with a savepoint (kept, in FlinkStateSnapshot %s-final-*) and deleted, and the "+
				"blue/green deployment's first child %s starts from job.initial_savepoint_path %s, as configured, not from that savepoint.",
				mv.id(), mv.Name, blueName, f.PinnedPath))
	default:
		r.planStopHandover(ctx, plan, blue, old, mv, f, diags)
	}
}

// planStopHandover says how the running job's state is handed over through
// the savepoint it is stopped with (or was stopped with already), and runs
// the restore pre-flight against the running job's newest checkpoint.
func (r *blueGreenResource) planStopHandover(ctx context.Context, plan *blueGreenModel, blue, old *deploymentModel, mv *bgMove, f flinkdeploy.MoveFacts,
	diags *diag.Diagnostics) {
	ns, name := plan.Namespace.ValueString(), plan.Name.ValueString()
	blueName := flinkdeploy.ChildName(name, flinkdeploy.Blue)
	existing, stopped := f.StoppedWith()
	how := fmt.Sprintf("the operator stops the running job of FlinkDeployment %s with a savepoint into %s (never drained), which "+
		"is recorded in FlinkStateSnapshot %s-final-* (kept)", mv.id(), old.savepointDir(ctx), mv.Name)
	if stopped {
		how = fmt.Sprintf("the job of FlinkDeployment %s is stopped already, with savepoint %s, which is recorded in FlinkStateSnapshot %s-final-* (kept)",
			mv.id(), existing, mv.Name)
	}
	diags.AddWarning("Move to blue/green hands the job's state over",
		fmt.Sprintf("This apply moves the job into FlinkBlueGreenDeployment %s/%s: %s; the provider checks that savepoint, deletes "+
			"FlinkDeployment %s, creates the blue/green deployment with job.initialSavepointPath that savepoint, and waits for "+
			"ACTIVE_BLUE: its first child %s starts from it. Unlike a blue/green transition the two jobs never run side by side: "+
			"nothing is processed twice, but the job is stopped from the savepoint until %s runs (as for an upgrade). %s If the stop "+
			"fails, the old job runs on and nothing is changed; if a later step fails, the savepoint is kept and the next apply goes "+
			"on from it.", ns, name, how, mv.id(), blueName, blueName, moveClusters(blueName)))
	if stopped {
		return
	}
	r.preflightSavepointHandover(ctx, blue, old, old.finalSavepointFormat(ctx), savepointHandover{
		Subject: fmt.Sprintf("FlinkDeployment %s moves to FlinkBlueGreenDeployment %s/%s", mv.id(), ns, name),
		How:     fmt.Sprintf("its job would be stopped with a savepoint and %s started from it", blueName),
		Skipped: "the apply checks the savepoint itself before the old deployment is deleted",
	}, diags)
}

// planMoveUnknown is planMove for a configuration with values known only
// at apply: the apply hands over as planMove says, without the plan-time
// checks (the apply checks the savepoint itself before the old
// FlinkDeployment is deleted).
func (r *blueGreenResource) planMoveUnknown(plan *blueGreenModel, mv *bgMove, diags *diag.Diagnostics) {
	plan.ID = types.StringUnknown()
	diags.AddWarning("Move to blue/green hands the job's state over",
		fmt.Sprintf("This apply moves the job of FlinkDeployment %s into the FlinkBlueGreenDeployment: the operator stops the old job "+
			"with a savepoint (recorded in FlinkStateSnapshot %s-final-*, kept), the provider checks it, deletes the old FlinkDeployment "+
			"and creates the blue/green deployment, whose first child starts from it. The configuration holds values known only at "+
			"apply, so the plan could not check the handover; the apply checks the savepoint before the old FlinkDeployment is deleted.",
			mv.id(), mv.Name))
}

// addAttributeProblem is addProblem on an attribute.
func addAttributeProblem(diags *diag.Diagnostics, at path.Path, action, object, cause, todo string) {
	diags.AddAttributeError(at, problemSummary(action, object), problemDetail(cause, todo))
}

// applyMove is Update of a marked instance: the handover. handled is false
// for an instance that is not marked.
func (r *blueGreenResource) applyMove(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) (handled bool) {
	mv := loadBGMove(ctx, req.Private, &resp.Diagnostics)
	if mv == nil {
		return false
	}
	var plan, moved blueGreenModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &moved)...)
	c := r.meta.kubeOrDiag(&resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return true
	}
	timeout, d := plan.Timeouts.Update(ctx, 10*time.Minute)
	resp.Diagnostics.Append(d...)
	ns, name := plan.Namespace.ValueString(), plan.Name.ValueString()
	what := fmt.Sprintf("FlinkDeployment %s to FlinkBlueGreenDeployment %s/%s", mv.id(), ns, name)
	if _, err := kube.GetBlueGreen(ctx, c.Dynamic, ns, name); err == nil {
		addAlreadyExists(&resp.Diagnostics, "flinkstate_blue_green_deployment", "FlinkBlueGreenDeployment", ns, name)
		return true
	} else if !notfound.Is(err) {
		addProblem(&resp.Diagnostics, "Moving", what, "reading FlinkBlueGreenDeployment "+ns+"/"+name+": "+readableAPIError(err), "Nothing was changed. Apply again.")
		return true
	}
	dep := &deploymentResource{resourceBase: r.resourceBase}
	old := moved.oldDeployment(mv)
	blue := plan.asDeployment(flinkdeploy.Blue)
	f := moveFacts(&plan, old, mv)
	if !mv.OldDeleted {
		op := &moveOp{c: c, dep: dep, plan: &plan, old: old, blue: blue, mv: mv, f: f, timeout: timeout, what: what, resp: resp}
		if !r.stopAndDeleteOld(ctx, op) {
			return true
		}
	} else if f.RestoresHandover() && !r.checkHandoverSavepoint(ctx, dep, blue, mv, timeout, &resp.Diagnostics) {
		return true
	}
	created := createMovedBlueGreen(ctx, c, &plan, mv, f.RestoresHandover(), what, resp)
	if created == nil {
		return true
	}
	r.waitMovedBlueGreen(ctx, c, &plan, created, timeout, resp)
	return true
}

// moveOp is one apply of a move's handover while the old FlinkDeployment
// exists: the client, the old deployment (as flinkstate_deployment's
// model), the blue child, the move's mark and facts, the update's timeout,
// what the errors name, and the response the steps are recorded in.
type moveOp struct {
	c         *kube.Client
	dep       *deploymentResource
	plan      *blueGreenModel
	old, blue *deploymentModel
	mv        *bgMove
	f         flinkdeploy.MoveFacts
	timeout   time.Duration
	what      string
	resp      *resource.UpdateResponse
}

// stopAndDeleteOld is the handover's first half while the old
// FlinkDeployment exists: it checks that it is still the object the
// flinkstate_deployment managed, stops its job with a savepoint
// (MoveFacts.TakesStop), checks the savepoint the blue child will start
// from (MoveFacts.RestoresHandover), and deletes the old FlinkDeployment,
// recording each step in op.mv. false: an error is added, and nothing after
// the failed step was done.
func (r *blueGreenResource) stopAndDeleteOld(ctx context.Context, op *moveOp) bool {
	mv, diags := op.mv, &op.resp.Diagnostics
	live, err := kube.GetFlinkDeployment(ctx, op.c.Dynamic, mv.Namespace, mv.Name)
	switch {
	case err != nil:
		addProblem(diags, "Moving", op.what, "reading the FlinkDeployment: "+readableAPIError(err), "Nothing was changed. Apply again.")
		return false
	case mv.UID != "" && string(live.GetUID()) != mv.UID:
		addProblem(diags, "Moving", op.what, fmt.Sprintf("FlinkDeployment %s now has UID %s, not %s: another object, left alone",
			mv.id(), live.GetUID(), mv.UID), "Nothing was changed. Remove the moved block and import the objects as they are.")
		return false
	}
	if op.f.TakesStop() && !stopMovedJob(ctx, op) {
		return false
	}
	if op.f.RestoresHandover() && !r.checkHandoverSavepoint(ctx, op.dep, op.blue, mv, op.timeout, diags) {
		return false
	}
	if err := kube.DeleteOwnedAndWait(ctx, op.c.Dynamic, kube.FlinkDeploymentGVR, mv.Namespace, mv.Name, ktypes.UID(mv.UID), op.timeout); err != nil {
		addProblem(diags, "Moving", op.what, "deleting the FlinkDeployment: "+err.Error(),
			"Its job is stopped; its savepoint "+kube.OrNone(mv.Savepoint)+" is kept. Apply again: the move goes on from it.")
		return false
	}
	mv.OldDeleted = true
	mv.save(ctx, op.resp.Private, diags)
	return true
}

// stopMovedJob stops the old job with a savepoint through the operator,
// recorded in a FlinkStateSnapshot that names the blue/green deployment
// (op.plan) as where it goes (a job stopped already with one, by a failed
// apply, is recorded again), and records its path in op.mv. false: an
// error is added; nothing is deleted.
func stopMovedJob(ctx context.Context, op *moveOp) bool {
	ns, name, mv, diags := op.plan.Namespace.ValueString(), op.plan.Name.ValueString(), op.mv, &op.resp.Diagnostics
	var sd diag.Diagnostics
	op.dep.takeFinalSavepoint(ctx, op.c, op.old, mv.UID, ns+"/"+name, op.timeout, &sd)
	appendMoveDiags(diags, sd, op.what)
	if sd.HasError() {
		return false
	}
	carried, err := kube.CarriedSavepoint(ctx, op.c.Dynamic, ns, name)
	if err != nil || carried.Path == "" {
		if err == nil {
			err = errors.New("no FlinkStateSnapshot names it as where its savepoint goes")
		}
		addProblem(diags, "Moving", op.what, "finding the savepoint the old job was stopped with: "+err.Error(),
			"Nothing was deleted: FlinkDeployment "+mv.id()+" is suspended with its savepoint recorded in its status. Apply again.")
		return false
	}
	mv.Savepoint = carried.Path
	mv.save(ctx, op.resp.Private, diags)
	return true
}

// createMovedBlueGreen creates the FlinkBlueGreenDeployment of plan, with
// the template's job.initialSavepointPath the old job's savepoint when it
// restores the handover, and makes it this resource's object: the move's
// mark goes, the handover savepoint is recorded (Read shows the template's
// path as unset) and consumed. nil: an error is added.
func createMovedBlueGreen(ctx context.Context, c *kube.Client, plan *blueGreenModel, mv *bgMove, handover bool, what string,
	resp *resource.UpdateResponse) *unstructured.Unstructured {
	obj, ok := plan.render(ctx, nil, &resp.Diagnostics)
	if !ok {
		return nil
	}
	if handover {
		if err := unstructured.SetNestedField(obj.Object, mv.Savepoint, "spec", "template", "spec", "job", "initialSavepointPath"); err != nil {
			addProblem(&resp.Diagnostics, "Moving", what, err.Error(), "")
			return nil
		}
	}
	created, err := kube.Create(ctx, c.Dynamic, kube.FlinkBlueGreenDeploymentGVR, obj)
	if created == nil {
		addProblem(&resp.Diagnostics, "Moving", what, "creating the FlinkBlueGreenDeployment: "+readableAPIError(err),
			"The old job is stopped and deleted; its savepoint "+kube.OrNone(mv.Savepoint)+" is kept. Apply again: the move goes on from it.")
		return nil
	}
	// The FlinkBlueGreenDeployment is this resource's object from now on.
	setObjectUID(ctx, resp.Private, string(created.GetUID()), &resp.Diagnostics)
	(*bgMove)(nil).save(ctx, resp.Private, &resp.Diagnostics)
	if handover {
		setPrivateString(ctx, resp.Private, privateBGHandover, mv.Savepoint, &resp.Diagnostics)
		consumeCarried(ctx, c, plan.Namespace.ValueString(), plan.Name.ValueString(), mv.Savepoint, &resp.Diagnostics)
	}
	return created
}

// waitMovedBlueGreen saves the created FlinkBlueGreenDeployment in state
// and waits for ACTIVE_BLUE as Create does (a pending mark the next plan
// waits again for).
func (r *blueGreenResource) waitMovedBlueGreen(ctx context.Context, c *kube.Client, plan *blueGreenModel, created *unstructured.Unstructured,
	timeout time.Duration, resp *resource.UpdateResponse) {
	ns, name := plan.Namespace.ValueString(), plan.Name.ValueString()
	plan.ID = types.StringValue(ns + "/" + name)
	plan.BlueGreenState, plan.JobID, plan.JobState = types.StringValue(""), types.StringValue(""), types.StringValue("")
	resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
	wctx, cancel := context.WithTimeout(ctx, timeout+kube.RequestTimeout)
	defer cancel()
	w := kube.BlueGreenWait{Namespace: ns, Name: name, Target: flinkdeploy.StateActiveBlue, Child: flinkdeploy.ChildName(name, flinkdeploy.Blue),
		Timeout: timeout, Every: deploymentPollInterval}
	private := loadBlueGreenPrivate(ctx, resp.Private, &resp.Diagnostics)
	private.UID = string(created.GetUID())
	private.waitStarts(w)
	r.finish(wctx, c, plan, w, true, private, &resp.Diagnostics)
	private.save(ctx, resp.Private, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
}

// checkHandoverSavepoint checks the savepoint blue starts from as a
// replacement's carried savepoint is checked (verifyCarried: complete,
// with _metadata; preflightPath: what Flink checks when blue restores it),
// before the old FlinkDeployment is deleted or blue is created.
func (r *blueGreenResource) checkHandoverSavepoint(ctx context.Context, dep *deploymentResource, blue *deploymentModel, mv *bgMove, timeout time.Duration, diags *diag.Diagnostics) bool {
	var d diag.Diagnostics
	dep.verifyCarried(ctx, blue, mv.Savepoint, timeout, &d)
	if !d.HasError() {
		dep.preflightPath(ctx, blue, mv.Savepoint, "the savepoint the moved FlinkDeployment "+mv.id()+" was stopped with", true, true, timeout, &d)
	}
	appendMoveDiags(diags, d, "FlinkDeployment "+mv.id()+" to blue/green")
	if d.HasError() {
		state := "is stopped (suspended), not deleted"
		if mv.OldDeleted {
			state = "was deleted already"
		}
		diags.AddError("Move to blue/green stopped before the create",
			fmt.Sprintf("FlinkDeployment %s %s; its savepoint %s is kept (FlinkStateSnapshot %s-final-*), and no FlinkBlueGreenDeployment "+
				"was created. Fix what is named above and apply again: the move goes on from that savepoint.", mv.id(), state, mv.Savepoint, mv.Name))
		return false
	}
	return true
}

// appendMoveDiags passes on the diagnostics of flinkstate_deployment's
// steps, whose errors speak of a destroy, as errors of the move.
func appendMoveDiags(diags *diag.Diagnostics, d diag.Diagnostics, what string) {
	for _, x := range d {
		if x.Severity() == diag.SeverityError {
			diags.AddError("Moving "+what+" failed", x.Detail()+"\n\n(During the move to blue/green: final_savepoint does not "+
				"apply, the handover always takes the savepoint; nothing is deleted before it completes.)")
			continue
		}
		diags.Append(x)
	}
}

// deleteMove is Delete of a marked instance (the move planned, then the
// resource removed from the configuration): the old FlinkDeployment is
// destroyed as flinkstate_deployment destroys it, with its final savepoint.
func (r *blueGreenResource) deleteMove(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) (handled bool) {
	mv := loadBGMove(ctx, req.Private, &resp.Diagnostics)
	if mv == nil {
		return false
	}
	var state blueGreenModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	c := r.meta.kubeOrDiag(&resp.Diagnostics)
	if resp.Diagnostics.HasError() || mv.OldDeleted {
		return true
	}
	timeout, d := state.Timeouts.Delete(ctx, 10*time.Minute)
	resp.Diagnostics.Append(d...)
	old := state.oldDeployment(mv)
	old.FinalSavepoint = state.FinalSavepoint
	dep := &deploymentResource{resourceBase: r.resourceBase}
	dep.takeFinalSavepoint(ctx, c, old, mv.UID, "", timeout, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return true
	}
	err := kube.DeleteOwnedAndWait(ctx, c.Dynamic, kube.FlinkDeploymentGVR, mv.Namespace, mv.Name, ktypes.UID(mv.UID), timeout)
	switch {
	case errors.Is(err, kube.ErrOtherObject):
		resp.Diagnostics.AddWarning("FlinkDeployment replaced outside Terraform", err.Error()+". It was not deleted.")
	case err != nil:
		addProblem(&resp.Diagnostics, "Deleting", "FlinkDeployment "+mv.id(), err.Error(), "")
	}
	return true
}

// hideHandoverSavepoint: the template's job.initialSavepointPath that the
// move wrote reads as unset while the configuration leaves it unset.
func hideHandoverSavepoint(ctx context.Context, req resource.ReadRequest, state *blueGreenModel, diags *diag.Diagnostics) {
	p := privateString(ctx, req.Private, privateBGHandover, diags)
	if p == "" || state.Job == nil || state.Job.InitialSavepointPath.ValueString() != p {
		return
	}
	var prior types.String
	if d := req.State.GetAttribute(ctx, path.Root("job").AtName("initial_savepoint_path"), &prior); d.HasError() || !prior.IsNull() {
		return
	}
	state.Job.InitialSavepointPath = types.StringNull()
}
