package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
)

// IRSAAnnotation is the annotation EKS reads to inject web identity credentials.
const IRSAAnnotation = kube.IRSAAnnotation

func namespaceValidators() []validator.String { return []validator.String{namespaceCheck} }

func objectNameValidators() []validator.String { return []validator.String{objectNameCheck} }

type serviceAccountResource struct{ resourceBase }

var (
	_ resource.ResourceWithConfigure   = (*serviceAccountResource)(nil)
	_ resource.ResourceWithImportState = (*serviceAccountResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*serviceAccountResource)(nil)
)

func newServiceAccountResource() resource.Resource { return &serviceAccountResource{} }

type serviceAccountModel struct {
	ID          types.String      `tfsdk:"id"`
	Namespace   types.String      `tfsdk:"namespace"`
	Name        types.String      `tfsdk:"name"`
	Labels      types.Map         `tfsdk:"labels"`
	Annotations types.Map         `tfsdk:"annotations"`
	IRSARoleARN types.String      `tfsdk:"irsa_role_arn"`
	RoleBinding *roleBindingModel `tfsdk:"role_binding"`
}

type roleBindingModel struct {
	RoleName types.String `tfsdk:"role_name"`
	Kind     types.String `tfsdk:"kind"`
}

func (r *serviceAccountResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_service_account"
}

func (r *serviceAccountResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "A Kubernetes ServiceAccount for Flink pods, optionally annotated for IRSA, and with `role_binding` the " +
			"RoleBinding of that account to the Flink operator's Role (`flink` by default) or a ClusterRole. " +
			"Created with a plain create, which fails (with the `terraform import` command to use) when a ServiceAccount or " +
			"RoleBinding of that name exists: an existing object is never taken over. Updated with server-side apply; labels and " +
			"annotations set by others are left alone.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:      true,
				Description:   "`namespace/name`.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"namespace": schema.StringAttribute{
				Required:      true,
				Description:   "Namespace of the ServiceAccount (must exist). Changing it replaces the account.",
				Validators:    namespaceValidators(),
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"name": schema.StringAttribute{
				Required:      true,
				Description:   "Name of the ServiceAccount, and of its RoleBinding. Changing it replaces the account.",
				Validators:    objectNameValidators(),
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"labels": schema.MapAttribute{
				Optional:    true,
				ElementType: types.StringType,
				Description: "Labels this resource manages on the ServiceAccount.",
				Validators:  []validator.Map{labelsCheck},
			},
			"annotations": schema.MapAttribute{
				Optional:    true,
				ElementType: types.StringType,
				Description: "Annotations this resource manages on the ServiceAccount (use irsa_role_arn for " + IRSAAnnotation + ").",
				Validators:  []validator.Map{annotationsCheck},
			},
			"irsa_role_arn": schema.StringAttribute{
				Optional:    true,
				Description: "IAM role ARN for IRSA: sets the " + IRSAAnnotation + " annotation. The role's trust policy must name this namespace and account. Its partition (arn:aws:, arn:aws-cn:, arn:aws-us-gov:) must be that of the provider's region, when the region is known.",
				Validators:  []validator.String{roleARNCheck},
			},
		},
		Blocks: map[string]schema.Block{
			"role_binding": schema.SingleNestedBlock{
				Description: "Bind the ServiceAccount to the operator's Role so that Flink's JobManager can manage TaskManager pods and HA ConfigMaps.",
				Attributes: map[string]schema.Attribute{
					"role_name": schema.StringAttribute{
						Optional:      true,
						Computed:      true,
						Description:   "Name of the Role or ClusterRole. Default `flink` (the Role the operator's Helm chart creates).",
						Validators:    objectNameValidators(),
						PlanModifiers: []planmodifier.String{defaultString("flink")},
					},
					"kind": schema.StringAttribute{
						Optional:      true,
						Computed:      true,
						Description:   "`Role` (default) or `ClusterRole`.",
						Validators:    []validator.String{stringvalidator.OneOf("Role", "ClusterRole")},
						PlanModifiers: []planmodifier.String{defaultString("Role")},
					},
				},
			},
		},
	}
	markdownDescriptions(&resp.Schema)
}

func (r *serviceAccountResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if importNamespaceName(ctx, req, resp) {
		markImported(ctx, resp)
	}
}

func (r *serviceAccountResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan serviceAccountModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	c := r.meta.kubeOrDiag(&resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.ID = types.StringValue(plan.Namespace.ValueString() + "/" + plan.Name.ValueString())
	var uid string
	resp.Diagnostics.Append(r.apply(ctx, c, plan, nil, &uid)...)
	if !resp.Diagnostics.HasError() {
		setObjectUID(ctx, resp.Private, uid, &resp.Diagnostics)
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	}
}

func (r *serviceAccountResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state serviceAccountModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	c := r.meta.kubeOrDiag(&resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.ID = state.ID
	resp.Diagnostics.Append(r.apply(ctx, c, plan, &state, nil)...)
	if !resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	}
}

// apply creates (prior == nil; the new ServiceAccount's UID goes to
// createdUID) or updates the ServiceAccount and its RoleBinding.
func (r *serviceAccountResource) apply(ctx context.Context, c *kube.Client, plan serviceAccountModel, prior *serviceAccountModel, createdUID *string) diag.Diagnostics {
	var diags diag.Diagnostics
	ns, name := plan.Namespace.ValueString(), plan.Name.ValueString()
	labels := stringMap(ctx, plan.Labels, &diags)
	annotations := stringMap(ctx, plan.Annotations, &diags)
	if v := plan.IRSARoleARN.ValueString(); v != "" {
		annotations[IRSAAnnotation] = v
	}
	if diags.HasError() {
		return diags
	}
	// Server-side apply owns exactly these keys: dropping one from the
	// configuration removes it from the object; keys of other managers stay.
	// A create is a POST that fails on an existing ServiceAccount or
	// RoleBinding: it never takes over someone else's (kube.Create).
	sa := kube.ServiceAccountObject(ns, name, labels, annotations)
	var created *unstructured.Unstructured
	if prior == nil {
		var err error
		created, err = kube.Create(ctx, c.Dynamic, kube.ServiceAccountGVR, sa)
		switch {
		case apierrors.IsAlreadyExists(err):
			addAlreadyExists(&diags, "flinkstate_service_account", "ServiceAccount", ns, name)
			return diags
		case created != nil && err != nil:
			addProblemWarning(&diags, "Converting the field ownership of", "ServiceAccount "+ns+"/"+name, err.Error(),
				"The ServiceAccount was created; the next apply converts its ownership again.")
		case err != nil:
			addProblem(&diags, "Creating", "ServiceAccount "+ns+"/"+name, err.Error(), "")
			return diags
		}
		*createdUID = string(created.GetUID())
	} else if _, err := kube.Apply(ctx, c.Dynamic, kube.ServiceAccountGVR, sa); err != nil {
		addProblem(&diags, "Applying", "ServiceAccount "+ns+"/"+name, err.Error(), "")
		return diags
	}
	wantRB := plan.RoleBinding != nil
	hadRB := prior != nil && prior.RoleBinding != nil
	sameRB := hadRB && wantRB && prior.RoleBinding.RoleName.Equal(plan.RoleBinding.RoleName) && prior.RoleBinding.Kind.Equal(plan.RoleBinding.Kind)
	if hadRB && !sameRB {
		// roleRef is immutable: a changed role means a new binding.
		if err := kube.DeleteRoleBinding(ctx, c.Dynamic, ns, name); err != nil && !notfound.Is(err) {
			addProblem(&diags, "Deleting", "RoleBinding "+ns+"/"+name, err.Error(), "")
			return diags
		}
	}
	if !wantRB {
		return diags
	}
	rb := kube.RoleBindingObject(ns, name, labels, plan.RoleBinding.Kind.ValueString(), plan.RoleBinding.RoleName.ValueString())
	if sameRB {
		if _, err := kube.Apply(ctx, c.Dynamic, kube.RoleBindingGVR, rb); err != nil {
			diags.AddAttributeError(path.Root("role_binding"), "Applying RoleBinding failed", fmt.Sprintf("%s/%s: %s", ns, name, err))
		}
		return diags
	}
	rbCreated, err := kube.Create(ctx, c.Dynamic, kube.RoleBindingGVR, rb)
	switch {
	case err == nil:
		return diags
	case rbCreated != nil:
		addProblemWarning(&diags, "Converting the field ownership of", "RoleBinding "+ns+"/"+name, err.Error(),
			"The RoleBinding was created; the next apply converts its ownership again.")
		return diags
	case apierrors.IsAlreadyExists(err):
		addAlreadyExists(&diags, "flinkstate_service_account", "RoleBinding", ns, name)
	default:
		diags.AddAttributeError(path.Root("role_binding"), "Creating RoleBinding failed", fmt.Sprintf("%s/%s: %s", ns, name, err))
	}
	if created != nil {
		// No half-applied create: remove the ServiceAccount just created
		// (only that object: the UID precondition), so nothing is left
		// outside Terraform's state.
		if derr := kube.DeleteServiceAccount(ctx, c.Dynamic, ns, name, created.GetUID()); derr != nil && !notfound.Is(derr) {
			addProblem(&diags, "Removing the just created", "ServiceAccount "+ns+"/"+name,
				"its RoleBinding was not created, and deleting the ServiceAccount again failed: "+derr.Error(),
				"Delete the ServiceAccount by hand, or import it.")
		}
	}
	return diags
}

func (r *serviceAccountResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state serviceAccountModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	c := r.meta.kubeOrDiag(&resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	ns, name := state.Namespace.ValueString(), state.Name.ValueString()
	sa, err := kube.GetServiceAccount(ctx, c.Dynamic, ns, name)
	if notfound.Is(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		addProblem(&resp.Diagnostics, "Reading", "ServiceAccount "+ns+"/"+name, err.Error(), "")
		return
	}
	if uid := objectUID(ctx, req.Private, &resp.Diagnostics); uid != "" && uid != string(sa.GetUID()) {
		// Deleted and created again outside Terraform: not the object this
		// configuration created or imported, so it is no longer managed
		// here (a destroy must not delete it; a create will refuse it).
		addProblemWarning(&resp.Diagnostics, "Reading", "ServiceAccount "+ns+"/"+name,
			fmt.Sprintf("it was replaced outside Terraform: it now has UID %s, not %s, so it is another object, dropped from this state and left alone", sa.GetUID(), uid),
			"Import it to manage it.")
		resp.State.RemoveResource(ctx)
		return
	}
	setObjectUID(ctx, resp.Private, string(sa.GetUID()), &resp.Diagnostics)
	imported := takeImported(ctx, req, resp)
	owned := kube.OwnedMetadataKeys(sa.GetManagedFields(), kube.FieldManager)

	state.Labels = readOwnedMap(ctx, sa.GetLabels(), owned.Labels, imported, state.Labels, &resp.Diagnostics)
	liveAnnotations := sa.GetAnnotations() // a copy on each call
	annotations := map[string]string{}
	for k, v := range liveAnnotations {
		if k != IRSAAnnotation {
			annotations[k] = v
		}
	}
	state.Annotations = readOwnedMap(ctx, annotations, owned.Annotations, imported, state.Annotations, &resp.Diagnostics)
	if v, ok := liveAnnotations[IRSAAnnotation]; ok && (owned.Annotations[IRSAAnnotation] || imported) {
		state.IRSARoleARN = types.StringValue(v)
	} else {
		state.IRSARoleARN = types.StringNull()
	}

	rb, err := kube.GetRoleBinding(ctx, c.Dynamic, ns, name)
	switch {
	case notfound.Is(err):
		state.RoleBinding = nil
	case err != nil:
		addProblem(&resp.Diagnostics, "Reading", "RoleBinding "+ns+"/"+name, err.Error(), "")
		return
	case state.RoleBinding != nil || imported:
		kind, role := kube.RoleRef(rb)
		state.RoleBinding = &roleBindingModel{RoleName: types.StringValue(role), Kind: types.StringValue(kind)}
	}
	state.ID = types.StringValue(ns + "/" + name)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// readOwnedMap reports the keys of live that this provider's field manager
// owns (right after an import, every key), so keys that others add never
// show as drift and keys removed out of band do.
func readOwnedMap(ctx context.Context, live map[string]string, owned map[string]bool, imported bool, prior types.Map, diags *diag.Diagnostics) types.Map {
	out := map[string]string{}
	for k, v := range live {
		if owned[k] || imported {
			out[k] = v
		}
	}
	if len(out) == 0 {
		if !prior.IsNull() && len(prior.Elements()) == 0 {
			return prior
		}
		return types.MapNull(types.StringType)
	}
	m, d := types.MapValueFrom(ctx, types.StringType, out)
	diags.Append(d...)
	return m
}

func (r *serviceAccountResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state serviceAccountModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	c := r.meta.kubeOrDiag(&resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	ns, name := state.Namespace.ValueString(), state.Name.ValueString()
	if state.RoleBinding != nil {
		if err := kube.DeleteRoleBinding(ctx, c.Dynamic, ns, name); err != nil && !notfound.Is(err) {
			addProblem(&resp.Diagnostics, "Deleting", "RoleBinding "+ns+"/"+name, err.Error(), "")
			return
		}
	}
	// Only the object this configuration created or imported: the UID
	// precondition makes the API server refuse (409) to delete another one
	// of the same name.
	uid := ktypes.UID(objectUID(ctx, req.Private, &resp.Diagnostics))
	if err := kube.DeleteServiceAccount(ctx, c.Dynamic, ns, name, uid); err != nil && !notfound.Is(err) {
		addProblem(&resp.Diagnostics, "Deleting", "ServiceAccount "+ns+"/"+name, err.Error(), "")
	}
}

// defaultString is a plan modifier that plans a default for an unset
// Optional+Computed attribute (usable inside blocks, where schema defaults are not).
type defaultString string

func (d defaultString) Description(context.Context) string {
	return fmt.Sprintf("defaults to %q", string(d))
}
func (d defaultString) MarkdownDescription(ctx context.Context) string { return d.Description(ctx) }
func (d defaultString) PlanModifyString(_ context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if req.ConfigValue.IsNull() {
		resp.PlanValue = types.StringValue(string(d))
	}
}
