package s3state

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
)

func actions(ws []Write) []string {
	out := []string{}
	for _, w := range ws {
		out = append(out, w.Action)
	}
	return out
}

func defaults() Settings {
	return Settings{AbortIncompleteMultipartDays: 1, NoncurrentVersionExpirationDays: 30, EnforceTLS: true, Tags: map[string]string{}}
}

// asRead is what a read of a bucket hardened with s finds.
func asRead(s Settings) *Hardening {
	return &Hardening{Settings: s, PublicAccessBlocked: true}
}

func TestWritesOnCreate(t *testing.T) {
	s := defaults()
	want := []string{"s3:PutPublicAccessBlock", "s3:PutBucketEncryption", "s3:PutBucketLifecycleConfiguration", "s3:PutBucketPolicy"}
	if got := actions(Writes("b", "aws", s, nil)); !reflect.DeepEqual(got, want) {
		t.Fatalf("create with defaults: %v, want %v", got, want)
	}
	s.Versioning, s.EnforceTLS, s.Tags = true, false, map[string]string{"team": "data"}
	want = []string{"s3:PutPublicAccessBlock", "s3:PutBucketEncryption", "s3:PutBucketVersioning", "s3:PutBucketLifecycleConfiguration", "s3:PutBucketTagging"}
	if got := actions(Writes("b", "aws", s, nil)); !reflect.DeepEqual(got, want) {
		t.Fatalf("create with versioning, tags, no TLS policy: %v, want %v", got, want)
	}
}

func TestWritesOnUpdate(t *testing.T) {
	base := defaults()
	cases := map[string]struct {
		prior func(h *Hardening)
		want  func(s *Settings)
		calls []string
	}{
		"nothing changed": {calls: []string{}},
		"block public access turned off outside": {
			prior: func(h *Hardening) { h.PublicAccessBlocked = false },
			calls: []string{"s3:PutPublicAccessBlock"},
		},
		"kms key": {
			want:  func(s *Settings) { s.KMSKeyARN = "arn:aws:kms:eu-west-1:111122223333:key/k" },
			calls: []string{"s3:PutBucketEncryption"},
		},
		"versioning on also writes the noncurrent rule": {
			want:  func(s *Settings) { s.Versioning = true },
			calls: []string{"s3:PutBucketVersioning", "s3:PutBucketLifecycleConfiguration"},
		},
		"unsafe lifecycle rule added outside": {
			prior: func(h *Hardening) { h.UnsafeLifecycleRules = []string{"expire-all"} },
			calls: []string{"s3:PutBucketLifecycleConfiguration"},
		},
		"foreign policy statement, TLS kept": {
			prior: func(h *Hardening) { h.ForeignPolicyStatements = []string{"CrossAccount"} },
			calls: []string{"s3:PutBucketPolicy"},
		},
		"foreign policy statement, TLS off": {
			prior: func(h *Hardening) { h.EnforceTLS, h.ForeignPolicyStatements = false, []string{"CrossAccount"} },
			want:  func(s *Settings) { s.EnforceTLS = false },
			calls: []string{"s3:DeleteBucketPolicy"},
		},
		"enforce_tls turned off": {
			want:  func(s *Settings) { s.EnforceTLS = false },
			calls: []string{"s3:DeleteBucketPolicy"},
		},
		"tags removed": {
			prior: func(h *Hardening) { h.Tags = map[string]string{"team": "data"} },
			calls: []string{"s3:DeleteBucketTagging"},
		},
		"tag changed": {
			prior: func(h *Hardening) { h.Tags = map[string]string{"team": "data"} },
			want:  func(s *Settings) { s.Tags = map[string]string{"team": "platform"} },
			calls: []string{"s3:PutBucketTagging"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			prior, want := asRead(base), base
			prior.Tags, want.Tags = map[string]string{}, map[string]string{}
			if tc.prior != nil {
				tc.prior(prior)
			}
			if tc.want != nil {
				tc.want(&want)
			}
			if got := actions(Writes("b", "aws", want, prior)); !reflect.DeepEqual(got, tc.calls) {
				t.Fatalf("%v, want %v", got, tc.calls)
			}
		})
	}
}

func TestLifecycleConfigurationNeverExpiresCurrentObjects(t *testing.T) {
	rules := LifecycleConfiguration(1, true, 30)
	if got := BucketUnsafeRules(rules); len(got) != 0 {
		t.Fatalf("the provider's own rules read as unsafe: %v", got)
	}
	abort, noncurrent, has := OwnLifecycle(rules)
	if abort != 1 || noncurrent != 30 || !has {
		t.Fatalf("own rules read back as abort=%d noncurrent=%d (%v)", abort, noncurrent, has)
	}
	if _, _, has := OwnLifecycle(LifecycleConfiguration(1, false, 30)); has {
		t.Fatal("a noncurrent rule without versioning")
	}
}

func TestBucketUnsafeRules(t *testing.T) {
	expire := &s3types.LifecycleExpiration{Days: aws.Int32(7)}
	rules := []s3types.LifecycleRule{
		{ID: aws.String(AbortMultipartRuleID), Status: s3types.ExpirationStatusEnabled, Filter: &s3types.LifecycleRuleFilter{Prefix: aws.String("")}, Expiration: expire},
		{ID: aws.String("whole-bucket"), Status: s3types.ExpirationStatusEnabled, Expiration: expire},
		{ID: aws.String("logs"), Status: s3types.ExpirationStatusEnabled, Filter: &s3types.LifecycleRuleFilter{Prefix: aws.String("logs/")}, Expiration: expire},
		{ID: aws.String("off"), Status: s3types.ExpirationStatusDisabled, Expiration: expire},
	}
	// A prefix rule is the state stores' business; a disabled rule does nothing.
	if got := BucketUnsafeRules(rules); !reflect.DeepEqual(got, []string{AbortMultipartRuleID, "whole-bucket"}) {
		t.Fatalf("unsafe %v", got)
	}
}

func TestKMSKeyAndPublicAccessBlock(t *testing.T) {
	k := "arn:aws:kms:eu-west-1:111122223333:key/k"
	if got := KMSKeyOf([]s3types.ServerSideEncryptionRule{EncryptionRule(k)}); got != k {
		t.Fatalf("kms key %q", got)
	}
	if r := EncryptionRule(k); !aws.ToBool(r.BucketKeyEnabled) {
		t.Fatal("SSE-KMS without a bucket key")
	}
	if got := KMSKeyOf([]s3types.ServerSideEncryptionRule{EncryptionRule("")}); got != "" {
		t.Fatalf("SSE-S3 read as kms key %q", got)
	}
	all := &s3types.PublicAccessBlockConfiguration{BlockPublicAcls: aws.Bool(true), BlockPublicPolicy: aws.Bool(true),
		IgnorePublicAcls: aws.Bool(true), RestrictPublicBuckets: aws.Bool(true)}
	if !PublicAccessBlocked(all) {
		t.Fatal("all four on not blocked")
	}
	three := *all
	three.RestrictPublicBuckets = aws.Bool(false)
	if PublicAccessBlocked(&three) || PublicAccessBlocked(nil) {
		t.Fatal("three of four, or none, read as blocked")
	}
}

// answers is an S3 client whose Get… calls answer the given errors (nil:
// an empty configuration), for the finders' error classification. Nothing
// else is called.
type answers struct {
	HardeningAPI
	err map[string]error
}

func (a answers) GetPublicAccessBlock(context.Context, *s3.GetPublicAccessBlockInput, ...func(*s3.Options)) (*s3.GetPublicAccessBlockOutput, error) {
	return &s3.GetPublicAccessBlockOutput{PublicAccessBlockConfiguration: &s3types.PublicAccessBlockConfiguration{}}, a.err["pab"]
}
func (a answers) GetBucketEncryption(context.Context, *s3.GetBucketEncryptionInput, ...func(*s3.Options)) (*s3.GetBucketEncryptionOutput, error) {
	return &s3.GetBucketEncryptionOutput{ServerSideEncryptionConfiguration: &s3types.ServerSideEncryptionConfiguration{}}, a.err["enc"]
}
func (a answers) GetBucketVersioning(context.Context, *s3.GetBucketVersioningInput, ...func(*s3.Options)) (*s3.GetBucketVersioningOutput, error) {
	return &s3.GetBucketVersioningOutput{}, a.err["ver"]
}
func (a answers) GetBucketLifecycleConfiguration(context.Context, *s3.GetBucketLifecycleConfigurationInput, ...func(*s3.Options)) (*s3.GetBucketLifecycleConfigurationOutput, error) {
	return &s3.GetBucketLifecycleConfigurationOutput{}, a.err["lc"]
}
func (a answers) GetBucketPolicy(context.Context, *s3.GetBucketPolicyInput, ...func(*s3.Options)) (*s3.GetBucketPolicyOutput, error) {
	return &s3.GetBucketPolicyOutput{Policy: aws.String(TLSPolicy("aws", "b"))}, a.err["pol"]
}
func (a answers) GetBucketTagging(context.Context, *s3.GetBucketTaggingInput, ...func(*s3.Options)) (*s3.GetBucketTaggingOutput, error) {
	return &s3.GetBucketTaggingOutput{}, a.err["tag"]
}

func apiErr(code string) error { return &smithy.GenericAPIError{Code: code, Message: "test"} }

// Each finder takes only its own "not set" code for not-found; another
// sub-resource's code, NoSuchBucket, and a body-less 404 ("NotFound", as a
// proxy answering 404 to everything decodes) are errors.
func TestFindersNotFoundOnlyOnTheirOwnCode(t *testing.T) {
	ctx := context.Background()
	find := map[string]func(HardeningAPI) error{
		"pab": func(c HardeningAPI) error { _, err := FindPublicAccessBlock(ctx, c, "b"); return err },
		"enc": func(c HardeningAPI) error { _, err := FindEncryption(ctx, c, "b"); return err },
		"lc":  func(c HardeningAPI) error { _, err := FindLifecycleRules(ctx, c, "b"); return err },
		"pol": func(c HardeningAPI) error { _, err := FindPolicy(ctx, c, "b"); return err },
		"tag": func(c HardeningAPI) error { _, err := FindTags(ctx, c, "b"); return err },
	}
	own := map[string][]string{
		"pab": {"NoSuchPublicAccessBlockConfiguration"},
		"enc": {"ServerSideEncryptionConfigurationNotFoundError"},
		"lc":  {"NoSuchLifecycleConfiguration"},
		"pol": {"NoSuchBucketPolicy"},
		"tag": {"NoSuchTagSet", "NoSuchTagSetError"},
	}
	for name, f := range find {
		for _, code := range own[name] {
			if err := f(answers{err: map[string]error{name: apiErr(code)}}); !notfound.Is(err) {
				t.Errorf("%s: %s is not a NotFoundError: %v", name, code, err)
			}
		}
		for _, code := range []string{"NoSuchBucket", "NotFound", "AccessDenied", "NoSuchBucketPolicy"} {
			if name == "pol" && code == "NoSuchBucketPolicy" {
				continue
			}
			err := f(answers{err: map[string]error{name: apiErr(code)}})
			if err == nil || notfound.Is(err) {
				t.Errorf("%s: %s taken for not set: %v", name, code, err)
			}
		}
		if err := f(answers{}); err != nil {
			t.Errorf("%s: a set configuration: %v", name, err)
		}
	}
}

// A read of a bucket with nothing set reads the zero values; any other
// error stops the read and names the call.
func TestReadHardening(t *testing.T) {
	ctx := context.Background()
	unset := map[string]error{
		"pab": apiErr("NoSuchPublicAccessBlockConfiguration"), "enc": apiErr("ServerSideEncryptionConfigurationNotFoundError"),
		"lc": apiErr("NoSuchLifecycleConfiguration"), "pol": apiErr("NoSuchBucketPolicy"), "tag": apiErr("NoSuchTagSet"),
	}
	h, err := ReadHardening(ctx, answers{err: unset}, "b")
	if err != nil {
		t.Fatal(err)
	}
	if h.PublicAccessBlocked || h.EnforceTLS || h.KMSKeyARN != "" || h.AbortIncompleteMultipartDays != 0 || len(h.Tags) != 0 || h.Tags == nil {
		t.Fatalf("unset bucket read as %+v", h)
	}
	h, err = ReadHardening(ctx, answers{}, "b")
	if err != nil || !h.EnforceTLS || len(h.ForeignPolicyStatements) != 0 {
		t.Fatalf("own policy read as %+v (%v)", h, err)
	}
	boom := errors.New("connection reset")
	if _, err := ReadHardening(ctx, answers{err: map[string]error{"lc": boom}}, "b"); !errors.Is(err, boom) || notfound.Is(err) {
		t.Fatalf("a failed lifecycle read: %v", err)
	}
}
