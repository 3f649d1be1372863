package s3state

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/awsclient"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
)

// BucketAPI is the part of the S3 client the bucket finders use.
type BucketAPI interface {
	HeadBucket(ctx context.Context, in *s3.HeadBucketInput, opts ...func(*s3.Options)) (*s3.HeadBucketOutput, error)
	ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input, opts ...func(*s3.Options)) (*s3.ListObjectsV2Output, error)
}

// FindBucket returns nil when the bucket exists and answers the caller, a
// *notfound.Error when S3 says NoSuchBucket, and any other error as it is.
//
// HeadBucket's answer has no body, so the SDK decodes any 404 (from S3, or
// from a proxy or wrong endpoint answering 404 to everything) as NotFound.
// A 404 on HEAD is therefore confirmed by a GET (ListObjectsV2, one key),
// whose XML error body names NoSuchBucket only when S3 means it (S3 API
// Reference, "Error responses": NoSuchBucket, 404, "The specified bucket
// does not exist").
func FindBucket(ctx context.Context, c BucketAPI, bucket string) error {
	_, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket)})
	var head404 *s3types.NotFound
	if err == nil || !errors.As(err, &head404) {
		if err != nil {
			return fmt.Errorf("s3:HeadBucket %s: %w", bucket, err)
		}
		return nil
	}
	_, err = c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), MaxKeys: aws.Int32(1)})
	var nsb *s3types.NoSuchBucket
	switch {
	case errors.As(err, &nsb):
		return &notfound.Error{What: "bucket " + bucket, Err: err}
	case err == nil:
		return nil // HEAD's 404 was not the bucket's
	default:
		return fmt.Errorf("s3:HeadBucket %s answered 404, and s3:ListObjectsV2 did not confirm NoSuchBucket (a proxy or a wrong endpoint?): %w", bucket, err)
	}
}

// BucketState is what a look before CreateBucket finds.
type BucketState int

const (
	BucketAbsent       BucketState = iota
	BucketOwnedByYou               // exists and answers the caller
	BucketOwnedByOther             // exists, and the caller may not use it
)

// ProbeBucket looks before creating a bucket. In us-east-1, CreateBucket on
// a bucket the caller already owns answers 200 (S3 API Reference,
// CreateBucket: "BucketAlreadyOwnedByYou … In the North Virginia Region
// (us-east-1), Amazon S3 returns 200 OK and resets the bucket access control
// lists"), so only a look first keeps a create from adopting it.
func ProbeBucket(ctx context.Context, c BucketAPI, bucket string) (BucketState, error) {
	err := FindBucket(ctx, c, bucket)
	var re *awshttp.ResponseError
	switch {
	case err == nil:
		return BucketOwnedByYou, nil
	case notfound.Is(err):
		return BucketAbsent, nil
	case errors.As(err, &re) && re.HTTPStatusCode() == http.StatusForbidden:
		// HeadBucket: "403 Forbidden … the bucket exists and you do not have permission to access it".
		return BucketOwnedByOther, nil
	}
	return BucketAbsent, err
}

// IsBucketAlreadyOwnedByYou recognises CreateBucket's typed answer for a
// bucket the caller owns already (every region but us-east-1).
func IsBucketAlreadyOwnedByYou(err error) bool {
	var owned *s3types.BucketAlreadyOwnedByYou
	return errors.As(err, &owned)
}

// IsBucketAlreadyExists recognises CreateBucket's typed answer for a name
// another account holds.
func IsBucketAlreadyExists(err error) bool {
	var exists *s3types.BucketAlreadyExists
	return errors.As(err, &exists)
}

// IsAbsentConfiguration tells whether err is S3's answer for a bucket
// sub-resource that is not set, by the codes S3 documents (S3 API
// Reference, "Error responses"). The SDK does not model these as types; a
// body-less 404 decodes as "NotFound" and does not match.
func IsAbsentConfiguration(err error) bool {
	return awsclient.IsAPIError(err, "NoSuchBucketPolicy", "NoSuchLifecycleConfiguration", "NoSuchTagSet", "NoSuchTagSetError",
		"ServerSideEncryptionConfigurationNotFoundError", "NoSuchPublicAccessBlockConfiguration", "OwnershipControlsNotFoundError")
}
