package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/iampolicy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/iamrole"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/s3state"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

// flinkstate_bucket_replication: S3 replication of a state bucket's
// prefixes to a bucket in another region, with the role S3 assumes for it.
// A resource of its own beside the buckets, as hashicorp/aws's
// aws_s3_bucket_replication_configuration is beside aws_s3_bucket, so the
// destination is a flinkstate_bucket like any other (hardened, in the
// other region through a provider alias).

// privateRoleARN keeps the ARN of the role this resource created (or
// imported): the configuration's role is compared with it, so a
// configuration pointed at another role outside Terraform plans an update.
const privateRoleARN = "replication_role_arn"

// replicationRetryBound bounds the retries of IAM and bucket propagation.
const replicationRetryBound = 2 * time.Minute

type bucketReplicationResource struct{ resourceBase }

var (
	_ resource.ResourceWithConfigure   = (*bucketReplicationResource)(nil)
	_ resource.ResourceWithImportState = (*bucketReplicationResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*bucketReplicationResource)(nil)
)

func newBucketReplicationResource() resource.Resource { return &bucketReplicationResource{} }

type bucketReplicationModel struct {
	ID                      types.String `tfsdk:"id"`
	Bucket                  types.String `tfsdk:"bucket"`
	DestinationBucket       types.String `tfsdk:"destination_bucket"`
	Prefixes                types.List   `tfsdk:"prefixes"`
	RoleName                types.String `tfsdk:"role_name"`
	DeleteMarkerReplication types.Bool   `tfsdk:"delete_marker_replication"`
	RoleARN                 types.String `tfsdk:"role_arn"`
	DestinationRegion       types.String `tfsdk:"destination_region"`
	PolicyJSON              types.String `tfsdk:"policy_json"`
}

func (r *bucketReplicationResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_bucket_replication"
}

func (r *bucketReplicationResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "S3 replication of a state bucket's prefixes to a bucket in another region (disaster recovery): one " +
			"replication rule per state prefix (the prefix and \"/\", so flink/app1 does not reach flink/app10), and a " +
			"least-privilege IAM role that S3 assumes, created and owned by this resource. S3 replicates only objects written " +
			"after the rule, asynchronously and object by object, so the newest snapshot in the destination may be incomplete. " +
			"Both buckets need versioning enabled (`versioning = true` on their flinkstate_bucket); the apply checks it before any change.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true, Description: "The source bucket's name.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"bucket": schema.StringAttribute{
				Required: true,
				Description: "The source bucket, in the provider's region, e.g. flinkstate_bucket.state.bucket. It must have versioning " +
					"enabled. Changing it replaces the replication.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:    []validator.String{bucketNameCheck},
			},
			"destination_bucket": schema.StringAttribute{
				Required: true,
				Description: "The destination bucket, usually a flinkstate_bucket of a provider alias in another region. It must have " +
					"versioning enabled.",
				Validators: []validator.String{bucketNameCheck},
			},
			"prefixes": schema.ListAttribute{
				Required:    true,
				ElementType: types.StringType,
				Description: "The state prefixes to replicate, e.g. [flinkstate_state_store.orders.prefix]: one rule each, on the prefix and \"/\".",
				Validators: []validator.List{
					listvalidator.SizeAtLeast(1),
					listvalidator.UniqueValues(),
					listvalidator.ValueStringsAre(prefixCheck),
				},
			},
			"role_name": schema.StringAttribute{
				Required: true,
				Description: "Name of the IAM role S3 assumes to replicate, created by this resource (a role of that name that exists " +
					"already is refused). Changing it replaces the replication.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:    []validator.String{roleNameCheck},
			},
			"delete_marker_replication": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				Description: "Replicate delete markers (S3 \"DeleteMarkerReplication\"). Default false: a deletion in the source, " +
					"such as Flink subsuming an old checkpoint, leaves the replica in place, which protects the copy from deletions " +
					"in the failed region. Turned on outside Terraform, it shows as drift and the next apply turns it off again.",
			},
			"role_arn": schema.StringAttribute{Computed: true, Description: "ARN of the replication role."},
			"destination_region": schema.StringAttribute{Computed: true,
				Description: "The destination bucket's region, read with GetBucketLocation."},
			"policy_json": schema.StringAttribute{Computed: true,
				Description: "The replication role's inline policy: s3:GetReplicationConfiguration and s3:ListBucket on the source " +
					"bucket; s3:GetObjectVersionForReplication, s3:GetObjectVersionAcl and s3:GetObjectVersionTagging under the " +
					"source prefixes; s3:ReplicateObject and s3:ReplicateTags (and s3:ReplicateDelete with delete_marker_replication) " +
					"under the destination prefixes."},
		},
	}
	markdownDescriptions(&resp.Schema)
}

func (m *bucketReplicationModel) prefixes(ctx context.Context, diags *diag.Diagnostics) []string {
	var out []string
	diags.Append(m.Prefixes.ElementsAs(ctx, &out, false)...)
	return out
}

// policy is the role's inline policy for the model, "" when not all of it
// is known.
func (m *bucketReplicationModel) policy(partition string) (string, error) {
	if m.Bucket.IsUnknown() || m.DestinationBucket.IsUnknown() || m.Prefixes.IsUnknown() || m.DeleteMarkerReplication.IsUnknown() {
		return "", nil
	}
	var prefixes []string
	for _, e := range m.Prefixes.Elements() {
		s, ok := e.(types.String)
		if !ok || s.IsUnknown() {
			return "", nil
		}
		prefixes = append(prefixes, s.ValueString())
	}
	doc, err := iampolicy.ReplicationPermissions(partition, m.Bucket.ValueString(), m.DestinationBucket.ValueString(), prefixes, m.DeleteMarkerReplication.ValueBool())
	if err != nil {
		return "", err
	}
	return doc.JSON(), nil
}

// ModifyPlan computes the role's policy when its inputs are known, without
// any API call, and plans the configuration's role back to this resource's
// own when it was changed outside Terraform.
func (r *bucketReplicationResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan bucketReplicationModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.PolicyJSON = types.StringUnknown()
	if partition, known := r.meta.Partition(ctx); known {
		doc, err := plan.policy(partition)
		// An invalid prefix is named by the attribute's validators; the
		// policy stays unknown then.
		if err == nil && doc != "" {
			plan.PolicyJSON = types.StringValue(doc)
		}
	}
	if req.State.Raw.IsNull() {
		plan.RoleARN, plan.DestinationRegion = types.StringUnknown(), types.StringUnknown()
	} else {
		var state bucketReplicationModel
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
		plan.RoleARN = state.RoleARN
		if own := privateString(ctx, req.Private, privateRoleARN, &resp.Diagnostics); own != "" {
			plan.RoleARN = types.StringValue(own)
		}
		plan.DestinationRegion = state.DestinationRegion
		if !plan.DestinationBucket.Equal(state.DestinationBucket) {
			plan.DestinationRegion = types.StringUnknown()
		}
		if !plan.PolicyJSON.IsUnknown() && iampolicy.Equivalent(plan.PolicyJSON.ValueString(), state.PolicyJSON.ValueString()) {
			plan.PolicyJSON = state.PolicyJSON
		}
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

func (r *bucketReplicationResource) clients(ctx context.Context, diags *diag.Diagnostics) (*s3.Client, *iam.Client) {
	if c := r.meta.awsOrDiag(ctx, diags); c != nil {
		return c.S3, c.IAM
	}
	return nil, nil
}

func (r *bucketReplicationResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan bucketReplicationModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	ctx, cancel := r.meta.boundAWS(ctx, awsWriteBound)
	defer cancel()
	c, ic := r.clients(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	src, roleName := plan.Bucket.ValueString(), plan.RoleName.ValueString()
	region := checkReplicationAtApply(ctx, c, &plan, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	// A create never adopts: a bucket that has a replication
	// configuration already is imported, not overwritten.
	switch _, err := s3state.FindReplication(ctx, c, src); {
	case err == nil:
		resp.Diagnostics.AddAttributeError(path.Root("bucket"), "Replication configuration already exists",
			alreadyExists("The replication configuration of bucket "+src, src))
		return
	case !notfound.Is(err):
		addProblem(&resp.Diagnostics, "Reading the replication configuration of", "bucket "+src, awsErr(ctx, err), "")
		return
	}
	partition, _ := r.meta.Partition(ctx)
	policy, err := plan.policy(partition)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("prefixes"), "Invalid replication prefixes", err.Error())
		return
	}
	arn, err := iamrole.Create(ctx, ic, roleName, iampolicy.ReplicationTrust().JSON(),
		"S3 replication of "+src+" (flinkstate_bucket_replication)", nil, replicationRetryBound)
	if iamrole.IsAlreadyExists(err) {
		resp.Diagnostics.AddAttributeError(path.Root("role_name"), "IAM role already exists",
			fmt.Sprintf("An IAM role named %s exists already, and this resource creates its replication role itself. Choose another role_name, "+
				"or delete that role if it is a leftover.", roleName))
		return
	}
	if err != nil {
		addProblem(&resp.Diagnostics, "Creating the replication role", roleName, awsErr(ctx, err), "")
		return
	}
	plan.ID = types.StringValue(src)
	plan.RoleARN = types.StringValue(arn)
	plan.DestinationRegion = types.StringValue(region)
	plan.PolicyJSON = types.StringValue("")
	// The role exists: record it before the next call, so a failure leaves
	// a tainted resource whose destroy deletes the role.
	setPrivateString(ctx, resp.Private, privateRoleARN, arn, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	if err := iamrole.PutPolicy(ctx, ic, roleName, policy, replicationRetryBound); err != nil {
		addProblem(&resp.Diagnostics, "Attaching the replication policy to", "IAM role "+roleName, awsErr(ctx, err), "")
		return
	}
	plan.PolicyJSON = types.StringValue(policy)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	if r.put(ctx, c, &plan, partition, &resp.Diagnostics) {
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	}
}

// put writes the replication configuration of the model.
func (r *bucketReplicationResource) put(ctx context.Context, c *s3.Client, m *bucketReplicationModel, partition string, diags *diag.Diagnostics) bool {
	cfg := s3state.ReplicationConfiguration(partition, s3state.Replication{
		RoleARN: m.RoleARN.ValueString(), Destination: m.DestinationBucket.ValueString(),
		Prefixes: m.prefixes(ctx, diags), DeleteMarkers: m.DeleteMarkerReplication.ValueBool(),
	})
	if diags.HasError() {
		return false
	}
	if err := s3state.PutReplication(ctx, c, m.Bucket.ValueString(), cfg, replicationRetryBound); err != nil {
		addProblem(diags, "Writing the replication configuration of", "bucket "+m.Bucket.ValueString(), awsErr(ctx, err), "")
		return false
	}
	return true
}

func (r *bucketReplicationResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state bucketReplicationModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	ctx, cancel := r.meta.boundAWS(ctx, awsReadBound)
	defer cancel()
	c, ic := r.clients(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	src := state.ID.ValueString()
	cfg, err := s3state.FindReplication(ctx, c, src)
	gone := notfound.Is(err)
	if err != nil && !gone {
		if nb := s3state.FindBucket(ctx, c, src); notfound.Is(nb) {
			resp.State.RemoveResource(ctx) // the source bucket itself is gone
			return
		}
		addProblem(&resp.Diagnostics, "Reading the replication configuration of", "bucket "+src, awsErr(ctx, err), "")
		return
	}
	imported := state.RoleName.IsNull()
	if gone && imported {
		resp.Diagnostics.AddError("No replication configuration to import",
			fmt.Sprintf("Bucket %s has no replication configuration: there is nothing to import. Create the resource instead.", src))
		return
	}
	state.Bucket = types.StringValue(src)
	if gone {
		// Removed outside Terraform: no prefix replicates, and the plan
		// puts the configuration back (the role is still this resource's).
		state.Prefixes = emptyList()
	} else {
		got := s3state.ParseReplication(cfg)
		state.Prefixes = listOfStrings(got.Prefixes)
		if got.Destination != "" {
			state.DestinationBucket = types.StringValue(got.Destination)
		}
		state.DeleteMarkerReplication = types.BoolValue(got.DeleteMarkers)
		state.RoleARN = types.StringValue(got.RoleARN)
		if imported {
			// The role is the one the configuration names.
			state.RoleName = types.StringValue(got.RoleARN[strings.LastIndex(got.RoleARN, "/")+1:])
			setPrivateString(ctx, resp.Private, privateRoleARN, got.RoleARN, &resp.Diagnostics)
		}
		if len(got.Foreign) > 0 {
			// Rules this resource did not write: the next apply replaces
			// the whole configuration with its own rules.
			resp.Diagnostics.AddAttributeWarning(path.Root("prefixes"), "Replication rules changed outside Terraform",
				fmt.Sprintf("The replication configuration of %s has rules this resource did not write (%s): the next apply replaces them with one rule per prefix.",
					src, strings.Join(got.Foreign, ", ")))
			// They show in the plan as prefixes to remove.
			state.Prefixes = listOfStrings(append(slices.Clone(got.Prefixes), got.Foreign...))
		}
	}
	role, err := iamrole.Read(ctx, ic, state.RoleName.ValueString())
	switch {
	case notfound.Is(err):
		state.PolicyJSON = types.StringValue("") // the role is gone: the plan creates it again
	case err != nil:
		addProblem(&resp.Diagnostics, "Reading", "IAM role "+state.RoleName.ValueString(), awsErr(ctx, err), "")
		return
	case !iampolicy.Equivalent(role.Policy, state.PolicyJSON.ValueString()):
		state.PolicyJSON = types.StringValue(role.Policy)
	}
	if region, err := s3state.BucketRegion(ctx, c, state.DestinationBucket.ValueString()); err == nil {
		state.DestinationRegion = types.StringValue(region)
		for _, b := range []struct{ attr, bucket, region string }{{"bucket", src, ""}, {"destination_bucket", state.DestinationBucket.ValueString(), region}} {
			if on, err := s3state.VersioningEnabled(ctx, c, b.bucket, b.region); err == nil && !on {
				resp.Diagnostics.AddAttributeWarning(path.Root(b.attr), "Versioning suspended: replication stopped",
					fmt.Sprintf("Versioning of %s is not enabled, so S3 replicates nothing to or from it. Set versioning = true on its flinkstate_bucket and apply.", b.bucket))
			}
		}
	}
	state.ID = types.StringValue(src)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *bucketReplicationResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state bucketReplicationModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	ctx, cancel := r.meta.boundAWS(ctx, awsWriteBound)
	defer cancel()
	c, ic := r.clients(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	region := checkReplicationAtApply(ctx, c, &plan, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	partition, _ := r.meta.Partition(ctx)
	policy, err := plan.policy(partition)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("prefixes"), "Invalid replication prefixes", err.Error())
		return
	}
	roleName := plan.RoleName.ValueString()
	var arn string
	// The role deleted outside Terraform is created again.
	switch role, err := iamrole.Read(ctx, ic, roleName); {
	case notfound.Is(err):
		if arn, err = iamrole.Create(ctx, ic, roleName, iampolicy.ReplicationTrust().JSON(),
			"S3 replication of "+plan.Bucket.ValueString()+" (flinkstate_bucket_replication)", nil, replicationRetryBound); err != nil {
			addProblem(&resp.Diagnostics, "Creating the replication role", roleName, awsErr(ctx, err), "")
			return
		}
	case err != nil:
		addProblem(&resp.Diagnostics, "Reading", "IAM role "+roleName, awsErr(ctx, err), "")
		return
	default:
		arn = role.ARN
	}
	setPrivateString(ctx, resp.Private, privateRoleARN, arn, &resp.Diagnostics)
	if err := iamrole.PutPolicy(ctx, ic, roleName, policy, replicationRetryBound); err != nil {
		addProblem(&resp.Diagnostics, "Updating the replication policy of", "IAM role "+roleName, awsErr(ctx, err), "")
		return
	}
	plan.ID, plan.RoleARN, plan.DestinationRegion, plan.PolicyJSON = state.ID, types.StringValue(arn), types.StringValue(region), types.StringValue(policy)
	if r.put(ctx, c, &plan, partition, &resp.Diagnostics) {
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	}
}

// Delete removes the replication configuration and the role this resource
// created. Objects, in either bucket, are never touched.
func (r *bucketReplicationResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state bucketReplicationModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	ctx, cancel := r.meta.boundAWS(ctx, awsWriteBound)
	defer cancel()
	c, ic := r.clients(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := s3state.DeleteReplication(ctx, c, state.ID.ValueString()); err != nil {
		addProblem(&resp.Diagnostics, "Deleting the replication configuration of", "bucket "+state.ID.ValueString(), awsErr(ctx, err), "")
		return
	}
	if err := iamrole.Delete(ctx, ic, state.RoleName.ValueString(), replicationRetryBound); err != nil {
		addProblem(&resp.Diagnostics, "Deleting the replication role", state.RoleName.ValueString(), awsErr(ctx, err), "")
	}
}

// ImportState takes the source bucket's name; the role is the one its
// replication configuration names.
func (r *bucketReplicationResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if msg := store.ValidateBucketName(req.ID); msg != "" {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("%q: the import ID is the source bucket's name, which %s.", req.ID, msg))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("bucket"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("prefixes"), emptyList())...)
}
