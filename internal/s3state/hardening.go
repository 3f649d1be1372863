package s3state

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/awsclient"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
)

// HardeningAPI is the part of the S3 client that reads and writes a state
// bucket's hardening.
type HardeningAPI interface {
	GetPublicAccessBlock(ctx context.Context, in *s3.GetPublicAccessBlockInput, opts ...func(*s3.Options)) (*s3.GetPublicAccessBlockOutput, error)
	PutPublicAccessBlock(ctx context.Context, in *s3.PutPublicAccessBlockInput, opts ...func(*s3.Options)) (*s3.PutPublicAccessBlockOutput, error)
	GetBucketEncryption(ctx context.Context, in *s3.GetBucketEncryptionInput, opts ...func(*s3.Options)) (*s3.GetBucketEncryptionOutput, error)
	PutBucketEncryption(ctx context.Context, in *s3.PutBucketEncryptionInput, opts ...func(*s3.Options)) (*s3.PutBucketEncryptionOutput, error)
	GetBucketVersioning(ctx context.Context, in *s3.GetBucketVersioningInput, opts ...func(*s3.Options)) (*s3.GetBucketVersioningOutput, error)
	PutBucketVersioning(ctx context.Context, in *s3.PutBucketVersioningInput, opts ...func(*s3.Options)) (*s3.PutBucketVersioningOutput, error)
	GetBucketLifecycleConfiguration(ctx context.Context, in *s3.GetBucketLifecycleConfigurationInput, opts ...func(*s3.Options)) (*s3.GetBucketLifecycleConfigurationOutput, error)
	PutBucketLifecycleConfiguration(ctx context.Context, in *s3.PutBucketLifecycleConfigurationInput, opts ...func(*s3.Options)) (*s3.PutBucketLifecycleConfigurationOutput, error)
	GetBucketPolicy(ctx context.Context, in *s3.GetBucketPolicyInput, opts ...func(*s3.Options)) (*s3.GetBucketPolicyOutput, error)
	PutBucketPolicy(ctx context.Context, in *s3.PutBucketPolicyInput, opts ...func(*s3.Options)) (*s3.PutBucketPolicyOutput, error)
	DeleteBucketPolicy(ctx context.Context, in *s3.DeleteBucketPolicyInput, opts ...func(*s3.Options)) (*s3.DeleteBucketPolicyOutput, error)
	GetBucketTagging(ctx context.Context, in *s3.GetBucketTaggingInput, opts ...func(*s3.Options)) (*s3.GetBucketTaggingOutput, error)
	PutBucketTagging(ctx context.Context, in *s3.PutBucketTaggingInput, opts ...func(*s3.Options)) (*s3.PutBucketTaggingOutput, error)
	DeleteBucketTagging(ctx context.Context, in *s3.DeleteBucketTaggingInput, opts ...func(*s3.Options)) (*s3.DeleteBucketTaggingOutput, error)
}

// Settings is the hardening the provider writes on a state bucket. Block
// Public Access (all four on) and BucketOwnerEnforced are not settings:
// they are always on.
type Settings struct {
	KMSKeyARN                       string // "" for SSE-S3 (AES256)
	AbortIncompleteMultipartDays    int32
	Versioning                      bool
	NoncurrentVersionExpirationDays int32
	EnforceTLS                      bool
	Tags                            map[string]string
}

// Hardening is what a read finds on a bucket: its settings as the provider
// sees them, and the drift that weakens them.
type Hardening struct {
	Settings
	// PublicAccessBlocked: all four Block Public Access settings are on.
	PublicAccessBlocked bool
	// EncryptionMissing: the bucket has no default encryption configuration
	// (GetBucketEncryption answers ServerSideEncryptionConfigurationNotFoundError),
	// e.g. a bucket made by a create that was killed before it was hardened.
	EncryptionMissing bool
	// HasNoncurrentRule: the provider's noncurrent-version rule is there
	// (else Settings.NoncurrentVersionExpirationDays is 0 and says nothing).
	HasNoncurrentRule bool
	// UnsafeLifecycleRules names rules that expire or move current objects
	// of the whole bucket, or that act inside the provider's own rules.
	UnsafeLifecycleRules []string
	// ForeignPolicyStatements names the bucket policy's statements the
	// provider did not write.
	ForeignPolicyStatements []string
}

// The finders below follow hashicorp/terraform-provider-aws's find…
// functions (internal/service/s3/bucket_public_access_block.go,
// findPublicAccessBlockConfiguration): S3's typed "this configuration is not
// set" answer becomes a *notfound.Error, anything else is returned as it is.
// The codes are those S3 answers for a bucket sub-resource that is not set
// (S3 API Reference, "Error responses" and each Get… action's page; the same
// list as hashicorp/aws internal/service/s3/errors.go). NoSuchBucket is not
// among them: the bucket was found moments before, and a bucket vanishing
// in the middle of a read is an error, not an unset configuration.

// notFoundOn turns err into a *notfound.Error when its code is one of codes.
func notFoundOn(what string, err error, codes ...string) error {
	if err != nil && awsclient.IsAPIError(err, codes...) {
		return &notfound.Error{What: what, Err: err}
	}
	return err
}

// FindPublicAccessBlock returns the bucket's Block Public Access settings,
// a *notfound.Error when none are set.
func FindPublicAccessBlock(ctx context.Context, c HardeningAPI, bucket string) (*s3types.PublicAccessBlockConfiguration, error) {
	out, err := c.GetPublicAccessBlock(ctx, &s3.GetPublicAccessBlockInput{Bucket: aws.String(bucket)})
	if err = notFoundOn("public access block of bucket "+bucket, err, "NoSuchPublicAccessBlockConfiguration"); err != nil {
		return nil, fmt.Errorf("s3:GetPublicAccessBlock %s: %w", bucket, err)
	}
	if out.PublicAccessBlockConfiguration == nil {
		return nil, &notfound.Error{What: "public access block of bucket " + bucket, Err: fmt.Errorf("empty answer")}
	}
	return out.PublicAccessBlockConfiguration, nil
}

// FindEncryption returns the bucket's default encryption rules, a
// *notfound.Error when none is set.
func FindEncryption(ctx context.Context, c HardeningAPI, bucket string) ([]s3types.ServerSideEncryptionRule, error) {
	out, err := c.GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: aws.String(bucket)})
	if err = notFoundOn("default encryption of bucket "+bucket, err, "ServerSideEncryptionConfigurationNotFoundError"); err != nil {
		return nil, fmt.Errorf("s3:GetBucketEncryption %s: %w", bucket, err)
	}
	if out.ServerSideEncryptionConfiguration == nil {
		return nil, &notfound.Error{What: "default encryption of bucket " + bucket, Err: fmt.Errorf("empty answer")}
	}
	return out.ServerSideEncryptionConfiguration.Rules, nil
}

// FindVersioning returns the bucket's versioning status ("" when it was
// never set: GetBucketVersioning answers without a Status then, it has no
// not-found answer).
func FindVersioning(ctx context.Context, c HardeningAPI, bucket string) (s3types.BucketVersioningStatus, error) {
	out, err := c.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: aws.String(bucket)})
	if err != nil {
		return "", fmt.Errorf("s3:GetBucketVersioning %s: %w", bucket, err)
	}
	return out.Status, nil
}

// FindLifecycleRules returns the bucket's lifecycle rules, a *notfound.Error
// when it has no lifecycle configuration.
func FindLifecycleRules(ctx context.Context, c HardeningAPI, bucket string) ([]s3types.LifecycleRule, error) {
	out, err := c.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(bucket)})
	if err = notFoundOn("lifecycle configuration of bucket "+bucket, err, "NoSuchLifecycleConfiguration"); err != nil {
		return nil, fmt.Errorf("s3:GetBucketLifecycleConfiguration %s: %w", bucket, err)
	}
	return out.Rules, nil
}

// FindPolicy returns the bucket policy, a *notfound.Error when it has none.
func FindPolicy(ctx context.Context, c HardeningAPI, bucket string) (string, error) {
	out, err := c.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: aws.String(bucket)})
	if err = notFoundOn("policy of bucket "+bucket, err, "NoSuchBucketPolicy"); err != nil {
		return "", fmt.Errorf("s3:GetBucketPolicy %s: %w", bucket, err)
	}
	return aws.ToString(out.Policy), nil
}

// FindTags returns the bucket's tags, a *notfound.Error when it has none.
// S3 has answered both NoSuchTagSet and NoSuchTagSetError for it.
func FindTags(ctx context.Context, c HardeningAPI, bucket string) (map[string]string, error) {
	out, err := c.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: aws.String(bucket)})
	if err = notFoundOn("tags of bucket "+bucket, err, "NoSuchTagSet", "NoSuchTagSetError"); err != nil {
		return nil, fmt.Errorf("s3:GetBucketTagging %s: %w", bucket, err)
	}
	tags := map[string]string{}
	for _, t := range out.TagSet {
		tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return tags, nil
}

// ReadHardening reads every hardening concern of an existing bucket (find
// it first with FindBucket). An unset configuration reads as its zero value:
// no KMS key, no rules, no policy, no tags.
func ReadHardening(ctx context.Context, c HardeningAPI, bucket string) (Hardening, error) {
	var h Hardening
	pab, err := FindPublicAccessBlock(ctx, c, bucket)
	if err != nil && !notfound.Is(err) {
		return h, err
	}
	h.PublicAccessBlocked = PublicAccessBlocked(pab)

	enc, err := FindEncryption(ctx, c, bucket)
	if err != nil && !notfound.Is(err) {
		return h, err
	}
	h.KMSKeyARN = KMSKeyOf(enc)
	h.EncryptionMissing = len(enc) == 0

	status, err := FindVersioning(ctx, c, bucket)
	if err != nil {
		return h, err
	}
	h.Versioning = status == s3types.BucketVersioningStatusEnabled

	rules, err := FindLifecycleRules(ctx, c, bucket)
	if err != nil && !notfound.Is(err) {
		return h, err
	}
	h.AbortIncompleteMultipartDays, h.NoncurrentVersionExpirationDays, h.HasNoncurrentRule = OwnLifecycle(rules)
	h.UnsafeLifecycleRules = BucketUnsafeRules(rules)

	policy, err := FindPolicy(ctx, c, bucket)
	switch {
	case notfound.Is(err):
	case err != nil:
		return h, err
	default:
		h.EnforceTLS = PolicyDeniesInsecureTransport(policy)
		h.ForeignPolicyStatements = ForeignStatements(policy)
	}

	h.Tags, err = FindTags(ctx, c, bucket)
	if notfound.Is(err) {
		h.Tags, err = map[string]string{}, nil
	}
	return h, err
}

// PublicAccessBlocked tells whether all four Block Public Access settings
// are on (S3 User Guide, "Blocking public access to your Amazon S3
// storage": each setting guards a different path to public access).
func PublicAccessBlocked(c *s3types.PublicAccessBlockConfiguration) bool {
	return c != nil && aws.ToBool(c.BlockPublicAcls) && aws.ToBool(c.BlockPublicPolicy) &&
		aws.ToBool(c.IgnorePublicAcls) && aws.ToBool(c.RestrictPublicBuckets)
}

// KMSKeyOf is the KMS key of an SSE-KMS default encryption rule, "" for
// SSE-S3 or none.
func KMSKeyOf(rules []s3types.ServerSideEncryptionRule) string {
	key := ""
	for _, r := range rules {
		if d := r.ApplyServerSideEncryptionByDefault; d != nil && d.SSEAlgorithm == s3types.ServerSideEncryptionAwsKms {
			key = aws.ToString(d.KMSMasterKeyID)
		}
	}
	return key
}

// OwnLifecycle reads the provider's own rules: the abort-multipart days (0
// without the rule) and the noncurrent-version days, if that rule is there.
func OwnLifecycle(rules []s3types.LifecycleRule) (abortDays, noncurrentDays int32, hasNoncurrent bool) {
	for _, r := range rules {
		switch id := aws.ToString(r.ID); {
		case id == AbortMultipartRuleID && r.AbortIncompleteMultipartUpload != nil:
			abortDays = aws.ToInt32(r.AbortIncompleteMultipartUpload.DaysAfterInitiation)
		case id == NoncurrentVersionsRuleID && r.NoncurrentVersionExpiration != nil:
			noncurrentDays, hasNoncurrent = aws.ToInt32(r.NoncurrentVersionExpiration.NoncurrentDays), true
		}
	}
	return abortDays, noncurrentDays, hasNoncurrent
}

// BucketUnsafeRules names the rules of a state bucket that expire or move
// current objects of the whole bucket (every store in it), or that were
// added inside the provider's own rules. Rules scoped to a prefix are the
// state stores' business (see PrefixReaches).
func BucketUnsafeRules(rules []s3types.LifecycleRule) []string {
	return UnsafeRules(rules, func(r s3types.LifecycleRule) bool {
		id := aws.ToString(r.ID)
		return RulePrefix(r) == "" || id == AbortMultipartRuleID || id == NoncurrentVersionsRuleID
	})
}

// LifecycleConfiguration is the S3 form of Lifecycle: every rule applies to
// the whole bucket (an empty prefix filter).
func LifecycleConfiguration(abortDays int32, versioning bool, noncurrentDays int32) []s3types.LifecycleRule {
	var out []s3types.LifecycleRule
	for _, r := range Lifecycle(abortDays, versioning, noncurrentDays) {
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

// EncryptionRule is the default encryption of a state bucket: SSE-S3, or
// SSE-KMS with an S3 Bucket Key (S3 User Guide, "Reducing the cost of
// SSE-KMS with Amazon S3 Bucket Keys": one KMS call per bucket key instead
// of one per object, which checkpoints write many of).
func EncryptionRule(kmsKeyARN string) s3types.ServerSideEncryptionRule {
	if kmsKeyARN == "" {
		return s3types.ServerSideEncryptionRule{ApplyServerSideEncryptionByDefault: &s3types.ServerSideEncryptionByDefault{
			SSEAlgorithm: s3types.ServerSideEncryptionAes256}}
	}
	return s3types.ServerSideEncryptionRule{
		ApplyServerSideEncryptionByDefault: &s3types.ServerSideEncryptionByDefault{
			SSEAlgorithm: s3types.ServerSideEncryptionAwsKms, KMSMasterKeyID: aws.String(kmsKeyARN)},
		BucketKeyEnabled: aws.Bool(true),
	}
}

// Write is one S3 call of the hardening.
type Write struct {
	Action string // the S3 action, e.g. "s3:PutBucketPolicy"
	do     func(ctx context.Context, c HardeningAPI) error
}

// Run makes the call; its error names the action and the bucket.
func (w Write) Run(ctx context.Context, c HardeningAPI, bucket string) error {
	if err := w.do(ctx, c); err != nil {
		return fmt.Errorf("%s %s: %w", w.Action, bucket, err)
	}
	return nil
}

// Writes lists, in order, the calls that bring bucket to want: all of them
// for a bucket just created (prior nil), else those whose setting changed
// or whose drift (prior, as last read) must be undone. partition is the
// bucket's AWS partition, for the policy's ARNs.
func Writes(bucket, partition string, want Settings, prior *Hardening) []Write {
	b := aws.String(bucket)
	var ws []Write
	add := func(action string, do func(ctx context.Context, c HardeningAPI) error) {
		ws = append(ws, Write{Action: action, do: do})
	}
	if prior == nil || !prior.PublicAccessBlocked {
		add("s3:PutPublicAccessBlock", func(ctx context.Context, c HardeningAPI) error {
			_, err := c.PutPublicAccessBlock(ctx, &s3.PutPublicAccessBlockInput{Bucket: b,
				PublicAccessBlockConfiguration: &s3types.PublicAccessBlockConfiguration{
					BlockPublicAcls: aws.Bool(true), BlockPublicPolicy: aws.Bool(true),
					IgnorePublicAcls: aws.Bool(true), RestrictPublicBuckets: aws.Bool(true)}})
			return err
		})
		// BucketOwnerEnforced is set by CreateBucket (x-amz-object-ownership),
		// atomically with the bucket itself (see CreateBucket).
	}
	if prior == nil || prior.EncryptionMissing || prior.KMSKeyARN != want.KMSKeyARN {
		add("s3:PutBucketEncryption", func(ctx context.Context, c HardeningAPI) error {
			_, err := c.PutBucketEncryption(ctx, &s3.PutBucketEncryptionInput{Bucket: b,
				ServerSideEncryptionConfiguration: &s3types.ServerSideEncryptionConfiguration{
					Rules: []s3types.ServerSideEncryptionRule{EncryptionRule(want.KMSKeyARN)}}})
			return err
		})
	}
	// A new bucket is unversioned: only turning it on, or a change, is a call.
	// Versioning once enabled can only be suspended (S3 User Guide, "Using
	// versioning in S3 buckets").
	if (prior == nil && want.Versioning) || (prior != nil && prior.Versioning != want.Versioning) {
		status := s3types.BucketVersioningStatusSuspended
		if want.Versioning {
			status = s3types.BucketVersioningStatusEnabled
		}
		add("s3:PutBucketVersioning", func(ctx context.Context, c HardeningAPI) error {
			_, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: b,
				VersioningConfiguration: &s3types.VersioningConfiguration{Status: status}})
			return err
		})
	}
	// PutBucketLifecycleConfiguration replaces the whole configuration (S3
	// API Reference), so writing the provider's rules also drops the unsafe
	// ones.
	if prior == nil || len(prior.UnsafeLifecycleRules) > 0 || prior.AbortIncompleteMultipartDays != want.AbortIncompleteMultipartDays ||
		prior.Versioning != want.Versioning || prior.NoncurrentVersionExpirationDays != want.NoncurrentVersionExpirationDays {
		rules := LifecycleConfiguration(want.AbortIncompleteMultipartDays, want.Versioning, want.NoncurrentVersionExpirationDays)
		add("s3:PutBucketLifecycleConfiguration", func(ctx context.Context, c HardeningAPI) error {
			_, err := c.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{Bucket: b,
				LifecycleConfiguration: &s3types.BucketLifecycleConfiguration{Rules: rules}})
			return err
		})
	}
	// PutBucketPolicy replaces the whole policy too: foreign statements go.
	if prior == nil || prior.EnforceTLS != want.EnforceTLS || len(prior.ForeignPolicyStatements) > 0 {
		switch {
		case want.EnforceTLS:
			policy := TLSPolicy(partition, bucket)
			add("s3:PutBucketPolicy", func(ctx context.Context, c HardeningAPI) error {
				_, err := c.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: b, Policy: aws.String(policy)})
				return err
			})
		case prior != nil && (prior.EnforceTLS || len(prior.ForeignPolicyStatements) > 0):
			add("s3:DeleteBucketPolicy", func(ctx context.Context, c HardeningAPI) error {
				_, err := c.DeleteBucketPolicy(ctx, &s3.DeleteBucketPolicyInput{Bucket: b})
				return err
			})
		}
	}
	if prior == nil || !maps.Equal(prior.Tags, want.Tags) {
		switch {
		case len(want.Tags) > 0:
			set := tagSet(want.Tags)
			add("s3:PutBucketTagging", func(ctx context.Context, c HardeningAPI) error {
				_, err := c.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: b, Tagging: &s3types.Tagging{TagSet: set}})
				return err
			})
		case prior != nil:
			add("s3:DeleteBucketTagging", func(ctx context.Context, c HardeningAPI) error {
				_, err := c.DeleteBucketTagging(ctx, &s3.DeleteBucketTaggingInput{Bucket: b})
				return err
			})
		}
	}
	return ws
}

// tagSet is tags in key order (PutBucketTagging replaces the whole set).
func tagSet(tags map[string]string) []s3types.Tag {
	keys := slices.Sorted(maps.Keys(tags))
	set := make([]s3types.Tag, 0, len(keys))
	for _, k := range keys {
		set = append(set, s3types.Tag{Key: aws.String(k), Value: aws.String(tags[k])})
	}
	return set
}

// CreateAPI is the part of the S3 client CreateBucket and DeleteBucket use.
type CreateAPI interface {
	CreateBucket(ctx context.Context, in *s3.CreateBucketInput, opts ...func(*s3.Options)) (*s3.CreateBucketOutput, error)
	DeleteBucket(ctx context.Context, in *s3.DeleteBucketInput, opts ...func(*s3.Options)) (*s3.DeleteBucketOutput, error)
}

// CreateBucket creates a bucket with BucketOwnerEnforced object ownership
// (the x-amz-object-ownership header of CreateBucket, so ACLs are off from
// the first moment; S3 API Reference, CreateBucket). Outside us-east-1 the
// region goes in the LocationConstraint (same page: us-east-1 is the
// default and takes none). Look first with ProbeBucket: in us-east-1 this
// call answers 200 for a bucket the caller owns already. The errors stay
// typed (IsBucketAlreadyOwnedByYou, IsBucketAlreadyExists).
func CreateBucket(ctx context.Context, c CreateAPI, bucket, region string) error {
	in := &s3.CreateBucketInput{Bucket: aws.String(bucket), ObjectOwnership: s3types.ObjectOwnershipBucketOwnerEnforced}
	if region != "us-east-1" {
		in.CreateBucketConfiguration = &s3types.CreateBucketConfiguration{LocationConstraint: s3types.BucketLocationConstraint(region)}
	}
	if _, err := c.CreateBucket(ctx, in); err != nil {
		return fmt.Errorf("s3:CreateBucket %s: %w", bucket, err)
	}
	return nil
}

// DeleteBucket deletes an empty bucket; one S3 says does not exist (a
// typed not-found, see awsclient.NotFound) is gone already.
func DeleteBucket(ctx context.Context, c CreateAPI, bucket string) error {
	_, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)})
	if err = awsclient.NotFound("bucket "+bucket, err); err != nil && !notfound.Is(err) {
		return fmt.Errorf("s3:DeleteBucket %s: %w", bucket, err)
	}
	return nil
}
