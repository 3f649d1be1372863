package s3state

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

// lifecycleBucket is a bucket's lifecycle configuration, as S3 keeps it.
type lifecycleBucket struct {
	rules   []s3types.LifecycleRule // nil: no configuration
	getErr  error
	puts    int
	deletes int
}

func (b *lifecycleBucket) GetBucketLifecycleConfiguration(context.Context, *s3.GetBucketLifecycleConfigurationInput, ...func(*s3.Options)) (*s3.GetBucketLifecycleConfigurationOutput, error) {
	if b.getErr != nil {
		return nil, b.getErr
	}
	if b.rules == nil {
		return nil, apiErr("NoSuchLifecycleConfiguration")
	}
	return &s3.GetBucketLifecycleConfigurationOutput{Rules: b.rules}, nil
}

func (b *lifecycleBucket) PutBucketLifecycleConfiguration(_ context.Context, in *s3.PutBucketLifecycleConfigurationInput, _ ...func(*s3.Options)) (*s3.PutBucketLifecycleConfigurationOutput, error) {
	b.puts++
	b.rules = in.LifecycleConfiguration.Rules
	return &s3.PutBucketLifecycleConfigurationOutput{}, nil
}

func (b *lifecycleBucket) DeleteBucketLifecycle(context.Context, *s3.DeleteBucketLifecycleInput, ...func(*s3.Options)) (*s3.DeleteBucketLifecycleOutput, error) {
	b.deletes++
	b.rules = nil
	return &s3.DeleteBucketLifecycleOutput{}, nil
}

func TestStoreUnsafeRules(t *testing.T) {
	ctx := context.Background()
	st := store.Store{Bucket: "b", Prefix: "flink/app1"}
	on := s3types.ExpirationStatusEnabled
	parent := s3types.LifecycleRule{ID: aws.String("parent-7d"), Status: on, Filter: &s3types.LifecycleRuleFilter{Prefix: aws.String("flink/")},
		Expiration: &s3types.LifecycleExpiration{Days: aws.Int32(7)}}
	logs := s3types.LifecycleRule{ID: aws.String("logs"), Status: on, Filter: &s3types.LifecycleRuleFilter{Prefix: aws.String("logs/")},
		Expiration: &s3types.LifecycleExpiration{Days: aws.Int32(7)}}

	// No lifecycle configuration: nothing unsafe, nothing written.
	none := &lifecycleBucket{}
	if names, err := FindStoreUnsafeRules(ctx, none, st); err != nil || names != nil {
		t.Fatalf("no configuration: %v %v", names, err)
	}
	if err := RemoveStoreUnsafeRules(ctx, none, st); err != nil || none.puts+none.deletes != 0 {
		t.Fatalf("no configuration: %v, %d writes", err, none.puts+none.deletes)
	}

	// A parent rule is named and stripped; the other rule stays.
	b := &lifecycleBucket{rules: []s3types.LifecycleRule{parent, logs}}
	if names, err := FindStoreUnsafeRules(ctx, b, st); err != nil || !reflect.DeepEqual(names, []string{"parent-7d"}) {
		t.Fatalf("unsafe %v %v", names, err)
	}
	if err := RemoveStoreUnsafeRules(ctx, b, st); err != nil || b.puts != 1 {
		t.Fatalf("remove: %v, %d puts", err, b.puts)
	}
	if names, _ := FindStoreUnsafeRules(ctx, b, st); len(names) != 0 || len(b.rules) != 1 || aws.ToString(b.rules[0].ID) != "logs" {
		t.Fatalf("after removal: unsafe %v, rules %+v", names, b.rules)
	}

	// Only unsafe rules: the configuration is deleted.
	only := &lifecycleBucket{rules: []s3types.LifecycleRule{parent}}
	if err := RemoveStoreUnsafeRules(ctx, only, st); err != nil || only.deletes != 1 || only.puts != 0 {
		t.Fatalf("only unsafe: %v, %d deletes, %d puts", err, only.deletes, only.puts)
	}

	// Any other answer is an error, not "no configuration".
	denied := apiErr("AccessDenied")
	if _, err := FindStoreUnsafeRules(ctx, &lifecycleBucket{getErr: denied}, st); !errors.Is(err, denied) {
		t.Fatalf("denied: %v", err)
	}
}
