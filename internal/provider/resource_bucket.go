package provider

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/arn"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
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
	"github.com/flinkstate/terraform-provider-flinkstate/internal/s3state"
)

type bucketResource struct{ resourceBase }

func newBucketResource() resource.Resource { return &bucketResource{} }

type bucketModel struct {
	ID                              types.String `tfsdk:"id"`
	Bucket                          types.String `tfsdk:"bucket"`
	ARN                             types.String `tfsdk:"arn"`
	KMSKeyARN                       types.String `tfsdk:"kms_key_arn"`
	AbortIncompleteMultipartDays    types.Int64  `tfsdk:"abort_incomplete_multipart_days"`
	EnforceTLS                      types.Bool   `tfsdk:"enforce_tls"`
	Versioning                      types.Bool   `tfsdk:"versioning"`
	NoncurrentVersionExpirationDays types.Int64  `tfsdk:"noncurrent_version_expiration_days"`
	Tags                            types.Map    `tfsdk:"tags"`
	TagsAll                         types.Map    `tfsdk:"tags_all"`
	ForceDestroy                    types.Bool   `tfsdk:"force_destroy"`
	PublicAccessBlocked             types.Bool   `tfsdk:"public_access_blocked"`
	UnsafeLifecycleRules            types.List   `tfsdk:"unsafe_lifecycle_rules"`
	ForeignPolicyStatements         types.List   `tfsdk:"foreign_policy_statements"`
}

func (r *bucketResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_bucket"
}

func (r *bucketResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
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
			"bucket": schema.StringAttribute{
				Required:      true,
				Description:   "Bucket name (S3 general purpose bucket naming rules). Changing it replaces the bucket.",
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
				Description: "KMS key ARN for SSE-KMS default encryption with an S3 bucket key. Unset: SSE-S3 (AES256).",
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
	}
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
	ctx, cancel := r.meta.boundAWS(ctx, awsWriteBound)
	defer cancel()
	var plan bucketModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	cl := r.s3(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	name := plan.Bucket.ValueString()
	// Look first: CreateBucket alone would adopt a bucket this account owns
	// (200 in us-east-1).
	switch st, err := s3state.ProbeBucket(ctx, cl, name); {
	case err != nil:
		resp.Diagnostics.AddAttributeError(path.Root("bucket"), "Creating bucket failed",
			fmt.Sprintf("Looking for an existing bucket %s before creating it: %s", name, awsErr(ctx, err)))
		return
	case st == s3state.BucketOwnedByYou:
		resp.Diagnostics.AddAttributeError(path.Root("bucket"), "Bucket already exists", alreadyExists("s3://"+name, name))
		return
	case st == s3state.BucketOwnedByOther:
		resp.Diagnostics.AddAttributeError(path.Root("bucket"), "Bucket name taken",
			fmt.Sprintf("s3://%s exists and this account may not use it (another account owns it). Nothing was changed. Choose another bucket name.", name))
		return
	}
	in := &s3.CreateBucketInput{Bucket: aws.String(name), ObjectOwnership: s3types.ObjectOwnershipBucketOwnerEnforced}
	if region := cl.Options().Region; region != "us-east-1" {
		in.CreateBucketConfiguration = &s3types.CreateBucketConfiguration{LocationConstraint: s3types.BucketLocationConstraint(region)}
	}
	if _, err := cl.CreateBucket(ctx, in); err != nil {
		switch {
		case s3state.IsBucketAlreadyOwnedByYou(err):
			resp.Diagnostics.AddAttributeError(path.Root("bucket"), "Bucket already exists", alreadyExists("s3://"+name, name))
		case s3state.IsBucketAlreadyExists(err):
			resp.Diagnostics.AddAttributeError(path.Root("bucket"), "Bucket name taken",
				fmt.Sprintf("s3:CreateBucket %s: the name is held by another account (bucket names are global). Nothing was changed. Choose another bucket name.", name))
		default:
			resp.Diagnostics.AddAttributeError(path.Root("bucket"), "Creating bucket failed", fmt.Sprintf("s3:CreateBucket %s: %s", name, awsErr(ctx, err)))
		}
		return
	}
	// From here on the bucket exists: record it, so that a later failure
	// leaves a tainted resource Terraform knows about, not an orphan.
	plan.ID = types.StringValue(name)
	plan.ARN = types.StringValue(bucketARN(r.partition(ctx), name))
	plan.PublicAccessBlocked = types.BoolValue(false) // until PutPublicAccessBlock succeeds
	plan.UnsafeLifecycleRules, plan.ForeignPolicyStatements = emptyList(), emptyList()
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	resp.Diagnostics.Append(r.apply(ctx, cl, plan, nil)...)
	if !resp.Diagnostics.HasError() {
		plan.PublicAccessBlocked = types.BoolValue(true)
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	}
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
			r.warnObjectsDeleted(ctx, state.ID.ValueString(), resp)
		}
	}
	if req.Plan.Raw.IsNull() {
		return
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("public_access_blocked"), true)...)
	var tags types.Map
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("tags"), &tags)...)
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("tags_all"), r.meta.planTagsAll(ctx, tags, &resp.Diagnostics))...)
	r.bucketPlanChecks(ctx, req, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("unsafe_lifecycle_rules"), emptyList())...)
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("foreign_policy_statements"), emptyList())...)
}

// warnObjectsDeleted says at plan what destroying or replacing a bucket with
// force_destroy deletes. Reading S3 here is for an existing bucket only.
func (r *bucketResource) warnObjectsDeleted(ctx context.Context, name string, resp *resource.ModifyPlanResponse) {
	ctx, cancel := r.meta.boundAWS(ctx, awsReadBound)
	defer cancel()
	cl := r.s3(ctx, &resp.Diagnostics)
	if cl == nil {
		return
	}
	n, more, err := s3state.Contents(ctx, cl, name, "", 10000)
	if err != nil {
		resp.Diagnostics.AddWarning("Could not count what force_destroy would delete",
			fmt.Sprintf("Destroying s3://%s with force_destroy = true deletes every object in it; counting them failed: %s", name, awsErr(ctx, err)))
		return
	}
	if n == 0 {
		return
	}
	resp.Diagnostics.AddWarning("force_destroy will delete Flink state",
		fmt.Sprintf("Destroying or replacing s3://%s (force_destroy = true) deletes %s, every version included: Flink checkpoints, "+
			"savepoints and HA metadata may be among them. Stop here unless that is intended.", name, countObjects(n, more)))
}

func emptyList() types.List { return types.ListValueMust(types.StringType, []attr.Value{}) }

func listOfStrings(ss []string) types.List {
	vals := make([]attr.Value, len(ss))
	for i, s := range ss {
		vals[i] = types.StringValue(s)
	}
	return types.ListValueMust(types.StringType, vals)
}

func (r *bucketResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	ctx, cancel := r.meta.boundAWS(ctx, awsWriteBound)
	defer cancel()
	var plan, state bucketModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	cl := r.s3(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.ID, plan.ARN = state.ID, state.ARN
	resp.Diagnostics.Append(r.apply(ctx, cl, plan, &state)...)
	plan.PublicAccessBlocked = types.BoolValue(true)
	plan.UnsafeLifecycleRules, plan.ForeignPolicyStatements = emptyList(), emptyList()
	if !resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	}
}

// apply writes every hardening setting of the plan (all of them on create,
// the changed ones on update).
func (r *bucketResource) apply(ctx context.Context, cl *s3.Client, plan bucketModel, prior *bucketModel) diag.Diagnostics {
	var diags diag.Diagnostics
	name := aws.String(plan.Bucket.ValueString())
	step := func(what string, err error) bool {
		if err != nil {
			diags.AddError("Configuring bucket failed", fmt.Sprintf("%s on %s: %s", what, *name, err))
			return false
		}
		return true
	}
	if prior == nil || !prior.PublicAccessBlocked.ValueBool() {
		_, err := cl.PutPublicAccessBlock(ctx, &s3.PutPublicAccessBlockInput{Bucket: name,
			PublicAccessBlockConfiguration: &s3types.PublicAccessBlockConfiguration{
				BlockPublicAcls: aws.Bool(true), BlockPublicPolicy: aws.Bool(true),
				IgnorePublicAcls: aws.Bool(true), RestrictPublicBuckets: aws.Bool(true)}})
		if !step("s3:PutPublicAccessBlock", err) {
			return diags
		}
		// BucketOwnerEnforced was set by CreateBucket (x-amz-object-ownership),
		// atomically with the bucket itself.
	}
	if prior == nil || !prior.KMSKeyARN.Equal(plan.KMSKeyARN) {
		rule := s3types.ServerSideEncryptionRule{ApplyServerSideEncryptionByDefault: &s3types.ServerSideEncryptionByDefault{
			SSEAlgorithm: s3types.ServerSideEncryptionAes256}}
		if k := plan.KMSKeyARN.ValueString(); k != "" {
			rule.ApplyServerSideEncryptionByDefault = &s3types.ServerSideEncryptionByDefault{
				SSEAlgorithm: s3types.ServerSideEncryptionAwsKms, KMSMasterKeyID: aws.String(k)}
			rule.BucketKeyEnabled = aws.Bool(true)
		}
		_, err := cl.PutBucketEncryption(ctx, &s3.PutBucketEncryptionInput{Bucket: name,
			ServerSideEncryptionConfiguration: &s3types.ServerSideEncryptionConfiguration{Rules: []s3types.ServerSideEncryptionRule{rule}}})
		if !step("s3:PutBucketEncryption", err) {
			return diags
		}
	}
	if prior == nil || !prior.Versioning.Equal(plan.Versioning) {
		if plan.Versioning.ValueBool() || prior != nil {
			status := s3types.BucketVersioningStatusSuspended
			if plan.Versioning.ValueBool() {
				status = s3types.BucketVersioningStatusEnabled
			}
			_, err := cl.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: name,
				VersioningConfiguration: &s3types.VersioningConfiguration{Status: status}})
			if !step("s3:PutBucketVersioning", err) {
				return diags
			}
		}
	}
	if prior == nil || len(prior.UnsafeLifecycleRules.Elements()) > 0 || !prior.AbortIncompleteMultipartDays.Equal(plan.AbortIncompleteMultipartDays) ||
		!prior.Versioning.Equal(plan.Versioning) || !prior.NoncurrentVersionExpirationDays.Equal(plan.NoncurrentVersionExpirationDays) {
		_, err := cl.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{Bucket: name,
			LifecycleConfiguration: &s3types.BucketLifecycleConfiguration{Rules: lifecycleRules(plan)}})
		if !step("s3:PutBucketLifecycleConfiguration", err) {
			return diags
		}
	}
	if prior == nil || !prior.EnforceTLS.Equal(plan.EnforceTLS) || len(prior.ForeignPolicyStatements.Elements()) > 0 {
		var err error
		if plan.EnforceTLS.ValueBool() {
			_, err = cl.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: name, Policy: aws.String(s3state.TLSPolicy(r.partition(ctx), *name))})
			step("s3:PutBucketPolicy", err)
		} else if prior != nil && (prior.EnforceTLS.ValueBool() || len(prior.ForeignPolicyStatements.Elements()) > 0) {
			_, err = cl.DeleteBucketPolicy(ctx, &s3.DeleteBucketPolicyInput{Bucket: name})
			step("s3:DeleteBucketPolicy", err)
		}
		if err != nil {
			return diags
		}
	}
	if prior == nil || !prior.TagsAll.Equal(plan.TagsAll) {
		tags := stringMap(ctx, plan.TagsAll, &diags)
		var err error
		if len(tags) > 0 {
			var set []s3types.Tag
			for k, v := range tags {
				set = append(set, s3types.Tag{Key: aws.String(k), Value: aws.String(v)})
			}
			_, err = cl.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: name, Tagging: &s3types.Tagging{TagSet: set}})
			step("s3:PutBucketTagging", err)
		} else if prior != nil {
			_, err = cl.DeleteBucketTagging(ctx, &s3.DeleteBucketTaggingInput{Bucket: name})
			step("s3:DeleteBucketTagging", err)
		}
	}
	return diags
}

func lifecycleRules(plan bucketModel) []s3types.LifecycleRule {
	var out []s3types.LifecycleRule
	for _, r := range s3state.Lifecycle(int32(plan.AbortIncompleteMultipartDays.ValueInt64()), plan.Versioning.ValueBool(),
		int32(plan.NoncurrentVersionExpirationDays.ValueInt64())) {
		rule := s3types.LifecycleRule{ID: aws.String(r.ID), Status: s3types.ExpirationStatusEnabled,
			Filter: &s3types.LifecycleRuleFilter{Prefix: aws.String("")}}
		if r.AbortIncompleteMultipartDays > 0 {
			rule.AbortIncompleteMultipartUpload = &s3types.AbortIncompleteMultipartUpload{DaysAfterInitiation: aws.Int32(r.AbortIncompleteMultipartDays)}
		}
		if r.NoncurrentVersionDays > 0 {
			rule.NoncurrentVersionExpiration = &s3types.NoncurrentVersionExpiration{NoncurrentDays: aws.Int32(r.NoncurrentVersionDays)}
		}
		out = append(out, rule)
	}
	return out
}

func (r *bucketResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	ctx, cancel := r.meta.boundAWS(ctx, awsReadBound)
	defer cancel()
	var state bucketModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	cl := r.s3(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	name := aws.String(state.ID.ValueString())
	if err := s3state.FindBucket(ctx, cl, *name); err != nil {
		if s3state.IsNotFound(err) {
			resp.State.RemoveResource(ctx)
			return
		}
		resp.Diagnostics.AddError("Reading bucket failed", fmt.Sprintf("Bucket %s: %s", *name, awsErr(ctx, err)))
		return
	}
	state.Bucket = types.StringValue(*name)
	state.ARN = types.StringValue(bucketARN(r.partition(ctx), *name))

	// Block Public Access: all four on, or drift.
	pab, err := cl.GetPublicAccessBlock(ctx, &s3.GetPublicAccessBlockInput{Bucket: name})
	switch {
	case err == nil && pab.PublicAccessBlockConfiguration != nil:
		c := pab.PublicAccessBlockConfiguration
		state.PublicAccessBlocked = types.BoolValue(aws.ToBool(c.BlockPublicAcls) && aws.ToBool(c.BlockPublicPolicy) &&
			aws.ToBool(c.IgnorePublicAcls) && aws.ToBool(c.RestrictPublicBuckets))
	case err == nil || s3state.IsAbsentConfiguration(err):
		state.PublicAccessBlocked = types.BoolValue(false)
	default:
		resp.Diagnostics.AddError("Reading bucket failed", fmt.Sprintf("s3:GetPublicAccessBlock %s: %s", *name, err))
		return
	}
	// Encryption
	state.KMSKeyARN = types.StringNull()
	if enc, err := cl.GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: name}); err != nil && !s3state.IsAbsentConfiguration(err) {
		resp.Diagnostics.AddError("Reading bucket failed", fmt.Sprintf("s3:GetBucketEncryption %s: %s", *name, awsErr(ctx, err)))
		return
	} else if err == nil && enc.ServerSideEncryptionConfiguration != nil {
		for _, rule := range enc.ServerSideEncryptionConfiguration.Rules {
			if d := rule.ApplyServerSideEncryptionByDefault; d != nil && d.SSEAlgorithm == s3types.ServerSideEncryptionAwsKms {
				state.KMSKeyARN = types.StringValue(aws.ToString(d.KMSMasterKeyID))
			}
		}
	}
	// Versioning
	if v, err := cl.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: name}); err == nil {
		state.Versioning = types.BoolValue(v.Status == s3types.BucketVersioningStatusEnabled)
	} else {
		resp.Diagnostics.AddError("Reading bucket failed", fmt.Sprintf("s3:GetBucketVersioning %s: %s", *name, err))
		return
	}
	// Lifecycle: the provider's rules only.
	if lc, err := cl.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: name}); err == nil {
		abort := int64(0)
		for _, rule := range lc.Rules {
			if aws.ToString(rule.ID) == s3state.AbortMultipartRuleID && rule.AbortIncompleteMultipartUpload != nil {
				abort = int64(aws.ToInt32(rule.AbortIncompleteMultipartUpload.DaysAfterInitiation))
			}
			if aws.ToString(rule.ID) == s3state.NoncurrentVersionsRuleID && rule.NoncurrentVersionExpiration != nil {
				state.NoncurrentVersionExpirationDays = types.Int64Value(int64(aws.ToInt32(rule.NoncurrentVersionExpiration.NoncurrentDays)))
			}
		}
		state.AbortIncompleteMultipartDays = types.Int64Value(abort)
		// Expiring or moving current objects of the whole bucket, or inside
		// the provider's own rules, is drift.
		state.UnsafeLifecycleRules = listOfStrings(s3state.UnsafeRules(lc.Rules, func(rule s3types.LifecycleRule) bool {
			id := aws.ToString(rule.ID)
			return s3state.RulePrefix(rule) == "" || id == s3state.AbortMultipartRuleID || id == s3state.NoncurrentVersionsRuleID
		}))
		if state.NoncurrentVersionExpirationDays.IsNull() {
			// No versioning rule (versioning off, e.g. after import): the default stands.
			state.NoncurrentVersionExpirationDays = types.Int64Value(30)
		}
	} else if s3state.IsAbsentConfiguration(err) {
		state.AbortIncompleteMultipartDays = types.Int64Value(0)
		state.UnsafeLifecycleRules = emptyList()
	} else {
		resp.Diagnostics.AddError("Reading bucket failed", fmt.Sprintf("s3:GetBucketLifecycleConfiguration %s: %s", *name, awsErr(ctx, err)))
		return
	}
	// Policy
	if p, err := cl.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: name}); err == nil {
		state.EnforceTLS = types.BoolValue(s3state.PolicyDeniesInsecureTransport(aws.ToString(p.Policy)))
		state.ForeignPolicyStatements = listOfStrings(s3state.ForeignStatements(aws.ToString(p.Policy)))
	} else if s3state.IsAbsentConfiguration(err) {
		state.EnforceTLS = types.BoolValue(false)
		state.ForeignPolicyStatements = emptyList()
	} else {
		resp.Diagnostics.AddError("Reading bucket failed", fmt.Sprintf("s3:GetBucketPolicy %s: %s", *name, awsErr(ctx, err)))
		return
	}
	// Tags: tags_all is what the bucket carries, tags the part that is
	// not aws.default_tags.
	t, err := cl.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: name})
	if err != nil && !s3state.IsAbsentConfiguration(err) {
		resp.Diagnostics.AddError("Reading bucket failed", fmt.Sprintf("s3:GetBucketTagging %s: %s", *name, awsErr(ctx, err)))
		return
	}
	remote := map[string]string{}
	if err == nil {
		for _, tag := range t.TagSet {
			remote[aws.ToString(tag.Key)] = aws.ToString(tag.Value)
		}
	}
	state.Tags, state.TagsAll = r.meta.readTags(ctx, remote, state.Tags, &resp.Diagnostics)
	if state.ForceDestroy.IsNull() {
		state.ForceDestroy = types.BoolValue(false)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *bucketResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	ctx, cancel := r.meta.boundAWS(ctx, awsWriteBound)
	defer cancel()
	var state bucketModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	cl := r.s3(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	name := state.ID.ValueString()
	if state.ForceDestroy.ValueBool() {
		n, err := s3state.DeleteAll(ctx, cl, name, "", nil)
		if err != nil {
			resp.Diagnostics.AddError("Emptying bucket failed", err.Error())
			return
		}
		if n > 0 {
			resp.Diagnostics.AddWarning("Bucket emptied", fmt.Sprintf("force_destroy deleted %d object versions from s3://%s.", n, name))
		}
	} else {
		n, more, err := s3state.Contents(ctx, cl, name, "", 1000)
		if err != nil && !awsclient.IsNotFound(err) {
			resp.Diagnostics.AddError("Checking bucket contents failed", awsErr(ctx, err))
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
	if _, err := cl.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(name)}); err != nil && !awsclient.IsNotFound(err) {
		resp.Diagnostics.AddError("Deleting bucket failed", fmt.Sprintf("s3:DeleteBucket %s: %s", name, awsErr(ctx, err)))
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

// isNotFound recognises the typed "does not exist" answers of S3, IAM and EKS.
func isNotFound(err error) bool { return awsclient.IsNotFound(err) }
