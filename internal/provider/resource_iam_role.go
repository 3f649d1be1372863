package provider

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/iampolicy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/iamrole"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

// inlinePolicyName is the role's one inline policy, owned by this provider.
const inlinePolicyName = iamrole.InlinePolicyName

type iamRoleResource struct{ resourceBase }

var (
	_ resource.ResourceWithConfigure        = (*iamRoleResource)(nil)
	_ resource.ResourceWithConfigValidators = (*iamRoleResource)(nil)
	_ resource.ResourceWithImportState      = (*iamRoleResource)(nil)
	_ resource.ResourceWithModifyPlan       = (*iamRoleResource)(nil)
)

func newIAMRoleResource() resource.Resource { return &iamRoleResource{} }

type iamRoleModel struct {
	ID              types.String      `tfsdk:"id"`
	Name            types.String      `tfsdk:"name"`
	Description     types.String      `tfsdk:"description"`
	IRSA            *irsaModel        `tfsdk:"irsa"`
	PodIdentity     *podIdentityModel `tfsdk:"pod_identity"`
	StateStoreIDs   types.List        `tfsdk:"state_store_ids"`
	KMSKeyARNs      types.List        `tfsdk:"kms_key_arns"`
	Tags            types.Map         `tfsdk:"tags"`
	TagsAll         types.Map         `tfsdk:"tags_all"`
	ARN             types.String      `tfsdk:"arn"`
	PolicyJSON      types.String      `tfsdk:"policy_json"`
	TrustPolicyJSON types.String      `tfsdk:"trust_policy_json"`
	ExtraPolicies   types.List        `tfsdk:"extra_policies"`
	Timeouts        timeouts.Value    `tfsdk:"timeouts"`
}

type irsaModel struct {
	OIDCProviderARN types.String `tfsdk:"oidc_provider_arn"`
	Namespace       types.String `tfsdk:"namespace"`
	ServiceAccount  types.String `tfsdk:"service_account"`
}

type podIdentityModel struct {
	Namespace      types.String `tfsdk:"namespace"`
	ServiceAccount types.String `tfsdk:"service_account"`
	ClusterName    types.String `tfsdk:"cluster_name"`
}

func (r *iamRoleResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_iam_role"
}

func (r *iamRoleResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	requiredString := func(r blockRequired, desc string, v ...validator.String) schema.StringAttribute {
		return schema.StringAttribute{Optional: true, Description: r.doc(desc), Validators: v}
	}
	resp.Schema = schema.Schema{
		Description: "An IAM role for Flink pods whose trust policy admits exactly one ServiceAccount, through IRSA (`irsa`) or " +
			"EKS Pod Identity (`pod_identity`), and whose inline policy grants least privilege on the given state stores: list, " +
			"read, write, delete and multipart under each store's prefix only, plus KMS through S3 when `kms_key_arns` is set. " +
			"The documents are computed at plan time and shown in `policy_json` and `trust_policy_json`.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true, Description: "The role name.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"name": schema.StringAttribute{
				Required:      true,
				Description:   "Role name: at most 64 characters of letters, digits and +=,.@_-. Changing it replaces the role.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:    []validator.String{roleNameCheck},
			},
			"description": schema.StringAttribute{Optional: true, Description: "Role description.",
				Validators: []validator.String{stringvalidator.LengthAtMost(1000)}},
			"state_store_ids": schema.ListAttribute{
				Required:    true,
				ElementType: types.StringType,
				Description: "IDs (`bucket/prefix`) of the state stores the role may use, e.g. [flinkstate_state_store.orders.id].",
				Validators: []validator.List{
					listvalidator.SizeAtLeast(1),
					listvalidator.UniqueValues(),
					listvalidator.ValueStringsAre(storeIDCheck),
				},
			},
			"kms_key_arns": schema.ListAttribute{
				Optional:    true,
				ElementType: types.StringType,
				Description: "KMS keys of SSE-KMS buckets: kms:GenerateDataKey and kms:Decrypt, only through S3 in the key's region. Each in the partition of the provider's region and of irsa.oidc_provider_arn (aws, aws-cn, aws-us-gov are separate IAM instances).",
				Validators:  []validator.List{listvalidator.ValueStringsAre(kmsKeyARNCheck)},
			},
			"tags":     schema.MapAttribute{Optional: true, ElementType: types.StringType, Description: "Tags of the role. The provider's aws.default_tags are added; these tags win over a default tag with the same key.", Validators: []validator.Map{awsTagsCheck}},
			"tags_all": tagsAllAttribute(),
			"arn": schema.StringAttribute{Computed: true, Description: "ARN of the role (for flinkstate_service_account.irsa_role_arn or a Pod Identity association).",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"policy_json":       schema.StringAttribute{Computed: true, Description: "The inline permission policy, as planned and applied."},
			"trust_policy_json": schema.StringAttribute{Computed: true, Description: "The trust policy, as planned and applied."},
			"extra_policies": schema.ListAttribute{Computed: true, ElementType: types.StringType,
				Description: "Policies on the role that this resource did not put there: `inline:NAME` and `attached:ARN`. Always planned " +
					"empty: the role's policies are managed exclusively, as hashicorp/aws's aws_iam_role_policies_exclusive and " +
					"aws_iam_role_policy_attachments_exclusive do, so one added outside Terraform shows in the next plan and apply " +
					"removes (detaches) it."},
		},
		Blocks: map[string]schema.Block{
			"irsa": schema.SingleNestedBlock{
				Description: iamRoleTrust.doc("Trust for IRSA: the cluster's OIDC provider may issue web identity tokens for exactly system:serviceaccount:NAMESPACE:SERVICE_ACCOUNT (audience sts.amazonaws.com)."),
				Attributes: map[string]schema.Attribute{
					"oidc_provider_arn": requiredString(irsaRequired, "ARN of the cluster's IAM OIDC provider (arn:aws:iam::ACCOUNT:oidc-provider/oidc.eks.REGION.amazonaws.com/id/ID), in the partition of the provider's region, where the permission policy's ARNs are built, and of kms_key_arns.", oidcARNCheck),
					"namespace":         requiredString(irsaRequired, "Namespace of the ServiceAccount.", namespaceValidators()...),
					"service_account":   requiredString(irsaRequired, "Name of the ServiceAccount.", objectNameValidators()...),
				},
				Validators: []validator.Object{irsaRequired.object()},
			},
			"pod_identity": schema.SingleNestedBlock{
				Description: iamRoleTrust.doc("Trust for EKS Pod Identity: pods.eks.amazonaws.com may assume the role and tag the session, for this namespace and ServiceAccount (and cluster, when named) only."),
				Attributes: map[string]schema.Attribute{
					"namespace":       requiredString(podIdentityRequired, "Namespace of the ServiceAccount.", namespaceValidators()...),
					"service_account": requiredString(podIdentityRequired, "Name of the ServiceAccount.", objectNameValidators()...),
					"cluster_name": schema.StringAttribute{Optional: true, Description: "EKS cluster name; when set, only sessions tagged with it are admitted.",
						Validators: []validator.String{clusterNameCheck}},
				},
				Validators: []validator.Object{podIdentityRequired.object()},
			},
			"timeouts": timeoutsBlock(ctx, timeouts.Opts{Create: true, Read: true, Update: true, Delete: true},
				"create, update and delete retry IAM's eventual consistency within these limits (default 2m); read bounds refresh and import (default 30s)"),
		},
	}
	markdownDescriptions(&resp.Schema)
}

// iamRoleTrust: the trust policy admits one ServiceAccount, by one mechanism.
var iamRoleTrust = exactlyOneOf("irsa", "pod_identity")

// What each trust block needs whenever it is present.
var (
	irsaRequired        = requiredInBlock("irsa", "oidc_provider_arn", "namespace", "service_account")
	podIdentityRequired = requiredInBlock("pod_identity", "namespace", "service_account")
)

func (r *iamRoleResource) ConfigValidators(context.Context) []resource.ConfigValidator {
	return []resource.ConfigValidator{
		iamRoleTrust.resource(),
		rolePartitions{},
	}
}

// documents computes the trust and permission policies of a model, with
// ARNs in the provider's partition. ok is false when some input is still
// unknown.
func (m *iamRoleModel) documents(ctx context.Context, pm *meta, diags *diag.Diagnostics) (trust, perm string, ok bool) {
	ids, idsKnown := knownStrings(ctx, m.StateStoreIDs, diags)
	keys, keysKnown := knownStrings(ctx, m.KMSKeyARNs, diags)
	partition, partitionKnown := pm.Partition(ctx)
	if !idsKnown || !keysKnown || !partitionKnown || diags.HasError() {
		return "", "", false
	}
	var stores []store.Store
	for _, id := range ids {
		s, err := store.Parse(id)
		if err != nil {
			diags.AddAttributeError(path.Root("state_store_ids"), "Invalid state store ID", err.Error())
			return "", "", false
		}
		stores = append(stores, s)
	}
	doc, err := iampolicy.Permissions(partition, stores, keys)
	if err != nil {
		diags.AddAttributeError(path.Root("state_store_ids"), "Permission policy not possible", err.Error())
		return "", "", false
	}
	switch {
	case m.IRSA != nil:
		if anyUnknown(m.IRSA.OIDCProviderARN, m.IRSA.Namespace, m.IRSA.ServiceAccount) {
			return "", "", false
		}
		t, err := iampolicy.IRSATrust(m.IRSA.OIDCProviderARN.ValueString(), m.IRSA.Namespace.ValueString(), m.IRSA.ServiceAccount.ValueString())
		if err != nil {
			diags.AddAttributeError(path.Root("irsa").AtName("oidc_provider_arn"), "Invalid OIDC provider", err.Error())
			return "", "", false
		}
		trust = t.JSON()
	case m.PodIdentity != nil:
		if anyUnknown(m.PodIdentity.Namespace, m.PodIdentity.ServiceAccount, m.PodIdentity.ClusterName) {
			return "", "", false
		}
		trust = iampolicy.PodIdentityTrust(m.PodIdentity.Namespace.ValueString(), m.PodIdentity.ServiceAccount.ValueString(),
			m.PodIdentity.ClusterName.ValueString()).JSON()
	default:
		return "", "", false
	}
	return trust, doc.JSON(), true
}

// ModifyPlan shows the documents at plan time, and turns a policy over
// IAM's size limit into a plan error, before any API call.
func (r *iamRoleResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan iamRoleModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	r.rolePlanChecks(ctx, plan, &resp.Diagnostics)
	plan.TagsAll = r.meta.planTagsAll(ctx, plan.Tags, &resp.Diagnostics)
	trust, perm, ok := plan.documents(ctx, r.meta, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if ok {
		plan.TrustPolicyJSON, plan.PolicyJSON = types.StringValue(trust), types.StringValue(perm)
	} else {
		plan.TrustPolicyJSON, plan.PolicyJSON = types.StringUnknown(), types.StringUnknown()
	}
	plan.ExtraPolicies = emptyList()
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

func (r *iamRoleResource) iam(ctx context.Context, diags *diag.Diagnostics) *iam.Client {
	if c := r.meta.awsOrDiag(ctx, diags); c != nil {
		return c.IAM
	}
	return nil
}

func (r *iamRoleResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan iamRoleModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	timeout, d := plan.Timeouts.Create(ctx, 2*time.Minute)
	resp.Diagnostics.Append(d...)
	ctx, cancel := r.meta.boundAWS(ctx, timeout)
	defer cancel()
	cl := r.iam(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	trust, perm, _ := plan.documents(ctx, r.meta, &resp.Diagnostics)
	tags := stringMap(ctx, plan.TagsAll, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	name := plan.Name.ValueString()
	arn, err := iamrole.Create(ctx, cl, name, trust, plan.Description.ValueString(), tags, timeout)
	if iamrole.IsAlreadyExists(err) {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "IAM role already exists", alreadyExists("IAM role "+name, name))
		return
	}
	if err != nil {
		addProblem(&resp.Diagnostics, "Creating", "IAM role "+name, awsErr(ctx, err),
			"If the role was created nonetheless, the next apply refuses to adopt it and gives the import command.")
		return
	}
	plan.ID = types.StringValue(name)
	plan.ARN = types.StringValue(arn)
	plan.TrustPolicyJSON, plan.PolicyJSON = types.StringValue(trust), types.StringNull()
	plan.ExtraPolicies = emptyList()
	// The role exists: record it before the next call, so a failure leaves a
	// tainted resource Terraform knows about rather than an orphan.
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	if err := iamrole.PutPolicy(ctx, cl, name, perm, timeout); err != nil {
		addProblem(&resp.Diagnostics, "Attaching the state policy to", "IAM role "+name, awsErr(ctx, err), "")
		return
	}
	plan.PolicyJSON = types.StringValue(perm)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *iamRoleResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state iamRoleModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	timeout, d := state.Timeouts.Read(ctx, awsReadBound)
	resp.Diagnostics.Append(d...)
	ctx, cancel := r.meta.boundAWS(ctx, timeout)
	defer cancel()
	cl := r.iam(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	name := state.ID.ValueString()
	role, err := iamrole.Read(ctx, cl, name)
	if notfound.Is(err) { // the role itself: IAM answered NoSuchEntity
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		addProblem(&resp.Diagnostics, "Reading", "IAM role "+name, awsErr(ctx, err), "")
		return
	}
	state.Name = types.StringValue(name)
	state.ARN = types.StringValue(role.ARN)
	if role.Description != "" || !state.Description.IsNull() {
		state.Description = optionalString(role.Description)
	}
	if !iampolicy.Equivalent(role.Trust, state.TrustPolicyJSON.ValueString()) {
		state.TrustPolicyJSON = types.StringValue(role.Trust)
	}
	// On import the blocks come from the trust policy itself.
	if state.IRSA == nil && state.PodIdentity == nil {
		switch t := iampolicy.ParseTrust(role.Trust); t.Kind {
		case "irsa":
			state.IRSA = &irsaModel{OIDCProviderARN: types.StringValue(t.OIDCProviderARN),
				Namespace: types.StringValue(t.Namespace), ServiceAccount: types.StringValue(t.ServiceAccount)}
		case "pod_identity":
			state.PodIdentity = &podIdentityModel{Namespace: types.StringValue(t.Namespace),
				ServiceAccount: types.StringValue(t.ServiceAccount), ClusterName: optionalString(t.ClusterName)}
		}
	}
	switch {
	case role.Policy == "":
		state.PolicyJSON = types.StringValue("") // removed out of band: the plan puts it back
	case !iampolicy.Equivalent(role.Policy, state.PolicyJSON.ValueString()):
		state.PolicyJSON = types.StringValue(role.Policy)
	}
	if role.Policy != "" && state.StateStoreIDs.IsNull() {
		stores, keys := iampolicy.ParseGrants(role.Policy)
		state.StateStoreIDs, _ = types.ListValueFrom(ctx, types.StringType, stores)
		if len(keys) > 0 {
			state.KMSKeyARNs, _ = types.ListValueFrom(ctx, types.StringType, keys)
		}
	}
	state.Tags, state.TagsAll = r.meta.readTags(ctx, role.Tags, state.Tags, &resp.Diagnostics)
	state.ExtraPolicies = listOfStrings(role.Extra)
	state.Timeouts = knownTimeouts(ctx, state.Timeouts)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *iamRoleResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state iamRoleModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	timeout, d := plan.Timeouts.Update(ctx, 2*time.Minute)
	resp.Diagnostics.Append(d...)
	ctx, cancel := r.meta.boundAWS(ctx, timeout)
	defer cancel()
	cl := r.iam(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	trust, perm, _ := plan.documents(ctx, r.meta, &resp.Diagnostics)
	var extra []string
	resp.Diagnostics.Append(state.ExtraPolicies.ElementsAs(ctx, &extra, false)...)
	oldTags, wantTags := stringMap(ctx, state.TagsAll, &resp.Diagnostics), stringMap(ctx, plan.TagsAll, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	name := state.ID.ValueString()
	steps := []struct {
		what string
		do   bool
		run  func() error
	}{
		{"Updating the trust policy of", !iampolicy.Equivalent(trust, state.TrustPolicyJSON.ValueString()),
			func() error { return iamrole.UpdateTrust(ctx, cl, name, trust, timeout) }},
		{"Updating the state policy of", !iampolicy.Equivalent(perm, state.PolicyJSON.ValueString()),
			func() error { return iamrole.PutPolicy(ctx, cl, name, perm, timeout) }},
		{"Updating the description of", !plan.Description.Equal(state.Description),
			func() error { return iamrole.UpdateDescription(ctx, cl, name, plan.Description.ValueString()) }},
		{"Tagging", !plan.TagsAll.Equal(state.TagsAll),
			func() error { return iamrole.SyncTags(ctx, cl, name, oldTags, wantTags) }},
		{"Removing policies added outside Terraform from", len(extra) > 0,
			func() error { return iamrole.RemoveExtra(ctx, cl, name, extra) }},
	}
	for _, s := range steps {
		if !s.do {
			continue
		}
		if err := s.run(); err != nil {
			addProblem(&resp.Diagnostics, s.what, "IAM role "+name, awsErr(ctx, err), "")
			return
		}
	}
	plan.ID, plan.ARN = state.ID, state.ARN
	plan.TrustPolicyJSON, plan.PolicyJSON = types.StringValue(trust), types.StringValue(perm)
	plan.ExtraPolicies = emptyList()
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *iamRoleResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state iamRoleModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	timeout, d := state.Timeouts.Delete(ctx, 2*time.Minute)
	resp.Diagnostics.Append(d...)
	ctx, cancel := r.meta.boundAWS(ctx, timeout)
	defer cancel()
	cl := r.iam(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	name := state.ID.ValueString()
	if err := iamrole.Delete(ctx, cl, name, timeout); err != nil {
		addProblem(&resp.Diagnostics, "Deleting", "IAM role "+name, awsErr(ctx, err), "")
	}
}

func (r *iamRoleResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resource.ImportStatePassthroughID(ctx, path.Root("id"), req, resp)
}
