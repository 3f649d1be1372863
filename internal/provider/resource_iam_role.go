package provider

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/resourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/awsclient"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/iampolicy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

// inlinePolicyName is the role's one inline policy, owned by this provider.
const inlinePolicyName = "flinkstate-state-access"

type iamRoleResource struct{ resourceBase }

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
	requiredString := func(desc string, v ...validator.String) schema.StringAttribute {
		return schema.StringAttribute{Optional: true, Description: desc, Validators: v}
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
				Description: "KMS keys of SSE-KMS buckets: kms:GenerateDataKey and kms:Decrypt, only through S3 in the key's region.",
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
				Description: "Trust for IRSA: the cluster's OIDC provider may issue web identity tokens for exactly system:serviceaccount:NAMESPACE:SERVICE_ACCOUNT (audience sts.amazonaws.com).",
				Attributes: map[string]schema.Attribute{
					"oidc_provider_arn": requiredString("ARN of the cluster's IAM OIDC provider (arn:aws:iam::ACCOUNT:oidc-provider/oidc.eks.REGION.amazonaws.com/id/ID).", oidcARNCheck),
					"namespace":         requiredString("Namespace of the ServiceAccount.", namespaceValidators()...),
					"service_account":   requiredString("Name of the ServiceAccount.", objectNameValidators()...),
				},
				Validators: []validator.Object{blockRequires("oidc_provider_arn", "namespace", "service_account")},
			},
			"pod_identity": schema.SingleNestedBlock{
				Description: "Trust for EKS Pod Identity: pods.eks.amazonaws.com may assume the role and tag the session, for this namespace and ServiceAccount (and cluster, when named) only.",
				Attributes: map[string]schema.Attribute{
					"namespace":       requiredString("Namespace of the ServiceAccount.", namespaceValidators()...),
					"service_account": requiredString("Name of the ServiceAccount.", objectNameValidators()...),
					"cluster_name":    requiredString("EKS cluster name; when set, only sessions tagged with it are admitted.", clusterNameCheck),
				},
				Validators: []validator.Object{blockRequires("namespace", "service_account")},
			},
			"timeouts": timeoutsBlock(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}, "IAM eventual consistency is retried within these limits (default 2m)"),
		},
	}
}

func (r *iamRoleResource) ConfigValidators(context.Context) []resource.ConfigValidator {
	return []resource.ConfigValidator{
		resourcevalidator.ExactlyOneOf(path.MatchRoot("irsa"), path.MatchRoot("pod_identity")),
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
	rolePlanChecks(plan, &resp.Diagnostics)
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

func iamTags(ctx context.Context, m types.Map, diags *diag.Diagnostics) []iamtypes.Tag {
	tags := stringMap(ctx, m, diags)
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []iamtypes.Tag
	for _, k := range keys {
		out = append(out, iamtypes.Tag{Key: aws.String(k), Value: aws.String(tags[k])})
	}
	return out
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
	if resp.Diagnostics.HasError() {
		return
	}
	name := plan.Name.ValueString()
	in := &iam.CreateRoleInput{
		RoleName:                 aws.String(name),
		AssumeRolePolicyDocument: aws.String(trust),
		Description:              plan.Description.ValueStringPointer(),
		Tags:                     iamTags(ctx, plan.TagsAll, &resp.Diagnostics),
	}
	var out *iam.CreateRoleOutput
	// A trust policy naming an OIDC provider created seconds ago can be
	// "Invalid principal" until IAM has propagated it.
	err := awsclient.Retry(ctx, timeout, awsclient.IAMPropagating, func() (err error) {
		out, err = cl.CreateRole(ctx, in)
		return err
	})
	var exists *iamtypes.EntityAlreadyExistsException
	if errors.As(err, &exists) {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "IAM role already exists", alreadyExists("IAM role "+name, name))
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Creating IAM role failed", fmt.Sprintf("iam:CreateRole %s: %s", name, awsErr(ctx, err)))
		return
	}
	plan.ID = types.StringValue(name)
	plan.ARN = types.StringValue(aws.ToString(out.Role.Arn))
	plan.TrustPolicyJSON, plan.PolicyJSON = types.StringValue(trust), types.StringNull()
	plan.ExtraPolicies = emptyList()
	// The role exists: record it before the next call, so a failure leaves a
	// tainted resource Terraform knows about rather than an orphan.
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	if err := r.putPolicy(ctx, cl, name, perm, timeout); err != nil {
		resp.Diagnostics.AddError("Attaching the state policy failed", err.Error())
		return
	}
	plan.PolicyJSON = types.StringValue(perm)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *iamRoleResource) putPolicy(ctx context.Context, cl *iam.Client, name, doc string, timeout time.Duration) error {
	err := awsclient.Retry(ctx, timeout, awsclient.IAMPropagating, func() error {
		_, err := cl.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: aws.String(name), PolicyName: aws.String(inlinePolicyName), PolicyDocument: aws.String(doc)})
		return err
	})
	if err != nil {
		return fmt.Errorf("iam:PutRolePolicy %s/%s: %w", name, inlinePolicyName, err)
	}
	return nil
}

func (r *iamRoleResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	ctx, cancel := r.meta.boundAWS(ctx, awsReadBound)
	defer cancel()
	var state iamRoleModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	cl := r.iam(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	name := state.ID.ValueString()
	role, err := cl.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(name)})
	if isNotFound(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Reading IAM role failed", fmt.Sprintf("iam:GetRole %s: %s", name, awsErr(ctx, err)))
		return
	}
	state.Name = types.StringValue(name)
	state.ARN = types.StringValue(aws.ToString(role.Role.Arn))
	if d := aws.ToString(role.Role.Description); d != "" || !state.Description.IsNull() {
		state.Description = types.StringValue(d)
		if d == "" {
			state.Description = types.StringNull()
		}
	}
	trust := iampolicy.Decode(aws.ToString(role.Role.AssumeRolePolicyDocument))
	if !iampolicy.Equivalent(trust, state.TrustPolicyJSON.ValueString()) {
		state.TrustPolicyJSON = types.StringValue(trust)
	}
	// On import the blocks come from the trust policy itself.
	if state.IRSA == nil && state.PodIdentity == nil {
		switch t := iampolicy.ParseTrust(trust); t.Kind {
		case "irsa":
			state.IRSA = &irsaModel{OIDCProviderARN: types.StringValue(t.OIDCProviderARN),
				Namespace: types.StringValue(t.Namespace), ServiceAccount: types.StringValue(t.ServiceAccount)}
		case "pod_identity":
			state.PodIdentity = &podIdentityModel{Namespace: types.StringValue(t.Namespace),
				ServiceAccount: types.StringValue(t.ServiceAccount), ClusterName: optionalString(t.ClusterName)}
		}
	}

	pol, err := cl.GetRolePolicy(ctx, &iam.GetRolePolicyInput{RoleName: aws.String(name), PolicyName: aws.String(inlinePolicyName)})
	switch {
	case isNotFound(err):
		state.PolicyJSON = types.StringValue("") // removed out of band: the plan puts it back
	case err != nil:
		resp.Diagnostics.AddError("Reading IAM role policy failed", fmt.Sprintf("iam:GetRolePolicy %s: %s", name, err))
		return
	default:
		doc := iampolicy.Decode(aws.ToString(pol.PolicyDocument))
		if !iampolicy.Equivalent(doc, state.PolicyJSON.ValueString()) {
			state.PolicyJSON = types.StringValue(doc)
		}
		if state.StateStoreIDs.IsNull() {
			stores, keys := iampolicy.ParseGrants(doc)
			state.StateStoreIDs, _ = types.ListValueFrom(ctx, types.StringType, stores)
			if len(keys) > 0 {
				state.KMSKeyARNs, _ = types.ListValueFrom(ctx, types.StringType, keys)
			}
		}
	}

	tags := map[string]string{}
	for _, t := range role.Role.Tags {
		tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	state.Tags, state.TagsAll = r.meta.readTags(ctx, tags, state.Tags, &resp.Diagnostics)
	extra, err := extraRolePolicies(ctx, cl, name)
	if err != nil {
		resp.Diagnostics.AddError("Reading IAM role policies failed", fmt.Sprintf("Role %s: %s", name, awsErr(ctx, err)))
		return
	}
	state.ExtraPolicies = listOfStrings(extra)
	state.Timeouts = knownTimeouts(ctx, state.Timeouts)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func optionalString(s string) types.String {
	if s == "" {
		return types.StringNull()
	}
	return types.StringValue(s)
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
	if resp.Diagnostics.HasError() {
		return
	}
	name := state.ID.ValueString()
	if !iampolicy.Equivalent(trust, state.TrustPolicyJSON.ValueString()) {
		err := awsclient.Retry(ctx, timeout, awsclient.IAMPropagating, func() error {
			_, err := cl.UpdateAssumeRolePolicy(ctx, &iam.UpdateAssumeRolePolicyInput{RoleName: aws.String(name), PolicyDocument: aws.String(trust)})
			return err
		})
		if err != nil {
			resp.Diagnostics.AddError("Updating trust policy failed", fmt.Sprintf("iam:UpdateAssumeRolePolicy %s: %s", name, err))
			return
		}
	}
	if !iampolicy.Equivalent(perm, state.PolicyJSON.ValueString()) {
		if err := r.putPolicy(ctx, cl, name, perm, timeout); err != nil {
			resp.Diagnostics.AddError("Updating the state policy failed", err.Error())
			return
		}
	}
	if !plan.Description.Equal(state.Description) {
		if _, err := cl.UpdateRole(ctx, &iam.UpdateRoleInput{RoleName: aws.String(name), Description: aws.String(plan.Description.ValueString())}); err != nil {
			resp.Diagnostics.AddError("Updating role description failed", err.Error())
			return
		}
	}
	if !plan.TagsAll.Equal(state.TagsAll) {
		old := stringMap(ctx, state.TagsAll, &resp.Diagnostics)
		want := stringMap(ctx, plan.TagsAll, &resp.Diagnostics)
		var remove []string
		for k := range old {
			if _, ok := want[k]; !ok {
				remove = append(remove, k)
			}
		}
		if len(remove) > 0 {
			if _, err := cl.UntagRole(ctx, &iam.UntagRoleInput{RoleName: aws.String(name), TagKeys: remove}); err != nil {
				resp.Diagnostics.AddError("Untagging role failed", err.Error())
				return
			}
		}
		if tags := iamTags(ctx, plan.TagsAll, &resp.Diagnostics); len(tags) > 0 {
			if _, err := cl.TagRole(ctx, &iam.TagRoleInput{RoleName: aws.String(name), Tags: tags}); err != nil {
				resp.Diagnostics.AddError("Tagging role failed", err.Error())
				return
			}
		}
	}
	var extra []string
	resp.Diagnostics.Append(state.ExtraPolicies.ElementsAs(ctx, &extra, false)...)
	for _, e := range extra {
		var err error
		if n, ok := strings.CutPrefix(e, "inline:"); ok {
			_, err = cl.DeleteRolePolicy(ctx, &iam.DeleteRolePolicyInput{RoleName: aws.String(name), PolicyName: aws.String(n)})
		} else if a, ok := strings.CutPrefix(e, "attached:"); ok {
			_, err = cl.DetachRolePolicy(ctx, &iam.DetachRolePolicyInput{RoleName: aws.String(name), PolicyArn: aws.String(a)})
		}
		if err != nil && !isNotFound(err) {
			resp.Diagnostics.AddError("Removing a policy added outside Terraform failed", fmt.Sprintf("Role %s, %s: %s", name, e, awsErr(ctx, err)))
			return
		}
	}
	plan.ID, plan.ARN = state.ID, state.ARN
	plan.TrustPolicyJSON, plan.PolicyJSON = types.StringValue(trust), types.StringValue(perm)
	plan.ExtraPolicies = emptyList()
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// extraRolePolicies lists the inline policies other than the provider's and
// every attached managed policy: "inline:NAME", "attached:ARN".
func extraRolePolicies(ctx context.Context, cl *iam.Client, role string) ([]string, error) {
	var out []string
	inline := iam.NewListRolePoliciesPaginator(cl, &iam.ListRolePoliciesInput{RoleName: aws.String(role)})
	for inline.HasMorePages() {
		page, err := inline.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("iam:ListRolePolicies: %w", err)
		}
		for _, n := range page.PolicyNames {
			if n != inlinePolicyName {
				out = append(out, "inline:"+n)
			}
		}
	}
	attached := iam.NewListAttachedRolePoliciesPaginator(cl, &iam.ListAttachedRolePoliciesInput{RoleName: aws.String(role)})
	for attached.HasMorePages() {
		page, err := attached.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("iam:ListAttachedRolePolicies: %w", err)
		}
		for _, p := range page.AttachedPolicies {
			out = append(out, "attached:"+aws.ToString(p.PolicyArn))
		}
	}
	sort.Strings(out)
	return out, nil
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
	if _, err := cl.DeleteRolePolicy(ctx, &iam.DeleteRolePolicyInput{RoleName: aws.String(name), PolicyName: aws.String(inlinePolicyName)}); err != nil && !isNotFound(err) {
		resp.Diagnostics.AddError("Deleting the state policy failed", fmt.Sprintf("iam:DeleteRolePolicy %s: %s", name, err))
		return
	}
	err := awsclient.Retry(ctx, timeout, func(err error) bool { return awsclient.ErrorCode(err) == "ConcurrentModification" }, func() error {
		_, err := cl.DeleteRole(ctx, &iam.DeleteRoleInput{RoleName: aws.String(name)})
		return err
	})
	if err != nil && !isNotFound(err) {
		msg := fmt.Sprintf("iam:DeleteRole %s: %s", name, err)
		if awsclient.ErrorCode(err) == "DeleteConflict" {
			msg += " (other policies or instance profiles were attached to the role outside this resource; detach them first)"
		}
		resp.Diagnostics.AddError("Deleting IAM role failed", msg)
	}
}

func (r *iamRoleResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resource.ImportStatePassthroughID(ctx, path.Root("id"), req, resp)
}
