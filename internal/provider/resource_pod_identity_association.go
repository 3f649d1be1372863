package provider

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/podidentity"
)

type podIdentityAssociationResource struct{ resourceBase }

var (
	_ resource.ResourceWithConfigure   = (*podIdentityAssociationResource)(nil)
	_ resource.ResourceWithImportState = (*podIdentityAssociationResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*podIdentityAssociationResource)(nil)
)

func newPodIdentityAssociationResource() resource.Resource { return &podIdentityAssociationResource{} }

type podIdentityAssociationModel struct {
	ID             types.String   `tfsdk:"id"`
	ClusterName    types.String   `tfsdk:"cluster_name"`
	Namespace      types.String   `tfsdk:"namespace"`
	ServiceAccount types.String   `tfsdk:"service_account"`
	RoleARN        types.String   `tfsdk:"role_arn"`
	AssociationID  types.String   `tfsdk:"association_id"`
	AssociationARN types.String   `tfsdk:"association_arn"`
	Tags           types.Map      `tfsdk:"tags"`
	TagsAll        types.Map      `tfsdk:"tags_all"`
	Timeouts       timeouts.Value `tfsdk:"timeouts"`
}

func (r *podIdentityAssociationResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_pod_identity_association"
}

func (r *podIdentityAssociationResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	keep := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	resp.Schema = schema.Schema{
		Description: "An EKS Pod Identity association: pods of the ServiceAccount get credentials of the role through the EKS Pod " +
			"Identity Agent. Use it with a flinkstate_iam_role that has a `pod_identity` block, and `identity = \"pod_identity\"` " +
			"on the deployment (the Flink S3 plugin then needs a container-credentials chain).",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true, Description: "`cluster_name,association_id`.", PlanModifiers: keep},
			"cluster_name": schema.StringAttribute{Required: true, Description: "EKS cluster name. Changing it replaces the association.",
				PlanModifiers: replace, Validators: []validator.String{clusterNameCheck}},
			"namespace": schema.StringAttribute{Required: true, Description: "Namespace of the ServiceAccount. Changing it replaces the association.",
				PlanModifiers: replace, Validators: namespaceValidators()},
			"service_account": schema.StringAttribute{Required: true, Description: "Name of the ServiceAccount. Changing it replaces the association.",
				PlanModifiers: replace, Validators: objectNameValidators()},
			"role_arn": schema.StringAttribute{Required: true, Description: "ARN of the role the pods get (e.g. flinkstate_iam_role.orders.arn), in the partition of the provider's region. Updated in place.",
				Validators: []validator.String{roleARNCheck}},
			"association_id":  schema.StringAttribute{Computed: true, Description: "ID of the association.", PlanModifiers: keep},
			"association_arn": schema.StringAttribute{Computed: true, Description: "ARN of the association.", PlanModifiers: keep},
			"tags": schema.MapAttribute{Optional: true, ElementType: types.StringType, Description: "Tags of the association, as " +
				"aws_eks_pod_identity_association has them. The provider's aws.default_tags are added; these tags win over a default " +
				"tag with the same key. Updated in place.", Validators: []validator.Map{awsTagsCheck}},
			"tags_all": tagsAllAttribute(),
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeoutsBlock(ctx, timeouts.Opts{Create: true, Update: true}, "a role not yet usable by EKS is retried within these limits (default 2m)"),
		},
	}
	markdownDescriptions(&resp.Schema)
}

func (r *podIdentityAssociationResource) eks(ctx context.Context, diags *diag.Diagnostics) *eks.Client {
	if c := r.meta.awsOrDiag(ctx, diags); c != nil {
		return c.EKS
	}
	return nil
}

func (r *podIdentityAssociationResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan podIdentityAssociationModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	timeout, d := plan.Timeouts.Create(ctx, 2*time.Minute)
	resp.Diagnostics.Append(d...)
	ctx, cancel := r.meta.boundAWS(ctx, timeout)
	defer cancel()
	cl := r.eks(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	a, err := podidentity.Create(ctx, cl, podidentity.Association{
		Cluster:        plan.ClusterName.ValueString(),
		Namespace:      plan.Namespace.ValueString(),
		ServiceAccount: plan.ServiceAccount.ValueString(),
		RoleARN:        plan.RoleARN.ValueString(),
		Tags:           stringMap(ctx, plan.TagsAll, &resp.Diagnostics),
	}, timeout)
	if err != nil {
		addProblem(&resp.Diagnostics, "Creating", fmt.Sprintf("Pod Identity association on cluster %s for %s/%s",
			plan.ClusterName.ValueString(), plan.Namespace.ValueString(), plan.ServiceAccount.ValueString()), awsErr(ctx, err), "")
		return
	}
	plan.AssociationID = types.StringValue(a.ID)
	plan.AssociationARN = types.StringValue(a.ARN)
	plan.ID = types.StringValue(podidentity.Ref(a.Cluster, a.ID))
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *podIdentityAssociationResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	ctx, cancel := r.meta.boundAWS(ctx, awsReadBound)
	defer cancel()
	var state podIdentityAssociationModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	cl := r.eks(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	a, err := podidentity.Find(ctx, cl, state.ClusterName.ValueString(), state.AssociationID.ValueString())
	if notfound.Is(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		addProblem(&resp.Diagnostics, "Reading", "Pod Identity association "+state.ID.ValueString(), awsErr(ctx, err), "")
		return
	}
	state.Namespace = types.StringValue(a.Namespace)
	state.ServiceAccount = types.StringValue(a.ServiceAccount)
	state.RoleARN = types.StringValue(a.RoleARN)
	state.AssociationARN = types.StringValue(a.ARN)
	state.ID = types.StringValue(podidentity.Ref(a.Cluster, a.ID))
	state.Tags, state.TagsAll = r.meta.readTags(ctx, a.Tags, state.Tags, &resp.Diagnostics)
	state.Timeouts = knownTimeouts(ctx, state.Timeouts)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *podIdentityAssociationResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state podIdentityAssociationModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	timeout, d := plan.Timeouts.Update(ctx, 2*time.Minute)
	resp.Diagnostics.Append(d...)
	ctx, cancel := r.meta.boundAWS(ctx, timeout)
	defer cancel()
	cl := r.eks(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if !plan.RoleARN.Equal(state.RoleARN) {
		if err := podidentity.UpdateRole(ctx, cl, state.ClusterName.ValueString(), state.AssociationID.ValueString(), plan.RoleARN.ValueString(), timeout); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("role_arn"), "Updating Pod Identity association failed", awsErr(ctx, err))
			return
		}
	}
	if !plan.TagsAll.Equal(state.TagsAll) {
		old, want := stringMap(ctx, state.TagsAll, &resp.Diagnostics), stringMap(ctx, plan.TagsAll, &resp.Diagnostics)
		if err := podidentity.SyncTags(ctx, cl, state.AssociationARN.ValueString(), old, want); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("tags"), "Tagging Pod Identity association failed", awsErr(ctx, err))
			// The role change above is applied: keep it in state.
			state.RoleARN = plan.RoleARN
			resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
			return
		}
	}
	plan.ID, plan.AssociationID, plan.AssociationARN = state.ID, state.AssociationID, state.AssociationARN
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *podIdentityAssociationResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	ctx, cancel := r.meta.boundAWS(ctx, awsWriteBound)
	defer cancel()
	var state podIdentityAssociationModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	cl := r.eks(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := podidentity.Delete(ctx, cl, state.ClusterName.ValueString(), state.AssociationID.ValueString()); err != nil {
		addProblem(&resp.Diagnostics, "Deleting", "Pod Identity association "+state.ID.ValueString(), awsErr(ctx, err), "")
	}
}

func (r *podIdentityAssociationResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	cluster, id, ok := strings.Cut(req.ID, ",")
	if !ok || cluster == "" || id == "" {
		addProblem(&resp.Diagnostics, "Importing", fmt.Sprintf("ID %q", req.ID), "the ID is not of the form cluster_name,association_id",
			"Give the cluster name and the association ID separated by a comma, e.g. prod,a-abcdefghijklmnop1.")
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("cluster_name"), cluster)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("association_id"), id)...)
}

// ModifyPlan of the association: the role in the partition of the
// provider's region (EKS, in that region, assumes it), and the IRSA
// conflict (rule 6).
func (r *podIdentityAssociationResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan podIdentityAssociationModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	r.meta.checkARNPartitions(ctx, []arnAt{{path.Root("role_arn"), "role_arn", plan.RoleARN}}, &resp.Diagnostics)
	r.podIdentityUser(plan.Namespace, plan.ServiceAccount, "a flinkstate_pod_identity_association", path.Root("service_account"), &resp.Diagnostics)
	plan.TagsAll = r.meta.planTagsAll(ctx, plan.Tags, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}
