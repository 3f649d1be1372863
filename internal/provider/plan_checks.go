package provider

import (
	"context"
	"fmt"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/iampolicy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

// Plan-time checks that need more than one attribute. Rules about a single
// resource run in ValidateConfig (terraform validate, and again at plan
// with the values other resources' plans made known); rules that relate
// two resources of the same configuration use what this provider instance
// planned earlier in the same run (planned: a ServiceAccount's IRSA role,
// a deployment's identity and savepoint directory). Terraform plans a
// resource after those it references, so a reference
// (service_account = flinkstate_service_account.x.name) is what makes the
// relation visible at plan; without one, the same rule runs at apply,
// before anything is written.

var (
	kmsKeyOrAliasARNCheck = check("Invalid KMS key ARN", "a KMS key or alias ARN", iampolicy.ValidateKMSKeyOrAliasARN)
	deploymentNameCheck   = check("Invalid name", "a DNS-1123 label of at most 45 characters", kube.ValidateDeploymentName)
)

// deploymentChecks runs flinkconf's checks on a whole deployment at
// validate time (errors only: warnings come once, from ModifyPlan).
type deploymentChecks struct{}

func (deploymentChecks) Description(context.Context) string {
	return "the combination of attributes can run (flinkconf's checks)"
}
func (v deploymentChecks) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }
func (deploymentChecks) ValidateResource(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m deploymentModel
	if d := req.Config.Get(ctx, &m); d.HasError() {
		return
	}
	checkSensitiveKeys(m, &resp.Diagnostics)
	var diags diag.Diagnostics
	in, ok := m.input(ctx, &diags)
	if !ok || diags.HasError() || m.PodTemplate.IsUnknown() {
		return
	}
	_, fs := flinkconf.Derive(in)
	_, pfs := flinkconf.PodTemplate(m.PodTemplate.ValueString(), in)
	addFindings(&resp.Diagnostics, errorsOnly(append(fs, pfs...)))
}

// checkSensitiveKeys: a secret in flink_configuration is shown in plans
// (a warning); a key in both maps is an error.
func checkSensitiveKeys(m deploymentModel, diags *diag.Diagnostics) {
	sens := m.SensitiveConfig.Elements()
	for k := range m.FlinkConfiguration.Elements() {
		if _, both := sens[k]; both {
			diags.AddAttributeError(path.Root("flink_configuration").AtMapKey(k), "Key set twice",
				fmt.Sprintf("%q is in both flink_configuration and sensitive_flink_configuration: keep it in one (a secret in "+
					"sensitive_flink_configuration).", k))
		} else if flinkconf.IsSensitiveKey(k) {
			diags.AddAttributeWarning(path.Root("flink_configuration").AtMapKey(k), "Secret shown in plans",
				fmt.Sprintf("Flink treats %q as a secret (GlobalConfiguration.isSensitive), but flink_configuration shows it in "+
					"plans and in effective_flink_configuration: move it to sensitive_flink_configuration.", k))
		}
	}
}

func errorsOnly(fs []flinkconf.Finding) []flinkconf.Finding {
	var out []flinkconf.Finding
	for _, f := range fs {
		if f.Severity == flinkconf.Error {
			out = append(out, f)
		}
	}
	return out
}

// flinkConfigurationChecks is deploymentChecks for the data source.
type flinkConfigurationChecks struct{}

func (flinkConfigurationChecks) Description(context.Context) string {
	return "the combination of attributes can run (flinkconf's checks)"
}
func (v flinkConfigurationChecks) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}
func (flinkConfigurationChecks) ValidateDataSource(ctx context.Context, req datasource.ValidateConfigRequest, resp *datasource.ValidateConfigResponse) {
	var m flinkConfigurationModel
	if d := req.Config.Get(ctx, &m); d.HasError() {
		return
	}
	if anyUnknown(m.FlinkVersion, m.Identity, m.UpgradeMode, m.HighAvailability, m.TaskSlots, m.FlinkConfiguration, m.PodTemplate) || m.State.unknown() {
		return
	}
	var diags diag.Diagnostics
	in := m.input(ctx, &diags)
	if diags.HasError() {
		return
	}
	_, fs := flinkconf.Derive(in)
	_, pfs := flinkconf.PodTemplate(m.PodTemplate.ValueString(), in)
	addFindings(&resp.Diagnostics, errorsOnly(append(fs, pfs...)))
}

// planned is what this provider instance planned so far in this run.
type planned struct {
	mu sync.Mutex
	// irsa: ServiceAccounts (namespace/name) planned with irsa_role_arn.
	irsa map[string]bool
	// podIdentity: ServiceAccounts that get credentials through Pod
	// Identity, with the attribute that said so (for the message).
	podIdentity map[string]string
	// deployments: namespace/name -> what snapshots need to know.
	deployments map[string]plannedDeployment
	// stores: the state stores planned, as their s3:// URI.
	stores []plannedStore
}

type plannedStore struct {
	dir      store.Dir
	creating bool
	// replacing: registered by the first plan of a replace (prior state
	// with another bucket or prefix); terraform plans the replacement's
	// create again with no prior state, and that second plan is this
	// same store, not another one on its prefix.
	replacing bool
}

type plannedDeployment struct {
	savepointDir string // "" when none
	storeURI     string // s3://bucket/prefix with state.store_id, else ""
}

var plans sync.Map // *meta -> *planned

func (m *meta) planned() *planned {
	if m == nil {
		return &planned{}
	}
	p, _ := plans.LoadOrStore(m, &planned{irsa: map[string]bool{}, podIdentity: map[string]string{}, deployments: map[string]plannedDeployment{}})
	return p.(*planned) //nolint:forcetypeassert // plans holds only *planned
}

func known(vs ...types.String) bool {
	for _, v := range vs {
		if v.IsNull() || v.IsUnknown() {
			return false
		}
	}
	return true
}

// irsaConflictDetail explains rule 6: the AWS SDK for Java v1 that the
// Hadoop S3 plugin bundles tries web identity (IRSA) before container
// credentials (Pod Identity) in DefaultAWSCredentialsProviderChain, so an
// IRSA annotation on the account silently wins. (The plugin bundles
// aws-java-sdk-core 1.12.779, flink-s3-fs-hadoop's META-INF/NOTICE in Flink
// 2.2.1; its DefaultAWSCredentialsProviderChain tries environment variables,
// system properties, WebIdentityTokenCredentialsProvider and profiles
// before EC2ContainerCredentialsProviderWrapper.)
const irsaConflictDetail = "The ServiceAccount %s carries the IRSA annotation " + kube.IRSAAnnotation + " (irsa_role_arn), and %s gives its pods " +
	"EKS Pod Identity. The AWS SDK for Java v1 in Flink's S3 plugin takes web identity credentials before container credentials, so the " +
	"pods would run as the IRSA role, not the Pod Identity one. Use one mechanism: remove irsa_role_arn, or use identity = \"irsa\" " +
	"without a Pod Identity association."

// ModifyPlan records an IRSA ServiceAccount and refuses it when this run
// already gives the same account Pod Identity.
func (r *serviceAccountResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan serviceAccountModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() || !known(plan.Namespace, plan.Name) || plan.IRSARoleARN.IsNull() {
		return
	}
	key := plan.Namespace.ValueString() + "/" + plan.Name.ValueString()
	p := r.meta.planned()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.irsa[key] = true
	if by, ok := p.podIdentity[key]; ok {
		resp.Diagnostics.AddAttributeError(path.Root("irsa_role_arn"), "IRSA and Pod Identity on the same ServiceAccount",
			fmt.Sprintf(irsaConflictDetail, key, by))
	}
}

// podIdentityUser records that a ServiceAccount gets Pod Identity and
// reports a conflict with an IRSA ServiceAccount planned earlier.
func (r *resourceBase) podIdentityUser(ns, sa types.String, by string, at path.Path, diags *diag.Diagnostics) {
	if !known(ns, sa) {
		return
	}
	key := ns.ValueString() + "/" + sa.ValueString()
	p := r.meta.planned()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.podIdentity[key] = by
	if p.irsa[key] {
		diags.AddAttributeError(at, "IRSA and Pod Identity on the same ServiceAccount", fmt.Sprintf(irsaConflictDetail, key, by))
	}
}

// ModifyPlan of the association: the IRSA conflict (rule 6).
func (r *podIdentityAssociationResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan podIdentityAssociationModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	r.podIdentityUser(plan.Namespace, plan.ServiceAccount, "a flinkstate_pod_identity_association", path.Root("service_account"), &resp.Diagnostics)
	plan.TagsAll = r.meta.planTagsAll(ctx, plan.Tags, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

// planDeployment records a deployment for the checks of later resources
// and runs its own cross-resource checks.
func (r *deploymentResource) planDeployment(plan deploymentModel, in flinkconf.Input, diags *diag.Diagnostics) {
	if plan.Identity.ValueString() == "pod_identity" {
		r.podIdentityUser(plan.Namespace, plan.ServiceAccount, "identity = \"pod_identity\" on flinkstate_deployment "+plan.Name.ValueString(),
			path.Root("identity"), diags)
	}
	if !known(plan.Namespace, plan.Name) {
		return
	}
	p := r.meta.planned()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.deployments[plan.Namespace.ValueString()+"/"+plan.Name.ValueString()] = plannedDeployment{savepointDir: in.State.SavepointDir, storeURI: in.State.StoreURI}
}

// checkSnapshotPlan: a savepoint needs a directory (target_dir or the
// deployment's savepoint dir: the operator fails the snapshot otherwise,
// FlinkStateSnapshot docs: "if not set, the savepoint directory of the
// FlinkDeployment is used"), and with a state store, target_dir inside it.
func (r *snapshotResource) checkSnapshotPlan(plan snapshotModel, diags *diag.Diagnostics) {
	if plan.Type.ValueString() != "savepoint" || plan.AlreadyExists.ValueBool() || !known(plan.Namespace, plan.DeploymentName) || plan.TargetDir.IsUnknown() {
		return
	}
	p := r.meta.planned()
	p.mu.Lock()
	d, ok := p.deployments[plan.Namespace.ValueString()+"/"+plan.DeploymentName.ValueString()]
	p.mu.Unlock()
	if !ok {
		return
	}
	if plan.TargetDir.IsNull() {
		if d.savepointDir == "" {
			diags.AddAttributeError(path.Root("target_dir"), "Savepoint without a directory", fmt.Sprintf(
				"flinkstate_deployment %s has no savepoint directory (state.savepoint_dir or state.store_id) and this savepoint sets no "+
					"target_dir: the operator would fail it. Set target_dir, or give the deployment a savepoint directory.", plan.DeploymentName.ValueString()))
		}
		return
	}
	if d.storeURI == "" {
		return
	}
	target, err1 := store.ParseDir(plan.TargetDir.ValueString())
	store, err2 := store.ParseDir(d.storeURI)
	if err1 == nil && err2 == nil && !target.Within(store) {
		diags.AddAttributeError(path.Root("target_dir"), "Savepoint directory outside the state store", fmt.Sprintf(
			"target_dir %s is outside %s, the state store of flinkstate_deployment %s: its role grants access to the store's prefix only, "+
				"so the savepoint would fail. Choose a directory under %s/ (e.g. its savepoints/), or leave target_dir unset.",
			plan.TargetDir.ValueString(), d.storeURI, plan.DeploymentName.ValueString(), d.storeURI))
	}
}

// checkIdentityAtApply is rule 6 at apply, for a ServiceAccount this
// configuration does not plan: before the FlinkDeployment is written, a
// pod_identity deployment's ServiceAccount must not carry the IRSA
// annotation. A missing account is left to the operator's own error.
func checkIdentityAtApply(ctx context.Context, c *kube.Client, plan deploymentModel, diags *diag.Diagnostics) {
	if plan.Identity.ValueString() != "pod_identity" {
		return
	}
	ns, sa := plan.Namespace.ValueString(), plan.ServiceAccount.ValueString()
	live, err := c.Dynamic.Resource(kube.ServiceAccountGVR).Namespace(ns).Get(ctx, sa, metav1.GetOptions{})
	if err != nil {
		if !notfound.Is(kube.NotFound("ServiceAccount "+ns+"/"+sa, err)) {
			addProblem(diags, "Reading", "ServiceAccount "+ns+"/"+sa, readableAPIError(err), "Nothing was written.")
		}
		return
	}
	if _, ok := live.GetAnnotations()[kube.IRSAAnnotation]; ok {
		diags.AddAttributeError(path.Root("identity"), "IRSA and Pod Identity on the same ServiceAccount",
			fmt.Sprintf(irsaConflictDetail, ns+"/"+sa, "identity = \"pod_identity\"")+" Nothing was written.")
	}
}

// checkSavepointDirAtApply: a savepoint without target_dir needs the
// deployment's savepoint directory; checked on the live FlinkDeployment
// before the FlinkStateSnapshot is created, when the plan could not see it.
func checkSavepointDirAtApply(ctx context.Context, c *kube.Client, plan snapshotModel, diags *diag.Diagnostics) {
	if plan.Type.ValueString() != "savepoint" || plan.AlreadyExists.ValueBool() || !plan.TargetDir.IsNull() {
		return
	}
	ns, name := plan.Namespace.ValueString(), plan.DeploymentName.ValueString()
	live, err := c.Dynamic.Resource(kube.FlinkDeploymentGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return // a missing deployment is reported by the operator's own status
	}
	raw, _, _ := unstructured.NestedFieldNoCopy(live.Object, "spec", "flinkConfiguration")
	conf, _ := flinkdeploy.FlattenConfiguration(raw)
	// execution.checkpointing.savepoint-dir or a deprecated name
	// (CheckpointingOptions.SAVEPOINT_DIRECTORY), nested or flat.
	if v, _, _ := flinkconf.Lookup(conf, "execution.checkpointing.savepoint-dir"); v != "" {
		return
	}
	diags.AddAttributeError(path.Root("target_dir"), "Savepoint without a directory", fmt.Sprintf(
		"FlinkDeployment %s/%s has no savepoint directory (execution.checkpointing.savepoint-dir) and this savepoint sets no target_dir: "+
			"the operator would fail it. Set target_dir, or give the deployment a savepoint directory. Nothing was created.", ns, name))
}

// providerRegion is the region the provider's AWS clients use when it is
// known without any API call (the provider block, the environment or the
// shared config, as the partition is derived); "" when unknown.
func (m *meta) providerRegion(ctx context.Context) string {
	if m == nil || m.regionUnknown {
		return ""
	}
	region, err := m.awsCfg.ResolveRegion(ctx)
	if err != nil {
		return ""
	}
	return region
}

// bucketPlanChecks: a KMS key of another region than the bucket's cannot
// encrypt it (S3 User Guide, "Specifying server-side encryption with AWS
// KMS": the key must be in the same Region as the bucket), and
// enforce_tls = false lets requests reach the state over plain HTTP.
func (r *bucketResource) bucketPlanChecks(ctx context.Context, req resource.ModifyPlanRequest, diags *diag.Diagnostics) {
	var kms types.String
	var tls types.Bool
	diags.Append(req.Plan.GetAttribute(ctx, path.Root("kms_key_arn"), &kms)...)
	diags.Append(req.Plan.GetAttribute(ctx, path.Root("enforce_tls"), &tls)...)
	if !tls.IsNull() && !tls.IsUnknown() && !tls.ValueBool() {
		diags.AddAttributeWarning(path.Root("enforce_tls"), "TLS not enforced",
			"enforce_tls = false removes the bucket policy that denies requests not made over TLS: checkpoints and savepoints could "+
				"then be read or written over plain HTTP. Keep enforce_tls = true unless a client truly cannot use TLS.")
	}
	if !known(kms) {
		return
	}
	key, err := iampolicy.ParseKMSARN(kms.ValueString())
	if region := r.meta.providerRegion(ctx); err == nil && region != "" && key.Region != region {
		diags.AddAttributeError(path.Root("kms_key_arn"), "KMS key in another region", fmt.Sprintf(
			"kms_key_arn is a key in %s, but the bucket is created in %s (the provider's region): S3 default encryption needs a key of "+
				"the bucket's region. Use a key (or a multi-Region replica) in %s.", key.Region, region, region))
	}
}

// rolePlanChecks: a Pod Identity trust without cluster_name admits the
// namespace and ServiceAccount of every cluster in the account.
func rolePlanChecks(plan iamRoleModel, diags *diag.Diagnostics) {
	if pi := plan.PodIdentity; pi != nil && pi.ClusterName.IsNull() {
		diags.AddAttributeWarning(path.Root("pod_identity").AtName("cluster_name"), "Pod Identity trust for any cluster",
			"Without cluster_name the trust policy admits this namespace and ServiceAccount in every EKS cluster of the account: "+
				"any cluster with a matching association could assume the role. Set cluster_name to the cluster the job runs in.")
	}
}

// planStore refuses a state store whose prefix is, or lies in or around,
// another store planned in this run: one store's force_destroy and
// ownership marker would reach the other's checkpoints (rule 4). Stores
// made elsewhere are checked against S3 at apply.
//
// replacing is a plan whose prior state has another bucket or prefix: a new
// store on the new prefix (checked as a create). Terraform then plans the
// replacement's create once more with no prior state (the Terraform
// plugin protocol: a planned replace is a delete plus a create, planned as
// such); that plan matches the replacing entry and is not taken for another
// store on the same prefix.
func (r *stateStoreResource) planStore(bucket, prefix types.String, creating, replacing bool, diags *diag.Diagnostics) {
	if !known(bucket, prefix) {
		return
	}
	d, err := store.ParseDir("s3://" + bucket.ValueString() + "/" + prefix.ValueString())
	if err != nil {
		return
	}
	p := r.meta.planned()
	p.mu.Lock()
	defer p.mu.Unlock()
	if creating {
		for i, o := range p.stores {
			if o.replacing && o.dir == d {
				p.stores[i].replacing = false
				return
			}
		}
	}
	creating = creating || replacing
	for _, o := range p.stores {
		// Stores both already in the state are left alone: the rule
		// stops new nesting, it does not block plans of existing stores.
		if d.Overlaps(o.dir) && (creating || o.creating) {
			diags.AddAttributeError(path.Root("prefix"), "State stores must not be nested", fmt.Sprintf(
				"%s and %s, another state store of this configuration, are the same or nested: destroying one with force_destroy "+
					"would delete the other's checkpoints and savepoints, and the other's role could reach this one's state. Give each "+
					"application a prefix of its own that neither contains nor lies under another's (e.g. flink/orders and flink/payments).",
				d, o.dir))
			return
		}
	}
	p.stores = append(p.stores, plannedStore{dir: d, creating: creating, replacing: replacing})
}
