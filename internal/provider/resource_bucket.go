package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws/arn"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/awsclient"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/s3state"
)

type bucketResource struct{ resourceBase }

var (
	_ resource.ResourceWithConfigure   = (*bucketResource)(nil)
	_ resource.ResourceWithImportState = (*bucketResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*bucketResource)(nil)
)

func newBucketResource() resource.Resource { return &bucketResource{} }

type bucketModel struct {
	ID                              types.String   `tfsdk:"id"`
	OwnerToken                      types.String   `tfsdk:"owner_token"`
	Bucket                          types.String   `tfsdk:"bucket"`
	ARN                             types.String   `tfsdk:"arn"`
	KMSKeyARN                       types.String   `tfsdk:"kms_key_arn"`
	AbortIncompleteMultipartDays    types.Int64    `tfsdk:"abort_incomplete_multipart_days"`
	EnforceTLS                      types.Bool     `tfsdk:"enforce_tls"`
	Versioning                      types.Bool     `tfsdk:"versioning"`
	NoncurrentVersionExpirationDays types.Int64    `tfsdk:"noncurrent_version_expiration_days"`
	Tags                            types.Map      `tfsdk:"tags"`
	TagsAll                         types.Map      `tfsdk:"tags_all"`
	ForceDestroy                    types.Bool     `tfsdk:"force_destroy"`
	PublicAccessBlocked             types.Bool     `tfsdk:"public_access_blocked"`
	EncryptionConfigured            types.Bool     `tfsdk:"encryption_configured"`
	UnsafeLifecycleRules            types.List     `tfsdk:"unsafe_lifecycle_rules"`
	ForeignPolicyStatements         types.List     `tfsdk:"foreign_policy_statements"`
	Timeouts                        timeouts.Value `tfsdk:"timeouts"`
}

func (r *bucketResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_bucket"
}

func (r *bucketResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "An S3 bucket hardened for Flink state: Block Public Access on, BucketOwnerEnforced, default encryption " +
			"(SSE-S3, or SSE-KMS with a bucket key), a lifecycle rule that aborts incomplete multipart uploads, a deny-non-TLS " +
			"bucket policy and optional versioning. It never gets an expiration rule on current objects: incremental " +
			"checkpoints share files, and expiring them by age breaks restores.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:      true,
				Description:   "The bucket name.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"owner_token": schema.StringAttribute{
				Computed: true,
				Description: "The token of the bucket's ownership marker (`.flinkstate-bucket.json`), written with a conditional " +
					"write right after the bucket is created: of two applies racing to create one bucket (in us-east-1 S3 answers 200 " +
					"to creating a bucket the account already owns), only one gets it, and force_destroy deletes nothing unless the " +
					"marker still names this token. Null for a bucket created by an earlier version of the provider.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"bucket": schema.StringAttribute{
				Required:      true,
				Description:   "Bucket name (S3 general purpose bucket naming rules). Changing it replaces the bucket. A name with dots is a warning: Flink reaches such a bucket over TLS only with path-style access (`fs.s3a.path.style.access = \"true\"` in the deployment's flink_configuration).",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:    []validator.String{bucketNameCheck},
			},
			"arn": schema.StringAttribute{
				Computed:      true,
				Description:   "ARN of the bucket.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"kms_key_arn": schema.StringAttribute{
				Optional:    true,
				Description: "KMS key ARN for SSE-KMS default encryption with an S3 bucket key. Unset: SSE-S3 (AES256). It must be in the provider's region, and so in its partition (aws, aws-cn, aws-us-gov).",
				Validators:  []validator.String{kmsKeyOrAliasARNCheck},
			},
			"abort_incomplete_multipart_days": schema.Int64Attribute{
				Optional:    true,
				Computed:    true,
				Default:     int64default.StaticInt64(1),
				Description: "Days after which incomplete multipart uploads (left by failed checkpoints) are aborted. Default 1.",
				Validators:  []validator.Int64{int64validator.Between(1, 365)},
			},
			"enforce_tls": schema.BoolAttribute{
				Optional:    true,
				Computed:    true,
				Default:     booldefault.StaticBool(true),
				Description: "Attach a bucket policy denying every request not made over TLS. Default true.",
			},
			"versioning": schema.BoolAttribute{
				Optional:    true,
				Computed:    true,
				Default:     booldefault.StaticBool(false),
				Description: "Enable versioning; noncurrent versions then expire after noncurrent_version_expiration_days. Default false.",
			},
			"noncurrent_version_expiration_days": schema.Int64Attribute{
				Optional:    true,
				Computed:    true,
				Default:     int64default.StaticInt64(30),
				Description: "With versioning, days after which noncurrent versions expire. Current objects never expire. Default 30.",
				Validators:  []validator.Int64{int64validator.Between(1, 3650)},
			},
			"tags": schema.MapAttribute{
				Optional:    true,
				ElementType: types.StringType,
				Description: "Tags of the bucket. The provider's aws.default_tags are added; these tags win over a default tag with the same key.",
				Validators:  []validator.Map{awsTagsCheck},
			},
			"tags_all": tagsAllAttribute(),
			"encryption_configured": schema.BoolAttribute{
				Computed: true,
				Description: "Whether the bucket has a default encryption configuration (SSE-S3, or SSE-KMS with kms_key_arn). Always " +
					"planned as true: a bucket without one (removed outside Terraform, or a create interrupted before it was set) shows " +
					"in the next plan, and apply sets it.",
			},
			"public_access_blocked": schema.BoolAttribute{
				Computed: true,
				Description: "Whether all four Block Public Access settings are on. Always planned as true: if they are turned off " +
					"outside Terraform, the next plan shows it and apply turns them on again.",
			},
			"unsafe_lifecycle_rules": schema.ListAttribute{
				Computed:    true,
				ElementType: types.StringType,
				Description: "Lifecycle rules that expire or transition current objects of the whole bucket, or that were added inside the " +
					"provider's own rules. Always planned empty: such a rule added outside Terraform shows in the next plan, and apply " +
					"writes the provider's rules back without it (shared checkpoint files are old and still needed).",
			},
			"foreign_policy_statements": schema.ListAttribute{
				Computed:    true,
				ElementType: types.StringType,
				Description: "Sids (or #index) of bucket policy statements the provider did not write. Always planned empty: a statement " +
					"added outside Terraform (e.g. a cross-account grant) shows in the next plan, and apply removes it, as " +
					"hashicorp/aws's exclusive-management resources do.",
			},
			"force_destroy": schema.BoolAttribute{
				Optional:    true,
				Computed:    true,
				Default:     booldefault.StaticBool(false),
				Description: "Delete every object (and version) when the bucket is destroyed. Default false: destroying a non-empty bucket fails and says what it holds.",
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeoutsBlock(ctx, timeouts.Opts{Create: true, Read: true, Update: true, Delete: true},
				"every S3 call of the operation must be answered within it (create, update, delete: default 5m; read, also at plan: default 30s)"),
		},
	}
	markdownDescriptions(&resp.Schema)
}

func (r *bucketResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("bucket"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("force_destroy"), false)...)
}

func (r *bucketResource) s3(ctx context.Context, diags *diag.Diagnostics) *s3.Client {
	if c := r.meta.awsOrDiag(ctx, diags); c != nil {
		return c.S3
	}
	return nil
}

func (r *bucketResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan bucketModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	timeout, d := plan.Timeouts.Create(ctx, awsWriteBound)
	resp.Diagnostics.Append(d...)
	ctx, cancel := r.meta.boundAWS(ctx, timeout)
	defer cancel()
	cl := r.s3(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	name := plan.Bucket.ValueString()
	// Look first: CreateBucket alone would adopt a bucket this account owns
	// (200 in us-east-1).
	switch st, err := s3state.ProbeBucket(ctx, cl, name); {
	case err != nil:
		resp.Diagnostics.AddAttributeError(path.Root("bucket"), problemSummary("Creating", "bucket "+name),
			problemDetail("Looking for an existing bucket before creating it: "+awsErr(ctx, err), "Nothing was created."))
		return
	case st == s3state.BucketOwnedByYou:
		resp.Diagnostics.AddAttributeError(path.Root("bucket"), "Bucket already exists", alreadyExists("s3://"+name, name))
		return
	case st == s3state.BucketOwnedByOther:
		resp.Diagnostics.AddAttributeError(path.Root("bucket"), "Bucket name taken",
			fmt.Sprintf("s3://%s exists and this account may not use it (another account owns it). Nothing was changed. Choose another bucket name.", name))
		return
	}
	if err := s3state.CreateBucket(ctx, cl, name, cl.Options().Region); err != nil {
		switch {
		case s3state.IsBucketAlreadyOwnedByYou(err):
			resp.Diagnostics.AddAttributeError(path.Root("bucket"), "Bucket already exists", alreadyExists("s3://"+name, name))
		case s3state.IsBucketAlreadyExists(err):
			resp.Diagnostics.AddAttributeError(path.Root("bucket"), "Bucket name taken",
				fmt.Sprintf("s3:CreateBucket %s: the name is held by another account (bucket names are global). Nothing was changed. Choose another bucket name.", name))
		default:
			// A create whose answer was lost may have made the bucket: the
			// next apply's look finds it and says how to import it.
			resp.Diagnostics.AddAttributeError(path.Root("bucket"), problemSummary("Creating", "bucket "+name),
				problemDetail(awsErr(ctx, err), "If the bucket was created nonetheless, the next apply refuses to adopt it and gives the import command."))
		}
		return
	}
	// CreateBucket's success does not say this apply made the bucket (200
	// in us-east-1 for a bucket the account owns): the ownership marker,
	// written only if none exists, does. A loser records and changes nothing.
	token := s3state.NewOwnerToken()
	plan.OwnerToken = types.StringNull()
	if err := s3state.WriteBucketMarker(ctx, cl, name, token, r.meta.userAgent()); err != nil {
		var c *s3state.ConflictError
		if errors.As(err, &c) {
			resp.Diagnostics.AddAttributeError(path.Root("bucket"), "Bucket already exists", alreadyExists(c.Detail+"; the bucket", name))
			return
		}
		// The bucket is there and no one else claimed it: recorded below
		// (tainted by this error), never an orphan.
		resp.Diagnostics.AddAttributeError(path.Root("bucket"), problemSummary("Recording ownership of", "bucket "+name),
			problemDetail(awsErr(ctx, err), "The bucket was created and is kept in state; the next apply replaces it."))
	} else {
		plan.OwnerToken = types.StringValue(token)
	}
	// From here on the bucket exists: record it, so that a later failure
	// leaves a tainted resource Terraform knows about, not an orphan.
	plan.ID = types.StringValue(name)
	plan.ARN = types.StringValue(bucketARN(r.partition(ctx), name))
	plan.PublicAccessBlocked = types.BoolValue(false)  // until PutPublicAccessBlock succeeds
	plan.EncryptionConfigured = types.BoolValue(false) // until PutBucketEncryption succeeds
	plan.UnsafeLifecycleRules, plan.ForeignPolicyStatements = emptyList(), emptyList()
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !r.harden(ctx, cl, plan, nil, &resp.Diagnostics) {
		if errors.Is(ctx.Err(), context.Canceled) {
			// Interrupted (Ctrl-C): an error would taint the bucket and the
			// next apply would destroy and recreate it. It is kept, not
			// hardened yet (public_access_blocked and encryption_configured
			// false), so the next plan shows an update that finishes the job.
			var kept diag.Diagnostics
			for _, d := range resp.Diagnostics {
				if d.Severity() != diag.SeverityError {
					kept.Append(d)
				}
			}
			resp.Diagnostics = kept
			resp.Diagnostics.AddWarning("Bucket created, hardening interrupted",
				fmt.Sprintf("s3://%s was created, but the run was cancelled before its hardening was complete. It is kept (not "+
					"replaced): the next plan shows an update, and that apply finishes the hardening.", name))
		}
		return
	}
	plan.PublicAccessBlocked = types.BoolValue(true)
	plan.EncryptionConfigured = types.BoolValue(true)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// ModifyPlan always plans Block Public Access on, so that settings turned
// off outside Terraform show as a change and are restored.
func (r *bucketResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if !req.State.Raw.IsNull() {
		var state bucketModel
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
		var planned types.String
		if !req.Plan.Raw.IsNull() {
			resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("bucket"), &planned)...)
		}
		if state.ForceDestroy.ValueBool() && (req.Plan.Raw.IsNull() || !planned.IsUnknown() && !planned.Equal(state.Bucket)) {
			r.warnObjectsDeleted(ctx, state, resp)
		}
	}
	if req.Plan.Raw.IsNull() {
		return
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("public_access_blocked"), true)...)
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("encryption_configured"), true)...)
	var tags types.Map
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("tags"), &tags)...)
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("tags_all"), r.meta.planTagsAll(ctx, tags, &resp.Diagnostics))...)
	r.bucketPlanChecks(ctx, req, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("unsafe_lifecycle_rules"), emptyList())...)
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("foreign_policy_statements"), emptyList())...)
}

// warnObjectsDeleted says at plan what destroying or replacing a bucket with
// force_destroy deletes. Reading S3 here is for an existing bucket only.
func (r *bucketResource) warnObjectsDeleted(ctx context.Context, state bucketModel, resp *resource.ModifyPlanResponse) {
	name := state.ID.ValueString()
	timeout, d := state.Timeouts.Read(ctx, awsReadBound)
	resp.Diagnostics.Append(d...)
	ctx, cancel := r.meta.boundAWS(ctx, timeout)
	defer cancel()
	cl := r.s3(ctx, &resp.Diagnostics)
	if cl == nil {
		return
	}
	// One listing counts the objects and finds the newest checkpoint.
	cp, n, more, err := checkpoint.NewestInBucket(ctx, cl, name, 10000)
	if err != nil {
		addProblemWarning(&resp.Diagnostics, "Counting what force_destroy would delete in", "bucket "+name, awsErr(ctx, err),
			fmt.Sprintf("Destroying s3://%s with force_destroy = true deletes every object in it, Flink state included.", name))
		return
	}
	if n == 0 {
		return
	}
	resp.Diagnostics.AddWarning("force_destroy will delete Flink state",
		fmt.Sprintf("Destroying or replacing s3://%s (force_destroy = true) deletes %s, every version included: Flink checkpoints, "+
			"savepoints and HA metadata may be among them.%s Stop here unless that is intended.", name, countObjects(n, more), newestCheckpointNote(cp)))
}

func (r *bucketResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state bucketModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	timeout, d := plan.Timeouts.Update(ctx, awsWriteBound)
	resp.Diagnostics.Append(d...)
	ctx, cancel := r.meta.boundAWS(ctx, timeout)
	defer cancel()
	cl := r.s3(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.ID, plan.ARN = state.ID, state.ARN
	prior := state.hardening(ctx, &resp.Diagnostics)
	if !r.harden(ctx, cl, plan, &prior, &resp.Diagnostics) {
		return
	}
	plan.PublicAccessBlocked = types.BoolValue(true)
	plan.EncryptionConfigured = types.BoolValue(true)
	plan.UnsafeLifecycleRules, plan.ForeignPolicyStatements = emptyList(), emptyList()
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// harden makes the S3 calls that bring the bucket to the plan's settings
// (all of them after create, prior nil), stopping at the first failure.
func (r *bucketResource) harden(ctx context.Context, cl *s3.Client, plan bucketModel, prior *s3state.Hardening, diags *diag.Diagnostics) bool {
	name := plan.Bucket.ValueString()
	want := plan.settings(ctx, diags)
	if diags.HasError() {
		return false
	}
	for _, w := range s3state.Writes(name, r.partition(ctx), want, prior) {
		if err := w.Run(ctx, cl, name); err != nil {
			addProblem(diags, "Configuring", "bucket "+name, awsErr(ctx, err),
				"The settings before "+w.Action+" were applied; apply again to finish.")
			return false
		}
	}
	return true
}

// settings are the hardening settings the model asks for.
func (m bucketModel) settings(ctx context.Context, diags *diag.Diagnostics) s3state.Settings {
	return s3state.Settings{
		KMSKeyARN:                       m.KMSKeyARN.ValueString(),
		AbortIncompleteMultipartDays:    int32(m.AbortIncompleteMultipartDays.ValueInt64()),
		Versioning:                      m.Versioning.ValueBool(),
		NoncurrentVersionExpirationDays: int32(m.NoncurrentVersionExpirationDays.ValueInt64()),
		EnforceTLS:                      m.EnforceTLS.ValueBool(),
		Tags:                            stringMap(ctx, m.TagsAll, diags),
	}
}

// hardening is the bucket as last read (the state), drift included.
func (m bucketModel) hardening(ctx context.Context, diags *diag.Diagnostics) s3state.Hardening {
	h := s3state.Hardening{Settings: m.settings(ctx, diags), PublicAccessBlocked: m.PublicAccessBlocked.ValueBool(),
		EncryptionMissing: !m.EncryptionConfigured.IsNull() && !m.EncryptionConfigured.ValueBool()}
	h.UnsafeLifecycleRules = stringList(ctx, m.UnsafeLifecycleRules, diags)
	h.ForeignPolicyStatements = stringList(ctx, m.ForeignPolicyStatements, diags)
	return h
}

func (r *bucketResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state bucketModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	timeout, d := state.Timeouts.Read(ctx, awsReadBound)
	resp.Diagnostics.Append(d...)
	ctx, cancel := r.meta.boundAWS(ctx, timeout)
	defer cancel()
	cl := r.s3(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	name := state.ID.ValueString()
	if err := s3state.FindBucket(ctx, cl, name); notfound.Is(err) {
		resp.State.RemoveResource(ctx)
		return
	} else if err != nil {
		addProblem(&resp.Diagnostics, "Reading", "bucket "+name, awsErr(ctx, err), "")
		return
	}
	h, err := s3state.ReadHardening(ctx, cl, name)
	if err != nil {
		addProblem(&resp.Diagnostics, "Reading", "bucket "+name, awsErr(ctx, err), "")
		return
	}
	if state.OwnerToken.IsNull() {
		// An import takes the bucket as it is, marker included.
		if m, err := s3state.ReadBucketMarker(ctx, cl, name); err != nil {
			addProblem(&resp.Diagnostics, "Reading", "bucket "+name, awsErr(ctx, err), "")
			return
		} else if m != nil {
			state.OwnerToken = types.StringValue(m.Owner)
		}
	}
	state.Bucket = types.StringValue(name)
	state.ARN = types.StringValue(bucketARN(r.partition(ctx), name))
	state.PublicAccessBlocked = types.BoolValue(h.PublicAccessBlocked)
	state.EncryptionConfigured = types.BoolValue(!h.EncryptionMissing)
	state.KMSKeyARN = types.StringNull()
	if h.KMSKeyARN != "" {
		state.KMSKeyARN = types.StringValue(h.KMSKeyARN)
	}
	state.Versioning = types.BoolValue(h.Versioning)
	state.AbortIncompleteMultipartDays = types.Int64Value(int64(h.AbortIncompleteMultipartDays))
	switch {
	case h.HasNoncurrentRule:
		state.NoncurrentVersionExpirationDays = types.Int64Value(int64(h.NoncurrentVersionExpirationDays))
	case h.Versioning:
		// Versioning on without the provider's rule (removed outside
		// Terraform): noncurrent versions never expire. 0 is no valid
		// configuration, so the plan shows the drift and apply writes the rule back.
		state.NoncurrentVersionExpirationDays = types.Int64Value(0)
	case state.NoncurrentVersionExpirationDays.IsNull():
		// No versioning rule (versioning off, e.g. after import): the default stands.
		state.NoncurrentVersionExpirationDays = types.Int64Value(30)
	}
	state.UnsafeLifecycleRules = listOfStrings(h.UnsafeLifecycleRules)
	state.EnforceTLS = types.BoolValue(h.EnforceTLS)
	state.ForeignPolicyStatements = listOfStrings(h.ForeignPolicyStatements)
	// tags_all is what the bucket carries, tags the part that is not
	// aws.default_tags.
	state.Tags, state.TagsAll = r.meta.readTags(ctx, h.Tags, state.Tags, &resp.Diagnostics)
	if state.ForceDestroy.IsNull() {
		state.ForceDestroy = types.BoolValue(false)
	}
	state.Timeouts = knownTimeouts(ctx, state.Timeouts)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *bucketResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state bucketModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	timeout, d := state.Timeouts.Delete(ctx, awsWriteBound)
	resp.Diagnostics.Append(d...)
	ctx, cancel := r.meta.boundAWS(ctx, timeout)
	defer cancel()
	cl := r.s3(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	name := state.ID.ValueString()
	if token := state.OwnerToken.ValueString(); token != "" {
		// Only the bucket this configuration created: its marker still
		// names this token.
		m, err := s3state.ReadBucketMarker(ctx, cl, name)
		if err != nil {
			addProblem(&resp.Diagnostics, "Checking the ownership of", "bucket "+name, awsErr(ctx, err), "Nothing was deleted.")
			return
		}
		// A marker that is gone is this resource's own destroy cut short
		// after removing it (the marker goes last, just before the bucket).
		if m != nil && m.Owner != token {
			addProblem(&resp.Diagnostics, "Deleting", "bucket "+name,
				fmt.Sprintf("its ownership marker (%s) names another owner: it is not the bucket this configuration created, so nothing was deleted", s3state.BucketMarkerKey),
				"If it is not yours, remove it from this state (terraform state rm ADDRESS, the address Terraform names above). If it is, import it again.")
			return
		}
	}
	if state.ForceDestroy.ValueBool() {
		n, err := s3state.DeleteAll(ctx, cl, name, "", nil)
		if err != nil {
			addProblem(&resp.Diagnostics, "Emptying", "bucket "+name, awsErr(ctx, err), "The bucket was kept; apply the destroy again.")
			return
		}
		if n > 0 {
			resp.Diagnostics.AddWarning("Bucket emptied", fmt.Sprintf("force_destroy deleted %d object versions from s3://%s.", n, name))
		}
	} else {
		n, more, err := s3state.Contents(ctx, cl, name, "", 1000)
		if err = awsclient.NotFound("bucket "+name, err); err != nil && !notfound.Is(err) {
			addProblem(&resp.Diagnostics, "Checking the contents of", "bucket "+name, awsErr(ctx, err), "Nothing was deleted.")
			return
		}
		if n > 0 {
			resp.Diagnostics.AddAttributeError(path.Root("force_destroy"), "Bucket is not empty",
				fmt.Sprintf("s3://%s holds %s (Flink checkpoints, savepoints or HA metadata may be among them). "+
					"Nothing was deleted. Move or delete them yourself, or set force_destroy = true and apply before destroying "+
					"to have the provider delete them.", name, countObjects(n, more)))
			return
		}
	}
	// The ownership marker (every version) goes last, just before the bucket.
	if _, err := s3state.DeleteAll(ctx, cl, name, s3state.BucketMarkerKey, nil); err != nil {
		addProblem(&resp.Diagnostics, "Deleting", "bucket "+name, "removing its ownership marker: "+awsErr(ctx, err), "The bucket was kept; apply the destroy again.")
		return
	}
	if err := s3state.DeleteBucket(ctx, cl, name); err != nil {
		addProblem(&resp.Diagnostics, "Deleting", "bucket "+name, awsErr(ctx, err), "")
	}
}

// bucketARN is the bucket's ARN in the partition (aws/arn builds it).
func bucketARN(partition, name string) string {
	return arn.ARN{Partition: partition, Service: "s3", Resource: name}.String()
}

// partition is the provider's AWS partition; at apply the region is known.
func (r *bucketResource) partition(ctx context.Context) string {
	p, _ := r.meta.Partition(ctx)
	return p
}
