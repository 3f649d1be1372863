package provider

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/float64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/deployop"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

type deploymentResource struct{ resourceBase }

var (
	_ resource.ResourceWithConfigure        = (*deploymentResource)(nil)
	_ resource.ResourceWithConfigValidators = (*deploymentResource)(nil)
	_ resource.ResourceWithImportState      = (*deploymentResource)(nil)
	_ resource.ResourceWithModifyPlan       = (*deploymentResource)(nil)
)

func newDeploymentResource() resource.Resource { return &deploymentResource{} }

// deploymentPollInterval is how often waits read the status.
var deploymentPollInterval = time.Second

func (r *deploymentResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_deployment"
}

func (r *deploymentResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	keep := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	resp.Schema = schema.Schema{
		Description: "A FlinkDeployment of the Flink Kubernetes Operator, wired to its state: the provider derives the " +
			"flinkConfiguration keys for the state backend, checkpoint/savepoint/HA directories and S3 credentials class, the " +
			"operator's flinkVersion and the S3 plugin jar from the Flink version and identity mode, and merges what the pod needs " +
			"into the pod template. Created with a plain create, which fails (with the `terraform import` command to use) when a " +
			"FlinkDeployment of that name exists: an existing object is never taken over. Updated with server-side apply (field " +
			"manager terraform-provider-flinkstate); the operator's status and defaults never show as a diff. Planning a create " +
			"needs no cluster. A wait that fails or times out never replaces the job: after a create the object is kept (a " +
			"warning) and the next plan shows an update that waits again; after an update it is an error, and the update stays " +
			"pending in the next plan. Reads of the status during a wait that fail (the API server restarting) are retried until the timeout.",
		Attributes: map[string]schema.Attribute{
			"id":        schema.StringAttribute{Computed: true, Description: "`namespace/name`.", PlanModifiers: keep},
			"namespace": schema.StringAttribute{Required: true, Description: "Namespace.", Validators: namespaceValidators(), PlanModifiers: replace},
			"name": schema.StringAttribute{Required: true, Description: "Name of the FlinkDeployment.", PlanModifiers: replace,
				Validators: []validator.String{deploymentNameCheck}},
			"image": schema.StringAttribute{Required: true, Description: "Container image, e.g. flink:2.2.1-java17. Changing it upgrades the job with upgrade_mode. The tag of an official flink image must agree with flink_version.",
				Validators: []validator.String{imageCheck}},
			"flink_version": schema.StringAttribute{Required: true,
				Description: "The full Flink version of the image, e.g. `2.2.1`: gives the operator's flinkVersion (v2_2) and the S3 plugin jar (flink-s3-fs-hadoop-2.2.1.jar).",
				Validators:  []validator.String{flinkVersionCheck}},
			"mode": schema.StringAttribute{Optional: true, Computed: true,
				Description: "Deployment mode: `native` (default) or `standalone`. Unset on an imported FlinkDeployment without spec.mode: not written (the operator runs it native).", Validators: []validator.String{stringvalidator.OneOf("native", "standalone")}},
			"service_account": schema.StringAttribute{Required: true, Description: "ServiceAccount of the Flink pods (e.g. flinkstate_service_account.x.name).",
				Validators: objectNameValidators()},
			"identity": schema.StringAttribute{Optional: true,
				Description: "The S3 credentials class the provider writes (fs.s3a.aws.credentials.provider): `irsa` " +
					"(WebIdentityTokenCredentialsProvider: the IAM role of the ServiceAccount's IRSA annotation) or `pod_identity` " +
					"(DefaultAWSCredentialsProviderChain: an EKS Pod Identity association's container credentials). Unset (null), " +
					"the provider writes no credentials class, and the job gets credentials another way (a class configured outside this FlinkDeployment, or Hadoop S3A's default chain, which reads environment " +
					"variables, container credentials such as Pod Identity's and the node's instance role, but not IRSA's web identity token). " +
					"An import of an object without the key leaves it unset, so adopting a job changes nothing. A create without it " +
					"is allowed (a job may get credentials from its image or node role), and its plan says so in a warning. Setting, " +
					"changing or removing identity on an existing deployment writes or removes the key, a spec change the operator " +
					"applies as an upgrade (a restart with the job's upgrade mode): the plan says so.",
				Validators: []validator.String{stringvalidator.OneOf(flinkconf.Identities...)}},
			"s3_plugin": schema.StringAttribute{Optional: true,
				Description: "Who enables Flink's Hadoop S3 file system plugin, which the job's s3:// state needs: `provider` " +
					"(the default when unset) adds ENABLE_BUILT_IN_PLUGINS naming flink-s3-fs-hadoop-<flink_version>.jar to " +
					"flink-main-container, which the official image's entry point links from /opt/flink/opt into /opt/flink/plugins " +
					"at start; `image`: the image has the plugin in /opt/flink/plugins already, and the provider writes no variable " +
					"(a variable in pod_template stays as written). An import of an object whose main container does not enable " +
					"the plugin that way reads `image`, so adopting a job changes nothing. Changing it on an existing deployment " +
					"adds or removes the variable, a pod template change the operator applies as an upgrade (a restart with the " +
					"job's upgrade mode): the plan says so.",
				Validators: []validator.String{stringvalidator.OneOf(flinkconf.S3Plugins...)}},
			"high_availability": schema.BoolAttribute{Optional: true,
				Description: "Kubernetes HA with metadata in state.ha_dir. Default: on with upgrade_mode last-state, and with savepoint when there is an HA directory (the store's or state.ha_dir); off otherwise. The operator's safety nets for stateful jobs need it (recovery of a lost JobManager, the last-state fallback of a savepoint upgrade, rollback); the plan says what a stateful deployment without it gives up."},
			"flink_configuration": schema.MapAttribute{Optional: true, ElementType: types.StringType,
				Description: "Extra flinkConfiguration keys. A key the provider manages (under any alias: s3., s3a., fs.s3a. prefixes, deprecated names) is an error naming the attribute to set instead; static AWS credentials are refused (use identity), and so is an empty or white-space-only key (it names no option). A bucket of the state or of job.initial_savepoint_path whose name has dots needs `fs.s3a.path.style.access = \"true\"` here (or under s3., s3a., or per bucket): S3's TLS certificate does not match such a bucket's virtual-hosted-style host, which Hadoop S3A uses by default, so the plan refuses it otherwise.",
				Validators:  []validator.Map{flinkConfigurationCheck}},
			"sensitive_flink_configuration": schema.MapAttribute{Optional: true, Sensitive: true, ElementType: types.StringType,
				Description: "flinkConfiguration keys whose values are secrets (keystore passwords, tokens): written like flink_configuration, " +
					"but never shown in plans or effective_flink_configuration, where they read \"(sensitive)\". A key Flink hides " +
					"(its name contains password, secret, token, apikey, ...: GlobalConfiguration.isSensitive) belongs here; in " +
					"flink_configuration it is a warning. An import puts such keys here; the generated configuration cannot hold them " +
					"(Terraform writes null for a sensitive value), so set them before applying. Keys follow flink_configuration's rules (no managed key, no static credentials, no empty or white-space-only key).",
				Validators: []validator.Map{flinkConfigurationCheck}},
			"pod_template": schema.StringAttribute{Optional: true,
				Description: "Pod template YAML merged with what the provider adds (fsGroup 9999 unless set, ENABLE_BUILT_IN_PLUGINS with the S3 plugin, an emptyDir at state.local_dir).",
				Validators:  []validator.String{podTemplateCheck}},
			"wait_for": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("deployed"),
				Description: "What create and update wait for: `none`, `deployed` (default: lifecycleState DEPLOYED or STABLE), `running` (jobStatus.state RUNNING) or `checkpoint` (RUNNING, then a checkpoint of the job completed after the change, its `_metadata` read from the checkpoint directory: a job reports RUNNING while its tasks wait for slots, restart in a loop or fail every checkpoint). With job.state `suspended` both `deployed` and `running` wait for lifecycleState SUSPENDED (the suspend, with its savepoint in savepoint mode). A change that restores state (a create or redeploy from job.initial_savepoint_path, a replacement that carries a final savepoint, an upgrade or resume with upgrade_mode savepoint or last-state) waits, with `deployed` or `running`, until the job runs from it (jobStatus.state RUNNING, and status.jobStatus.upgradeSavepointPath the restore path): the operator reports DEPLOYED before Flink has restored anything. A restore that fails in Flink, or a spec the operator rejects, fails a create with the operator's message.",
				Validators:  []validator.String{stringvalidator.OneOf("none", "deployed", "running", "checkpoint")}},
			"job_id":          schema.StringAttribute{Computed: true, Description: "status.jobStatus.jobId.", PlanModifiers: keep},
			"lifecycle_state": schema.StringAttribute{Computed: true, Description: "status.lifecycleState.", PlanModifiers: keep},
			"job_state":       schema.StringAttribute{Computed: true, Description: "status.jobStatus.state.", PlanModifiers: keep},
			"effective_flink_configuration": schema.MapAttribute{Computed: true, ElementType: types.StringType,
				Description: "The configuration the job runs with, known at plan time: the flinkConfiguration the provider writes into the " +
					"FlinkDeployment (the derived keys plus flink_configuration) and the keys the operator adds when it deploys " +
					"(operator_added_flink_configuration lists those apart; every other key here is written). Sensitive values read \"(sensitive)\"."},
			"operator_added_flink_configuration": schema.MapAttribute{Computed: true, ElementType: types.StringType,
				Description: "The keys of effective_flink_configuration that the provider does not write and the operator adds to the " +
					"configuration Flink runs with when it deploys (flink-kubernetes-operator 1.15.0, FlinkConfigBuilder): kubernetes.namespace, " +
					"kubernetes.cluster-id and, with high availability, high-availability.cluster-id (from the deployment's namespace and " +
					"name); for a job pipeline.name (its name), parallelism.default (job.parallelism), execution.shutdown-on-application-finish " +
					"(false) and execution.submit-failed-job-on-application-error (true); and, when absent, kubernetes.rest-service.exposed.type " +
					"(ClusterIP), web.cancel.enable (false), execution.checkpointing.interval (5 min for last-state) and " +
					"execution.checkpointing.externalized-checkpoint-retention (RETAIN_ON_CANCELLATION). Not listed: what the operator " +
					"derives from the spec's own fields (the image, service account, resources, replicas, jar, $internal.flink.version, " +
					"execution.target) and what it sets anew at every deploy (job-result-store.storage-path, a new directory under the HA " +
					"storage directory each time; $internal.pipeline.job-id; the JobManager's owner reference)."},
			"savepoint_redeploy_nonce": schema.Int64Attribute{Computed: true,
				Description: "spec.job.savepointRedeployNonce. The provider sets a new value when job.initial_savepoint_path is set or changed on an " +
					"existing deployment, so the operator redeploys the job from that path (the operator reads initialSavepointPath only on first " +
					"deployment otherwise). Null until the first such redeploy."},
			"upgrade_savepoint_path": schema.StringAttribute{Computed: true,
				Description: "With savepoint_before_upgrade: the path of the savepoint taken, and COMPLETED, before the last update that changed the job. " +
					"Its FlinkStateSnapshot is kept (disposeOnDelete false): roll back to it with job.initial_savepoint_path. After a replacement " +
					"that carried the state across (final_savepoint): the final savepoint of the replaced deployment, which the job started from."},
			"final_savepoint": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(true),
				Description: "For upgrade_mode `savepoint` or `last-state`: destroying the deployment, or replacing it (a new name, or another " +
					"change that forces a replacement), first stops the running job with a final savepoint, through the operator's own stop " +
					"(job.state suspended in savepoint mode: Flink's stop-with-savepoint), and waits for it (within timeouts.delete), so nothing " +
					"is processed after the state the next job starts from; " +
					"a replacement then starts from it (one in another namespace finds it, kept in the old namespace, by listing FlinkStateSnapshots " +
					"in all namespaces, which the destroy checks it may do before anything else), once the provider has checked, as for job.initial_savepoint_path, " +
					"that every file it references exists (otherwise nothing is created, and the error names what is missing). The savepoint's FlinkStateSnapshot (<name>-final-*, " +
					"disposeOnDelete false) outlives the deployment; its path is reported. A suspended job's suspend savepoint is recorded " +
					"instead. If the stop fails (the operator's SavepointError, or timeouts.delete runs out), the provider puts job.state back, the " +
					"job runs on, the destroy is refused with the operator's words, and nothing is deleted. Without it (false) the operator cancels " +
					"the job (kubernetes.operator.job.savepoint-on-deletion is off by default) and deletes its HA metadata " +
					"(ApplicationReconciler.cleanupInternal): only retained checkpoints remain. Default true; the plan says, for destroy and " +
					"replace, what state survives and where."},
			"drain_on_destroy": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				Description: "With final_savepoint: a destroy (not a replacement) drains the job as it stops it with the final savepoint: Flink " +
					"emits MAX_WATERMARK before the savepoint, so every event-time timer and window fires and its results reach the sinks " +
					"(the operator's " + kube.DrainOnSavepointKey + ", which it passes to Flink's stop-with-savepoint). For a job that ends " +
					"for good. Default false, as the operator's: Flink's documentation says to drain only a job that terminates permanently, " +
					"since a job resumed from a drained savepoint can produce incorrect results. A replacement never drains, whatever this says."},
			"effective_pod_template": schema.StringAttribute{Computed: true,
				Description: "spec.podTemplate as written (JSON): pod_template merged with the provider's additions. Known at plan time; an edit outside Terraform shows as a change."},
		},
		Blocks: map[string]schema.Block{
			"job_manager": schema.SingleNestedBlock{
				Description: "JobManager resources.",
				Attributes: map[string]schema.Attribute{
					"memory":   schema.StringAttribute{Optional: true, Description: jobManagerRequired.doc("Memory (jobmanager.memory.process.size), e.g. 2048m, 2g or 2Gi. The plan checks it against Flink's memory model with flink_configuration: at least 577m with the default options."), Validators: []validator.String{memoryCheck}},
					"cpu":      schema.Float64Attribute{Optional: true, Description: jobManagerRequired.doc("CPU cores."), Validators: []validator.Float64{float64validator.AtLeast(0.01)}},
					"replicas": schema.Int64Attribute{Optional: true, Description: "JobManager replicas (more than 1 needs high_availability).", Validators: []validator.Int64{int64validator.AtLeast(1)}},
				},
				Validators: []validator.Object{jobManagerRequired.object()},
			},
			"task_manager": schema.SingleNestedBlock{
				Description: "TaskManager resources.",
				Attributes: map[string]schema.Attribute{
					"memory":     schema.StringAttribute{Optional: true, Description: taskManagerRequired.doc("Memory (taskmanager.memory.process.size), e.g. 2048m, 2g or 2Gi. The plan checks it against Flink's memory model with flink_configuration: at least 982m with the default options."), Validators: []validator.String{memoryCheck}},
					"cpu":        schema.Float64Attribute{Optional: true, Description: taskManagerRequired.doc("CPU cores."), Validators: []validator.Float64{float64validator.AtLeast(0.01)}},
					"task_slots": settingAttribute(setting(flinkconf.AttrTaskSlots)),
				},
				Validators: []validator.Object{taskManagerRequired.object()},
			},
			"job": schema.SingleNestedBlock{
				Description: "The application job.",
				// With the pass-through fields of flinkdeploy.JobFields.
				Attributes: jobBlockAttributes(map[string]schema.Attribute{
					"jar_uri": schema.StringAttribute{Optional: true, Description: jobRequired.doc("Job jar, e.g. local:///opt/flink/examples/streaming/StateMachineExample.jar."), Validators: []validator.String{notBlankCheck}},
					"upgrade_mode": schema.StringAttribute{Optional: true,
						Description: "`last-state` (needs HA and retained checkpoints), `savepoint` (needs a savepoint dir) or `stateless` (the operator's default).",
						Validators:  []validator.String{stringvalidator.OneOf(flinkconf.UpgradeModes...)}},
					"state": schema.StringAttribute{Optional: true, Description: "`running` or `suspended`.",
						Validators: []validator.String{stringvalidator.OneOf("running", "suspended")}},
					"initial_savepoint_path": schema.StringAttribute{Optional: true,
						Description: "Savepoint or completed checkpoint (chk-N) the job starts from (e.g. flinkstate_snapshot.x.path or " +
							"data.flinkstate_latest_checkpoint.x.path). On create the job starts from it; set or changed on an existing deployment, " +
							"the job is redeployed from it (a new savepoint_redeploy_nonce) and its current state is replaced. Before either, the " +
							"provider checks that the snapshot is complete: its _metadata reads (Flink's format; one the provider cannot read is " +
							"refused) and every file it references exists, e.g. no shared file was deleted. An empty value is an error (a flinkstate_snapshot's path is " +
							"empty until it completed with a path), so a planned restore never starts the job without state.",
						Validators: []validator.String{restorePathCheck}},
					"claim_mode": settingAttribute(setting(flinkconf.AttrClaimMode)),
				}),
				Validators: []validator.Object{jobRequired.object()},
			},
			"savepoint_before_upgrade": schema.SingleNestedBlock{
				Description: "Take a savepoint before every update the Flink operator applies as an upgrade, i.e. restarts the job for " +
					"(its spec diff: " + flinkdeploy.UpgradeText() + "): the provider creates a FlinkStateSnapshot, waits until the " +
					"operator reports it COMPLETED, records its path in upgrade_savepoint_path, and only then applies the new spec. On FAILED, " +
					"ABANDONED or timeout the update fails with the operator's message and the old spec keeps running. Not taken while " +
					"job.state is suspended (a suspended job cannot take one). With upgrade_mode stateless the restart does not restore " +
					"from it: the plan says so.",
				Attributes: map[string]schema.Attribute{
					"format_type": schema.StringAttribute{Optional: true, Description: "`CANONICAL` (default) or `NATIVE`.",
						Validators: []validator.String{stringvalidator.OneOf("CANONICAL", "NATIVE")}},
					"timeout": schema.StringAttribute{Optional: true, Description: "How long to wait for COMPLETED, e.g. `10m` (default). " +
						"The wait comes before the update's own (timeouts.update): the two add up.",
						Validators: []validator.String{waitTimeoutCheck}},
				},
			},
			"state": schema.SingleNestedBlock{
				Description: deploymentStateDirs.doc("Where and how the job keeps state (the block is required)."),
				Attributes:  stateBlockAttributes(deploymentStateDirs),
			},
			"timeouts": timeoutsBlock(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}, "create and update wait for wait_for, delete for the object and its finalizer (default 10m each)"),
		},
	}
	markdownDescriptions(&resp.Schema)
}

// Attributes the deployment's optional blocks need whenever they are present.
var (
	jobManagerRequired  = requiredInBlock("job_manager", "memory", "cpu")
	taskManagerRequired = requiredInBlock("task_manager", "memory", "cpu")
	jobRequired         = requiredInBlock("job", "jar_uri")
)

// deploymentStateDirs: the state block names where checkpoints go, through
// a store or a checkpoint directory.
var deploymentStateDirs = atLeastOneOf("state.store_id", "state.checkpoint_dir")

func (r *deploymentResource) ConfigValidators(context.Context) []resource.ConfigValidator {
	return []resource.ConfigValidator{
		deploymentStateDirs.resource(),
		deploymentChecks{},
	}
}

// ModifyPlan runs the plan-time checks and shows the derived configuration,
// without any API call.
func (r *deploymentResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		planDeploymentDestroy(ctx, req, resp)
		return
	}
	var plan deploymentModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	var state *deploymentModel
	if !req.State.Raw.IsNull() {
		state = &deploymentModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, state)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	private := loadDeploymentPrivate(ctx, req.Private, &resp.Diagnostics)
	defer private.save(ctx, resp.Private, &resp.Diagnostics)
	// The provider defaults the imported object lacked, for the plan and
	// the prior state.
	stateUnwritten := private.Unwritten
	unwritten := planUnwritten(&plan, state, private)
	planMode(ctx, req.Config, &plan, state, unwritten, &resp.Diagnostics)
	// namespace and name are the attributes that force a replacement (the
	// framework gives ModifyPlan an empty RequiresReplace, whatever the
	// attributes' plan modifiers said).
	replacing := state != nil && (!plan.Namespace.Equal(state.Namespace) || !plan.Name.Equal(state.Name))
	switch {
	case state == nil:
		planCarry(&plan, private)
	case replacing:
		planReplace(ctx, &plan, state, private, &resp.Diagnostics)
	}
	_, _, ok := planConfiguration(ctx, &plan, state, replacing, unwritten, stateUnwritten,
		func(in flinkconf.Input) { r.planDeployment(plan, in, &resp.Diagnostics) }, &resp.Diagnostics)
	// The prior desired deployment, converted once for the plan's
	// decisions (planRestore, planNotRunningUpgrade, SameSpec).
	var prior flinkdeploy.Desired
	if state != nil {
		prior = state.desired(ctx, stateUnwritten)
	}
	if !ok {
		planRestore(ctx, &plan, state, prior, unwritten, &resp.Diagnostics)
		resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
		return
	}
	if resp.Diagnostics.HasError() {
		return
	}
	planned := r.planRestores(ctx, &plan, state, prior, replacing, unwritten, private, &resp.Diagnostics)
	// An update, or a wait that did not end (wait pending) and makes an
	// update whose apply waits again: the operator decides the status again.
	// Any other update (timeouts, final_savepoint) writes the object too and
	// reads the status back, which the operator may have changed since the
	// refresh: it is not known before the apply either.
	if state != nil && (!prior.SameSpec(planned) || private.WaitPending != "" ||
		!req.Plan.Raw.Equal(req.State.Raw)) {
		plan.LifecycleState, plan.JobState, plan.JobID = types.StringUnknown(), types.StringUnknown(), types.StringUnknown()
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

// planConfiguration plans the configuration of plan, a deployment or a
// blue/green template as its active child, both resources alike: the one
// expand, derived once (flinkdeploy.Want.Derive) and spelled as the state
// wrote it (unless replacing: a new object), flinkconf's findings, own (the
// resource's own checks) and the shared plan checks, then the derived
// values flattened into plan. known is false while an input is unknown
// (the derived values are then unknown); the checks' errors are in diags
// (nothing is set).
func planConfiguration(ctx context.Context, plan, state *deploymentModel, replacing bool, unwritten, stateUnwritten []string,
	own func(flinkconf.Input), diags *diag.Diagnostics) (w flinkdeploy.Want, d flinkdeploy.Derived, known bool) {
	w, ok := plan.expand(ctx, unwritten, diags)
	if !ok {
		plan.EffectiveConfig, plan.OperatorAddedConfig = types.MapUnknown(types.StringType), types.MapUnknown(types.StringType)
		plan.EffectivePod = types.StringUnknown()
		return w, d, false
	}
	prior := state
	if replacing {
		prior = nil
	}
	// Spelled as the object has it (flinkconf.Respell): an adopted
	// object's deprecated keys and equivalent values are no change.
	// Against what the object holds (the written configuration, not the
	// keys the operator adds), as the apply does.
	var was map[string]string
	if prior != nil {
		was = prior.written(ctx, stateUnwritten, diags)
	}
	d = w.Derive(was, nil)
	addFindings(diags, d.ConfigFindings)
	own(w.Input)
	planIdentity(*plan, prior, diags)
	addFindings(diags, d.PodFindings)
	planSpecChecks(plan, state, w.Input, diags)
	if !diags.HasError() {
		plan.flatten(ctx, w, d, diags)
	}
	return w, d, true
}

// planDeploymentDestroy is the plan of a destroy: it says what happens to
// the job's state (planDestroy).
func planDeploymentDestroy(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.State.Raw.IsNull() {
		return
	}
	var state deploymentModel
	if resp.Diagnostics.Append(req.State.Get(ctx, &state)...); !resp.Diagnostics.HasError() {
		planDestroy(ctx, &state, loadDeploymentPrivate(ctx, req.Private, &resp.Diagnostics).FinalFailed, &resp.Diagnostics)
	}
}

// planUnwritten is the provider defaults the planned object lacks and the
// provider does not write (those of an imported object, private.Unwritten).
// A new object (a create, or a replacement's, even of an imported one) has
// none: the provider writes all its defaults, and owns what it creates (a
// create forgets the import).
func planUnwritten(plan, state *deploymentModel, private *deploymentPrivate) []string {
	if state != nil && plan.Namespace.Equal(state.Namespace) && plan.Name.Equal(state.Name) {
		return private.Unwritten
	}
	if state == nil {
		private.forgetImport()
	}
	return nil
}

// planRestores plans what the job restores from (planRestore) and checks
// it before anything is written: a replacement's handover of the running
// job against its newest checkpoint (preflightHandover), a redeploy's
// job.initial_savepoint_path (preflightPath, again at apply), and an
// upgrade of a job that is not running (planNotRunningUpgrade). prior is
// the state's desired deployment; planned, the plan's, converted once its
// nonce is planned (zero on create).
func (r *deploymentResource) planRestores(ctx context.Context, plan, state *deploymentModel, prior flinkdeploy.Desired, replacing bool,
	unwritten []string, private *deploymentPrivate, diags *diag.Diagnostics) (planned flinkdeploy.Desired) {
	if replacing {
		// A replacement plans a new object (Terraform plans it again with a
		// null prior state); the old one's changes are not upgrades.
		planRestore(ctx, plan, nil, flinkdeploy.Desired{}, unwritten, diags)
		planned = plan.desired(ctx, unwritten)
	} else {
		planned = planRestore(ctx, plan, state, prior, unwritten, diags)
	}
	if replacing && private.ReplaceFrom != "" && state.JobState.ValueString() == "RUNNING" && plan.restorePath().IsNull() {
		r.preflightHandover(ctx, plan, state, diags)
	}
	if p := plan.restorePath(); state != nil && !replacing && redeploys(plan, state) && !p.IsUnknown() {
		// A redeploy's path is known at plan: checked now, and again at
		// apply (Update) before the spec is written.
		r.preflightPath(ctx, plan, p.ValueString(), "job.initial_savepoint_path, which this redeploy restores", false, false,
			kube.RequestTimeout, diags)
	}
	if state != nil && !replacing {
		planNotRunningUpgrade(plan, state, prior, planned, private.RecordedSavepoint, diags)
	}
	return planned
}

// planMode plans mode: unset, native, the operator's default; not written
// at all on an imported object that did not have it (flinkconf.AbsentMode,
// in unwritten), where writing it is a restart, which the plan says.
func planMode(ctx context.Context, config tfsdk.Config, plan, state *deploymentModel, unwritten []string, diags *diag.Diagnostics) {
	var cfgMode types.String
	diags.Append(config.GetAttribute(ctx, path.Root("mode"), &cfgMode)...)
	if cfgMode.IsNull() {
		plan.Mode = types.StringValue("native")
		if slices.Contains(unwritten, flinkconf.AbsentMode) {
			plan.Mode = types.StringNull()
		}
	} else if state != nil && state.Mode.IsNull() && slices.Contains(unwritten, flinkconf.AbsentMode) {
		diags.AddAttributeWarning(path.Root("mode"), "Writing mode restarts the job",
			fmt.Sprintf("The imported FlinkDeployment has no spec.mode (the operator runs it native); mode = %q writes the field, a spec "+
				"change the operator applies as an upgrade (a restart with the job's upgrade mode). Leave mode unset to keep it as it is.",
				cfgMode.ValueString()))
	}
}

// apply creates (op.Create) or updates the FlinkDeployment, then waits
// for wait_for (deployop.Write: the create never adopts an object).
//
// A wait that fails or times out never loses the object. After a create it
// is a warning, not an error: Terraform taints an object whose create
// returned an error and the next apply would delete and recreate the
// running job (Terraform CLI docs, "Command: taint": objects whose creation
// failed are marked tainted). Instead the object is saved with a
// "wait pending" mark in private state, and the next plan shows an update
// (ModifyPlan) whose apply waits again. After an update the failed wait is
// an error, and the mark makes the next plan show the pending change again.
func (r *deploymentResource) apply(ctx context.Context, plan deploymentModel, op *deploymentOp, timeout time.Duration, state *tfsdk.State, private *deploymentPrivate, diags *diag.Diagnostics) {
	c := r.meta.kubeOrDiag(diags)
	if diags.HasError() {
		return
	}
	if checkIdentityAtApply(ctx, c, plan, diags); diags.HasError() {
		return
	}
	obj, ok := plan.render(ctx, op, diags)
	if !ok {
		return
	}
	// Every call of this create/update, the wait included, ends within the resource's timeout.
	ctx, cancel := context.WithTimeout(ctx, timeout+kube.RequestTimeout)
	defer cancel()
	ns, name := plan.Namespace.ValueString(), plan.Name.ValueString()
	base := r.baseline(ctx, &plan, op.Live, diags)
	w := op.Write
	w.Object, w.Target, w.Timeout, w.Every = obj, plan.shape().WaitTarget(), timeout, deploymentPollInterval
	done := w.Do(ctx, r.meta.env(), &private.Marks)
	if done.Exists {
		addAlreadyExists(diags, "flinkstate_deployment", "FlinkDeployment", ns, name)
	}
	for _, rep := range done.Reports {
		addReport(diags, rep.Object, rep.Report)
	}
	if done.Live == nil {
		return
	}
	plan.ID = types.StringValue(ns + "/" + name)
	plan.setStatus(kube.ReadDeploymentStatus(done.Live))
	// Saved before waiting (with the wait-pending mark): whatever happens
	// next, the object is in state.
	if diags.Append(state.Set(ctx, &plan)...); w.Target == deployop.NoWait {
		return
	}
	ends := deployop.Ends{
		Waited: func(st kube.DeploymentStatus) { plan.setStatus(st); diags.Append(state.Set(ctx, &plan)...) },
		Reason: func(o kube.WaitOutcome, err error) string {
			if reason := r.flinkReason(ctx, c, ns, name, o); reason != "" {
				return reason
			}
			// The operator's own words may carry Flink's refusal too (a job
			// that failed at restore: its JobInitializationException).
			return r.namedOperator(ctx, err.Error())
		}}
	if plan.shape().WaitsForCheckpoint() {
		ends.Checkpoint = func(jobID string) bool {
			return r.waitCheckpoint(ctx, c, &plan, base, jobID, done.At.Add(timeout), diags)
		}
	}
	end := w.Wait(ctx, r.meta.env(), done, &private.Marks, ends)
	if end.Removed {
		state.RemoveResource(ctx)
	}
	if end.Report != (kube.Report{}) {
		addReport(diags, "FlinkDeployment "+ns+"/"+name, end.Report)
	}
}

// render renders the object to write once (flinkdeploy.Want.Render) from
// what deriveWant derived, as the plan did: flinkConfiguration in the live
// object's shape, a carried final savepoint as the path the first
// deployment restores from, and the upgrade savepoint's annotation.
func (m *deploymentModel) render(ctx context.Context, op *deploymentOp, diags *diag.Diagnostics) (*unstructured.Unstructured, bool) {
	w, d, ok := m.deriveWant(ctx, op, diags)
	if !ok {
		return nil, false
	}
	obj, ok := w.Render(d, flinkdeploy.LiveConfiguration(op.Live), op.CarriedPath)
	if !ok || diags.HasError() {
		addProblem(diags, "Applying", "FlinkDeployment", "the deployment's configuration still holds unknown values at apply time",
			"Apply again once the values it depends on are known.")
		return nil, false
	}
	deployop.Annotate(obj, m.UpgradeSavepoint.ValueString())
	return obj, true
}

// addReport adds a domain report (kube.Report) about object: its warning,
// or its problem.
func addReport(diags *diag.Diagnostics, object string, rep kube.Report) {
	if rep.Warning != "" {
		diags.AddWarning(rep.Warning, rep.Detail)
		return
	}
	addProblem(diags, rep.Verb, object, rep.Detail, rep.Advice)
}

func (r *deploymentResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan deploymentModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := plan.Timeouts.Create(ctx, 10*time.Minute)
	resp.Diagnostics.Append(d...)
	r.verifyRestoreTarget(ctx, &plan, nil, timeout, &resp.Diagnostics)
	op := &deploymentOp{Write: deployop.Write{Create: true}}
	if p := plan.restorePath(); !p.IsNull() && !p.IsUnknown() {
		r.preflightPath(ctx, &plan, p.ValueString(), "job.initial_savepoint_path", true, false, timeout, &resp.Diagnostics)
	}
	if c := r.meta.kubeOrDiag(&resp.Diagnostics); c != nil && !resp.Diagnostics.HasError() {
		op.CarriedPath = r.findCarried(ctx, c, &plan, &resp.Diagnostics)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	plan.RedeployNonce, plan.UpgradeSavepoint = types.Int64Null(), types.StringNull()
	private := loadDeploymentPrivate(ctx, resp.Private, &resp.Diagnostics)
	defer private.save(ctx, resp.Private, &resp.Diagnostics)
	// What an imported predecessor left in private state is not this object's.
	private.forgetImport()
	if p := plan.restorePath(); !p.IsNull() {
		op.Restoring, op.RestoreFrom = true, p.ValueString()
	}
	if op.CarriedPath != "" {
		op.Restoring, op.RestoreFrom = true, op.CarriedPath
		if r.verifyCarried(ctx, &plan, op.CarriedPath, timeout, &resp.Diagnostics); resp.Diagnostics.HasError() {
			return
		}
		if r.preflightPath(ctx, &plan, op.CarriedPath, "the final savepoint of the deployment it replaces", true, true, timeout,
			&resp.Diagnostics); resp.Diagnostics.HasError() {
			return
		}
		plan.UpgradeSavepoint = types.StringValue(op.CarriedPath)
	}
	r.apply(ctx, plan, op, timeout, &resp.State, private, &resp.Diagnostics)
}

func (r *deploymentResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state deploymentModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := plan.Timeouts.Update(ctx, 10*time.Minute)
	resp.Diagnostics.Append(d...)
	if plan.RedeployNonce.IsUnknown() {
		plan.RedeployNonce = state.RedeployNonce
		if redeploys(&plan, &state) {
			plan.RedeployNonce = nextNonce(&state)
		}
	}
	private := loadDeploymentPrivate(ctx, req.Private, &resp.Diagnostics)
	defer private.save(ctx, resp.Private, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	// Never rewrite another object of that name (a plan made without
	// refresh, or a replacement since): only the UID this resource owns.
	live, rep, ok := deployop.StillOurs(ctx, r.meta.env(), state.Namespace.ValueString(), state.Name.ValueString(), private.UID)
	if !ok {
		addReport(&resp.Diagnostics, rep.Object, rep.Report)
		return
	}
	op := &deploymentOp{Unwritten: private.Unwritten, Live: live}
	// Nothing is changed unless the restore target is a completed snapshot
	// and the savepoint before the upgrade completed.
	r.verifyRestoreTarget(ctx, &plan, &state, timeout, &resp.Diagnostics)
	w, _, ok := plan.deriveWant(ctx, op, &resp.Diagnostics)
	if !ok {
		return
	}
	// The prior and planned desired deployments, converted once for the
	// apply's decisions (the pre-flight, the savepoint before the upgrade,
	// whether the wait is a restore's).
	prior, planned := state.desired(ctx, op.Unwritten), plan.desired(ctx, op.Unwritten)
	r.preflightRestore(ctx, &plan, &state, prior, planned, timeout, &resp.Diagnostics)
	if p := plan.restorePath(); redeploys(&plan, &state) && !p.IsUnknown() {
		r.preflightPath(ctx, &plan, p.ValueString(), "job.initial_savepoint_path, which this redeploy restores", false, false, timeout, &resp.Diagnostics)
	}
	if c := r.meta.kubeOrDiag(&resp.Diagnostics); c != nil && !resp.Diagnostics.HasError() {
		r.savepointBeforeUpgrade(ctx, c, &plan, &state, prior, planned, w.Input, &resp.Diagnostics)
	}
	op.Restoring, op.RestoreFrom = flinkdeploy.Restores(prior, planned)
	if !op.Restoring && private.Restoring && private.WaitPending != "" && plan.jobState() == "running" {
		op.Restoring, op.RestoreFrom = true, private.RestoreFrom
	}
	if !resp.Diagnostics.HasError() && private.Adopt && op.Live != nil {
		r.takeOwnership(ctx, &state, op, private, &resp.Diagnostics)
	}
	if resp.Diagnostics.HasError() {
		// The old spec keeps running: the state stays what it was.
		resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
		return
	}
	r.apply(ctx, plan, op, timeout, &resp.State, private, &resp.Diagnostics)
}

// takeOwnership, on the first update after an import, makes the provider
// the only owner of the fields it read from the object
// (deployop.TakeOwnership), with op.Live the object as it is afterwards.
func (r *deploymentResource) takeOwnership(ctx context.Context, state *deploymentModel, op *deploymentOp, private *deploymentPrivate, diags *diag.Diagnostics) {
	var d diag.Diagnostics
	spec, ok := state.spec(ctx, op.Unwritten, &d)
	if !ok || d.HasError() {
		return
	}
	ns, name := state.Namespace.ValueString(), state.Name.ValueString()
	t := deployop.TakeOwnership(ctx, r.meta.env(), ns, name, spec, state.UpgradeSavepoint.ValueString(), op.Live)
	if op.Live, private.Adopt = t.Live, private.Adopt && !t.Taken; t.Report != (kube.Report{}) {
		addReport(diags, "FlinkDeployment "+ns+"/"+name, t.Report)
	}
}

func (r *deploymentResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state deploymentModel
	if resp.Diagnostics.Append(req.State.Get(ctx, &state)...); resp.Diagnostics.HasError() {
		return
	}
	o := deployop.Observe(ctx, r.meta.env(), state.Namespace.ValueString(), state.Name.ValueString())
	switch {
	case o.Gone:
		resp.State.RemoveResource(ctx)
		return
	case o.Live == nil:
		addReport(&resp.Diagnostics, o.Report.Object, o.Report.Report)
		return
	case replacedOutsideTerraform(ctx, req, resp, "FlinkDeployment", o.Live):
		return
	}
	private := loadDeploymentPrivate(ctx, req.Private, &resp.Diagnostics)
	defer private.save(ctx, resp.Private, &resp.Diagnostics)
	imported := takeImported(ctx, req, resp)
	if imported {
		private.Unwritten, private.Adopt = flinkdeploy.AbsentDefaults(o.Live), true
	}
	was := state.shape()
	state.fromSpec(ctx, o.Live, imported, private.Unwritten, &resp.Diagnostics)
	if was.HasJob && was.RestorePath == "" && private.Carried != "" && state.shape().RestorePath == private.Carried {
		// Written by the create that carried a replaced deployment's state,
		// not by the configuration.
		state.Job.InitialSavepointPath = types.StringNull()
	}
	// Unset (an import): the defaults (flinkdeploy.Desired's).
	state.FinalSavepoint, state.DrainOnDestroy = types.BoolValue(was.FinalSavepoint), types.BoolValue(was.DrainOnDestroy)
	if o.UpgradeSavepoint != "" {
		state.UpgradeSavepoint = types.StringValue(o.UpgradeSavepoint)
	}
	state.setStatus(o.Status)
	private.RecordedSavepoint, private.FinalFailed = o.RecordedSavepoint, o.FinalFailed
	state.Timeouts = knownTimeouts(ctx, state.Timeouts)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *deploymentResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state deploymentModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	c := r.meta.kubeOrDiag(&resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := state.Timeouts.Delete(ctx, 10*time.Minute)
	resp.Diagnostics.Append(d...)
	private := loadDeploymentPrivate(ctx, req.Private, &resp.Diagnostics)
	if refuseSessionDelete(ctx, c, &state, timeout, &resp.Diagnostics) {
		return
	}
	if r.takeFinalSavepoint(ctx, c, &state, private.UID, private.CarryTo, timeout, &resp.Diagnostics); resp.Diagnostics.HasError() {
		return
	}
	deleteOwned(ctx, c, kube.FlinkDeploymentGVR, "FlinkDeployment", state.Namespace.ValueString(), state.Name.ValueString(), timeout, req, resp)
}

func (r *deploymentResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if importNamespaceName(ctx, req, resp) {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("wait_for"), "deployed")...)
		markImported(ctx, resp)
	}
}
