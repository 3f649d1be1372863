package s3state

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// S3API is the part of the S3 client this package uses.
type S3API interface {
	ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input, opts ...func(*s3.Options)) (*s3.ListObjectsV2Output, error)
	ListObjectVersions(ctx context.Context, in *s3.ListObjectVersionsInput, opts ...func(*s3.Options)) (*s3.ListObjectVersionsOutput, error)
	DeleteObjects(ctx context.Context, in *s3.DeleteObjectsInput, opts ...func(*s3.Options)) (*s3.DeleteObjectsOutput, error)
}

// Contents counts the current objects under prefix ("" for the whole
// bucket, leaving out its ownership marker BucketMarkerKey; a non-empty
// prefix must end with "/" so that "app1/" never matches "app10/"),
// following pagination. It stops counting at limit and
// says whether there is more.
func Contents(ctx context.Context, c S3API, bucket, prefix string, limit int) (count int, more bool, err error) {
	in := &s3.ListObjectsV2Input{Bucket: aws.String(bucket)}
	if prefix != "" {
		in.Prefix = aws.String(prefix)
	}
	for {
		out, err := c.ListObjectsV2(ctx, in)
		if err != nil {
			return count, false, fmt.Errorf("listing s3://%s/%s: %w", bucket, prefix, err)
		}
		for _, o := range out.Contents {
			if !IsBucketMarker(aws.ToString(o.Key)) {
				count++
			}
		}
		truncated := aws.ToBool(out.IsTruncated) && out.NextContinuationToken != nil
		if count >= limit || !truncated {
			return count, truncated, nil
		}
		in.ContinuationToken = out.NextContinuationToken
	}
}

// DeleteAll deletes every object version and delete marker under prefix
// (see Contents for the prefix rule) whose key skip (may be nil) does not
// keep, a page of at most 1000 keys per DeleteObjects call, following
// pagination. Passes repeat until one deletes nothing (a checkpoint written
// meanwhile is caught by the next pass), at most three. It returns how many
// it deleted.
func DeleteAll(ctx context.Context, c S3API, bucket, prefix string, skip func(key string) bool) (int, error) {
	deleted := 0
	for pass := 0; pass < 3; pass++ {
		in := &s3.ListObjectVersionsInput{Bucket: aws.String(bucket)}
		if prefix != "" {
			in.Prefix = aws.String(prefix)
		}
		before := deleted
		for {
			out, err := c.ListObjectVersions(ctx, in)
			if err != nil {
				return deleted, fmt.Errorf("listing s3://%s/%s: %w", bucket, prefix, err)
			}
			var ids []s3types.ObjectIdentifier
			for _, v := range out.Versions {
				if skip == nil || !skip(aws.ToString(v.Key)) {
					ids = append(ids, s3types.ObjectIdentifier{Key: v.Key, VersionId: versionID(v.VersionId)})
				}
			}
			for _, m := range out.DeleteMarkers {
				if skip == nil || !skip(aws.ToString(m.Key)) {
					ids = append(ids, s3types.ObjectIdentifier{Key: m.Key, VersionId: versionID(m.VersionId)})
				}
			}
			for start := 0; start < len(ids); start += 1000 {
				end := min(start+1000, len(ids))
				res, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{
					Bucket: aws.String(bucket),
					Delete: &s3types.Delete{Objects: ids[start:end], Quiet: aws.Bool(true)},
				})
				if err != nil {
					return deleted, fmt.Errorf("deleting objects in s3://%s/%s: %w", bucket, prefix, err)
				}
				if len(res.Errors) > 0 {
					e := res.Errors[0]
					return deleted, fmt.Errorf("deleting s3://%s/%s: %s: %s (%d keys failed)", bucket, aws.ToString(e.Key),
						aws.ToString(e.Code), aws.ToString(e.Message), len(res.Errors))
				}
				deleted += end - start
			}
			// Keys before the marker are done (or kept): deleting them does
			// not move what comes after it.
			if !aws.ToBool(out.IsTruncated) || out.NextKeyMarker == nil {
				break
			}
			in.KeyMarker, in.VersionIdMarker = out.NextKeyMarker, out.NextVersionIdMarker
		}
		if deleted == before {
			return deleted, nil
		}
	}
	return deleted, fmt.Errorf("s3://%s/%s still had objects after three passes (something keeps writing there?)", bucket, prefix)
}

// versionID keeps S3's version ID as listed ("null" names the null version
// of an object written while versioning was off; dropping it would only add
// a delete marker in a versioned bucket).
func versionID(v *string) *string {
	if v == nil || *v == "" {
		return nil
	}
	return v
}
