// Package awsclient builds the AWS SDK clients the provider uses from its
// `aws` block and the usual environment (AWS_REGION, AWS_PROFILE,
// AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_<SERVICE>, shared config files).
package awsclient

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

// Config is the provider's `aws` block after environment fallbacks that the
// SDK does not apply itself.
type Config struct {
	Region   string
	Profile  string
	Endpoint string // one URL for every service, LocalStack style
	// S3UsePathStyle nil means: path style when a custom endpoint is in use
	// (emulators rarely serve virtual-hosted buckets), virtual-hosted otherwise.
	S3UsePathStyle            *bool
	SkipCredentialsValidation bool
	UserAgent                 string
}

// Clients are the AWS API clients, built once per provider configuration.
type Clients struct {
	Config aws.Config
	S3     *s3.Client
	IAM    *iam.Client
	EKS    *eks.Client
	STS    *sts.Client
}

// customEndpoint tells whether S3 is reached through a non-AWS endpoint.
func (c Config) customEndpoint() bool {
	return c.Endpoint != "" || os.Getenv("AWS_ENDPOINT_URL") != "" || os.Getenv("AWS_ENDPOINT_URL_S3") != ""
}

// New loads the SDK configuration and builds the clients. With
// SkipCredentialsValidation false it calls sts:GetCallerIdentity once so that
// bad credentials fail here, with a clear message, and not in the middle of
// an apply.
func New(ctx context.Context, c Config) (*Clients, error) {
	opts := []func(*config.LoadOptions) error{
		config.WithRetryer(func() aws.Retryer {
			return retry.AddWithMaxAttempts(retry.NewStandard(), 8)
		}),
	}
	if c.Region != "" {
		opts = append(opts, config.WithRegion(c.Region))
	}
	if c.Profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(c.Profile))
	}
	if c.UserAgent != "" {
		opts = append(opts, config.WithAppID(c.UserAgent))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("loading AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		return nil, errors.New("no AWS region: set aws.region in the provider block, or AWS_REGION")
	}
	if c.Endpoint != "" {
		cfg.BaseEndpoint = aws.String(c.Endpoint)
	}
	pathStyle := c.customEndpoint()
	if c.S3UsePathStyle != nil {
		pathStyle = *c.S3UsePathStyle
	}
	cl := &Clients{
		Config: cfg,
		S3: s3.NewFromConfig(cfg, func(o *s3.Options) {
			o.UsePathStyle = pathStyle
		}),
		IAM: iam.NewFromConfig(cfg),
		EKS: eks.NewFromConfig(cfg),
		STS: sts.NewFromConfig(cfg),
	}
	if !c.SkipCredentialsValidation {
		if _, err := cl.STS.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{}); err != nil {
			return nil, fmt.Errorf("validating AWS credentials with sts:GetCallerIdentity (set aws.skip_credentials_validation to skip): %w", err)
		}
	}
	return cl, nil
}
