package s3state

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

// LifecycleAPI is the part of the S3 client a store's lifecycle check and
// repair use.
type LifecycleAPI interface {
	GetBucketLifecycleConfiguration(ctx context.Context, in *s3.GetBucketLifecycleConfigurationInput, opts ...func(*s3.Options)) (*s3.GetBucketLifecycleConfigurationOutput, error)
	PutBucketLifecycleConfiguration(ctx context.Context, in *s3.PutBucketLifecycleConfigurationInput, opts ...func(*s3.Options)) (*s3.PutBucketLifecycleConfigurationOutput, error)
	DeleteBucketLifecycle(ctx context.Context, in *s3.DeleteBucketLifecycleInput, opts ...func(*s3.Options)) (*s3.DeleteBucketLifecycleOutput, error)
}

// storeLifecycle returns the bucket's lifecycle rules (none when it has no
// lifecycle configuration) and the names of those that expire or transition
// current objects under the store's prefix or a parent of it.
func storeLifecycle(ctx context.Context, c LifecycleAPI, st store.Store) ([]s3types.LifecycleRule, []string, error) {
	lc, err := c.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(st.Bucket)})
	if IsAbsentConfiguration(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("s3:GetBucketLifecycleConfiguration %s: %w", st.Bucket, err)
	}
	return lc.Rules, UnsafeRules(lc.Rules, func(rule s3types.LifecycleRule) bool {
		return PrefixReaches(RulePrefix(rule), st.KeyPrefix())
	}), nil
}

// FindStoreUnsafeRules names the bucket's lifecycle rules that expire or
// transition current objects under the store's prefix or a parent of it.
func FindStoreUnsafeRules(ctx context.Context, c LifecycleAPI, st store.Store) ([]string, error) {
	_, names, err := storeLifecycle(ctx, c, st)
	return names, err
}

// RemoveStoreUnsafeRules takes the expiration of current objects and the
// transitions out of the rules that reach the store; the rest of the
// bucket's lifecycle configuration stays as it is (a configuration left
// with no rule is deleted).
func RemoveStoreUnsafeRules(ctx context.Context, c LifecycleAPI, st store.Store) error {
	rules, names, err := storeLifecycle(ctx, c, st)
	if err != nil || len(names) == 0 {
		return err
	}
	rules = WithoutCurrentExpiry(rules, names)
	if len(rules) == 0 {
		_, err = c.DeleteBucketLifecycle(ctx, &s3.DeleteBucketLifecycleInput{Bucket: aws.String(st.Bucket)})
	} else {
		_, err = c.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{Bucket: aws.String(st.Bucket),
			LifecycleConfiguration: &s3types.BucketLifecycleConfiguration{Rules: rules}})
	}
	if err != nil {
		return fmt.Errorf("removing lifecycle expiry %v from s3://%s: %w", names, st.Bucket, err)
	}
	return nil
}
