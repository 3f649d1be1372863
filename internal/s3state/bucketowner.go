package s3state

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/awsclient"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

// BucketMarkerKey is the object that records which configuration created a
// bucket. CreateBucket alone cannot tell: in us-east-1, creating a bucket
// the account already owns answers 200 (S3 API Reference, CreateBucket,
// BucketAlreadyOwnedByYou: "for legacy compatibility ... in the North
// Virginia Region, Amazon S3 returns 200 OK"), so two applies racing for
// one name could both believe they created it. The marker is written right
// after the create with If-None-Match: * (S3 User Guide, "Conditional
// writes"): exactly one creator wins, and the loser writes or deletes
// nothing else.
const BucketMarkerKey = store.BucketMarkerKey

// BucketMarker is the marker's content.
type BucketMarker struct {
	Bucket string `json:"bucket"`
	Owner  string `json:"owner"`
	Writer string `json:"writer,omitempty"`
}

// IsBucketMarker tells whether key is the ownership marker (listings that
// judge a bucket's contents leave it out).
func IsBucketMarker(key string) bool { return key == BucketMarkerKey }

// WriteBucketMarker records owner as the bucket's creator; a ConflictError
// when another one was written first.
func WriteBucketMarker(ctx context.Context, c OwnerAPI, bucket, owner, writer string) error {
	body, _ := json.Marshal(BucketMarker{Bucket: bucket, Owner: owner, Writer: writer})
	_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(BucketMarkerKey),
		Body: strings.NewReader(string(body)), ContentType: aws.String("application/json"), IfNoneMatch: aws.String("*")})
	if awsclient.IsAPIError(err, "PreconditionFailed", "ConditionalRequestConflict") {
		return &ConflictError{ImportID: bucket, Detail: fmt.Sprintf("s3://%s was created by another configuration at the same time "+
			"(its ownership marker %s was written first)", bucket, BucketMarkerKey)}
	}
	if err != nil {
		return fmt.Errorf("s3:PutObject s3://%s/%s: %w", bucket, BucketMarkerKey, err)
	}
	return nil
}

// ReadBucketMarker returns the bucket's ownership marker, nil without one.
func ReadBucketMarker(ctx context.Context, c OwnerAPI, bucket string) (*BucketMarker, error) {
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(BucketMarkerKey)})
	if notfound.Is(awsclient.NotFound("ownership marker of bucket "+bucket, err)) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("s3:GetObject s3://%s/%s: %w", bucket, BucketMarkerKey, err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(io.LimitReader(out.Body, 64<<10))
	if err != nil {
		return nil, fmt.Errorf("reading s3://%s/%s: %w", bucket, BucketMarkerKey, err)
	}
	var m BucketMarker
	if json.Unmarshal(b, &m) != nil || m.Owner == "" {
		return &BucketMarker{Bucket: bucket, Owner: "(unreadable marker)"}, nil
	}
	return &m, nil
}
