// Package awsclient builds the AWS SDK clients the provider uses from its
// `aws` block and the usual environment (AWS_REGION, AWS_PROFILE,
// AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_<SERVICE>, AWS_MAX_ATTEMPTS,
// AWS_RETRY_MODE, shared config files).
package awsclient

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	ststypes "github.com/aws/aws-sdk-go-v2/service/sts/types"
)

// Config is the provider's `aws` block after environment fallbacks that the
// SDK does not apply itself.
type Config struct {
	Region   string
	Profile  string
	Endpoint string // one URL for every service, LocalStack style
	// Endpoints are per-service URLs ("s3", "iam", "sts", "eks", "kms");
	// they win over Endpoint.
	Endpoints map[string]string
	// S3UsePathStyle nil means: path style when a custom endpoint is in use
	// (emulators rarely serve virtual-hosted buckets), virtual-hosted otherwise.
	S3UsePathStyle            *bool
	SkipCredentialsValidation bool
	UserAgent                 string

	SharedConfigFiles      []string
	SharedCredentialsFiles []string
	// MaxRetries is the SDK's maximum number of attempts; 0 leaves the SDK's
	// default, which honours AWS_MAX_ATTEMPTS and the profile's max_attempts.
	MaxRetries int
	// RetryMode is "standard" or "adaptive"; "" leaves the SDK's default
	// (AWS_RETRY_MODE, the profile's retry_mode, else standard).
	RetryMode string

	AssumeRole                *AssumeRole
	AssumeRoleWithWebIdentity *WebIdentity

	AllowedAccountIDs   []string
	ForbiddenAccountIDs []string

	// ConfigHooks change the loaded SDK configuration before any client is
	// built (the provider's request logging: HTTP client, middleware).
	ConfigHooks []func(*aws.Config)
}

// AssumeRole is the `assume_role` block: sts:AssumeRole with the
// credentials the SDK found, the result used for every call.
type AssumeRole struct {
	RoleARN     string
	SessionName string
	ExternalID  string
	Duration    time.Duration
	Tags        map[string]string
	Policy      string
}

// WebIdentity is the `assume_role_with_web_identity` block.
type WebIdentity struct {
	RoleARN     string
	TokenFile   string
	SessionName string
}

// RetryModes are the values retry_mode accepts (aws.RetryMode).
var RetryModes = []string{string(aws.RetryModeStandard), string(aws.RetryModeAdaptive)}

// Services are the keys `endpoints` accepts.
var Services = []string{"s3", "iam", "sts", "eks", "kms"}

// Clients are the AWS API clients, built once per provider configuration.
type Clients struct {
	Config    aws.Config
	Partition string
	S3        *s3.Client
	IAM       *iam.Client
	EKS       *eks.Client
	STS       *sts.Client
	KMS       *kms.Client
}

// customEndpoint tells whether S3 is reached through a non-AWS endpoint.
func (c Config) customEndpoint() bool {
	return c.Endpoint != "" || c.Endpoints["s3"] != "" || os.Getenv("AWS_ENDPOINT_URL") != "" || os.Getenv("AWS_ENDPOINT_URL_S3") != ""
}

// endpointFor returns the BaseEndpoint a service's client uses: its entry in
// endpoints, else what the configuration resolved (endpoint, or the SDK's
// AWS_ENDPOINT_URL handling). A nil here must not clear the SDK's value.
func (c Config) endpointFor(service string, resolved *string) *string {
	if u := c.Endpoints[service]; u != "" {
		return aws.String(u)
	}
	return resolved
}

// Validate checks what can be checked without any API call.
func (c Config) Validate() error {
	if c.AssumeRole != nil && c.AssumeRoleWithWebIdentity != nil {
		return errors.New("aws.assume_role and aws.assume_role_with_web_identity are both set: keep one")
	}
	if c.RetryMode != "" && !slices.Contains(RetryModes, c.RetryMode) {
		return fmt.Errorf("aws.retry_mode %q is not one of %s", c.RetryMode, strings.Join(RetryModes, ", "))
	}
	if len(c.AllowedAccountIDs) > 0 && len(c.ForbiddenAccountIDs) > 0 {
		return errors.New("aws.allowed_account_ids and aws.forbidden_account_ids are both set: keep one")
	}
	return nil
}

// Partition is the AWS partition ("aws", "aws-cn", "aws-us-gov", ...) of a
// region, from the SDK's own endpoint partition data (the STS resolver's
// PartitionID; every partition has STS), not a hand-written list.
func Partition(region string) string {
	if region == "" {
		return "aws"
	}
	ep, err := sts.NewDefaultEndpointResolver().ResolveEndpoint(region, sts.EndpointResolverOptions{})
	if err != nil || ep.PartitionID == "" {
		return "aws"
	}
	return ep.PartitionID
}

// load builds the SDK configuration. It makes no API call: credentials are
// retrieved when a client first signs a request.
func (c Config) load(ctx context.Context) (aws.Config, error) {
	var opts []func(*config.LoadOptions) error
	// Retries: the SDK's defaults unless set, so AWS_MAX_ATTEMPTS and
	// AWS_RETRY_MODE keep working (config.LoadOptions RetryMaxAttempts/RetryMode).
	if c.MaxRetries > 0 {
		opts = append(opts, config.WithRetryMaxAttempts(c.MaxRetries))
	}
	if c.RetryMode != "" {
		opts = append(opts, config.WithRetryMode(aws.RetryMode(c.RetryMode)))
	}
	if c.Region != "" {
		opts = append(opts, config.WithRegion(c.Region))
	}
	if c.Profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(c.Profile))
	}
	if len(c.SharedConfigFiles) > 0 {
		opts = append(opts, config.WithSharedConfigFiles(expandHome(c.SharedConfigFiles)))
	}
	if len(c.SharedCredentialsFiles) > 0 {
		opts = append(opts, config.WithSharedCredentialsFiles(expandHome(c.SharedCredentialsFiles)))
	}
	if c.UserAgent != "" {
		opts = append(opts, config.WithAppID(c.UserAgent))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("loading AWS configuration: %w", err)
	}
	if c.Endpoint != "" {
		cfg.BaseEndpoint = aws.String(c.Endpoint)
	}
	for _, h := range c.ConfigHooks {
		h(&cfg)
	}
	return cfg, nil
}

// ResolveRegion resolves the region the clients would use (block, environment or
// shared configuration) without any API call.
func (c Config) ResolveRegion(ctx context.Context) (string, error) {
	cfg, err := c.load(ctx)
	if err != nil {
		return "", err
	}
	return cfg.Region, nil
}

// New loads the SDK configuration and builds the clients. With
// SkipCredentialsValidation false, or account IDs to check, it calls
// sts:GetCallerIdentity once so that bad credentials or the wrong account
// fail here, with a clear message, before any change.
func New(ctx context.Context, c Config) (*Clients, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	cfg, err := c.load(ctx)
	if err != nil {
		return nil, err
	}
	if cfg.Region == "" {
		return nil, errors.New("no AWS region: set aws.region in the provider block, or AWS_REGION")
	}
	stsOpts := func(o *sts.Options) { o.BaseEndpoint = c.endpointFor("sts", o.BaseEndpoint) }
	// Assumed roles: the SDK's stscreds providers, called with the
	// credentials found so far, cached and refreshed before they expire.
	if ar := c.AssumeRole; ar != nil {
		base := sts.NewFromConfig(cfg, stsOpts)
		cfg.Credentials = aws.NewCredentialsCache(stscreds.NewAssumeRoleProvider(base, ar.RoleARN, func(o *stscreds.AssumeRoleOptions) {
			if ar.SessionName != "" {
				o.RoleSessionName = ar.SessionName
			}
			if ar.ExternalID != "" {
				o.ExternalID = aws.String(ar.ExternalID)
			}
			if ar.Duration > 0 {
				o.Duration = ar.Duration
			}
			if ar.Policy != "" {
				o.Policy = aws.String(ar.Policy)
			}
			for _, k := range sortedKeys(ar.Tags) {
				o.Tags = append(o.Tags, ststypes.Tag{Key: aws.String(k), Value: aws.String(ar.Tags[k])})
			}
		}))
	}
	if wi := c.AssumeRoleWithWebIdentity; wi != nil {
		base := sts.NewFromConfig(cfg, stsOpts)
		cfg.Credentials = aws.NewCredentialsCache(stscreds.NewWebIdentityRoleProvider(base, wi.RoleARN,
			stscreds.IdentityTokenFile(wi.TokenFile), func(o *stscreds.WebIdentityRoleOptions) {
				if wi.SessionName != "" {
					o.RoleSessionName = wi.SessionName
				}
			}))
	}
	// Assume the role now, on first use, so that a role that cannot be
	// assumed or an unreadable token file fails here naming its block,
	// not as a credentials error of whichever call comes first.
	if block, roleARN := c.assumedRole(); block != "" {
		if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
			return nil, fmt.Errorf("%s: assuming role %s failed: %w", block, roleARN, err)
		}
	}
	pathStyle := c.customEndpoint()
	if c.S3UsePathStyle != nil {
		pathStyle = *c.S3UsePathStyle
	}
	cl := &Clients{
		Config:    cfg,
		Partition: Partition(cfg.Region),
		S3: s3.NewFromConfig(cfg, func(o *s3.Options) {
			o.UsePathStyle = pathStyle
			o.BaseEndpoint = c.endpointFor("s3", o.BaseEndpoint)
		}),
		IAM: iam.NewFromConfig(cfg, func(o *iam.Options) { o.BaseEndpoint = c.endpointFor("iam", o.BaseEndpoint) }),
		EKS: eks.NewFromConfig(cfg, func(o *eks.Options) { o.BaseEndpoint = c.endpointFor("eks", o.BaseEndpoint) }),
		STS: sts.NewFromConfig(cfg, stsOpts),
		KMS: kms.NewFromConfig(cfg, func(o *kms.Options) { o.BaseEndpoint = c.endpointFor("kms", o.BaseEndpoint) }),
	}
	if !c.SkipCredentialsValidation || len(c.AllowedAccountIDs) > 0 || len(c.ForbiddenAccountIDs) > 0 {
		id, err := cl.STS.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
		if err != nil {
			return nil, fmt.Errorf("validating AWS credentials with sts:GetCallerIdentity (set aws.skip_credentials_validation to skip): %w", err)
		}
		if err := c.checkAccount(aws.ToString(id.Account)); err != nil {
			return nil, err
		}
	}
	return cl, nil
}

// assumedRole names the block that assumes a role, and the role; "" when
// none does.
func (c Config) assumedRole() (block, roleARN string) {
	switch {
	case c.AssumeRole != nil:
		return "aws.assume_role", c.AssumeRole.RoleARN
	case c.AssumeRoleWithWebIdentity != nil:
		return "aws.assume_role_with_web_identity", c.AssumeRoleWithWebIdentity.RoleARN
	}
	return "", ""
}

// checkAccount applies allowed_account_ids / forbidden_account_ids, as
// hashicorp/aws does, to the account sts:GetCallerIdentity returned.
func (c Config) checkAccount(account string) error {
	if len(c.AllowedAccountIDs) > 0 && !slices.Contains(c.AllowedAccountIDs, account) {
		return fmt.Errorf("AWS account %s is not in aws.allowed_account_ids (%s): check the credentials or the list",
			account, strings.Join(c.AllowedAccountIDs, ", "))
	}
	if slices.Contains(c.ForbiddenAccountIDs, account) {
		return fmt.Errorf("AWS account %s is in aws.forbidden_account_ids: use credentials of another account", account)
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func expandHome(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = p
		if strings.HasPrefix(p, "~/") {
			if home, err := os.UserHomeDir(); err == nil {
				out[i] = home + p[1:]
			}
		}
	}
	return out
}
