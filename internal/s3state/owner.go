package s3state

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/awsclient"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

// OwnerAPI is the part of the S3 client the ownership checks use.
type OwnerAPI interface {
	GetObject(ctx context.Context, in *s3.GetObjectInput, opts ...func(*s3.Options)) (*s3.GetObjectOutput, error)
	PutObject(ctx context.Context, in *s3.PutObjectInput, opts ...func(*s3.Options)) (*s3.PutObjectOutput, error)
	ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input, opts ...func(*s3.Options)) (*s3.ListObjectsV2Output, error)
}

// NewOwnerToken is a fresh random owner token.
func NewOwnerToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// ReadMarker returns the store's ownership marker, or nil when there is
// none (S3 answered NoSuchKey, typed).
func ReadMarker(ctx context.Context, c OwnerAPI, s store.Store) (*store.Marker, error) {
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.Bucket), Key: aws.String(s.MarkerKey())})
	if notfound.Is(awsclient.NotFound("ownership marker of state store "+s.ID(), err)) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("s3:GetObject s3://%s/%s: %w", s.Bucket, s.MarkerKey(), err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(io.LimitReader(out.Body, 64<<10))
	if err != nil {
		return nil, fmt.Errorf("reading s3://%s/%s: %w", s.Bucket, s.MarkerKey(), err)
	}
	var m store.Marker
	if err := json.Unmarshal(b, &m); err != nil || m.StoreID == "" {
		// Something else sits at the marker's key: it is not ours either.
		return &store.Marker{StoreID: "(unreadable marker)"}, nil
	}
	return &m, nil
}

// WriteMarker records the store's ownership under its prefix. With
// exclusive, the write succeeds only if no marker exists (a conditional
// write, If-None-Match: *; S3 User Guide, "Conditional writes"), so two
// concurrent creates cannot both win.
func WriteMarker(ctx context.Context, c OwnerAPI, s store.Store, owner, writer string, exclusive bool) error {
	body, _ := json.Marshal(store.Marker{StoreID: s.ID(), Owner: owner, Writer: writer})
	in := &s3.PutObjectInput{Bucket: aws.String(s.Bucket), Key: aws.String(s.MarkerKey()),
		Body: strings.NewReader(string(body)), ContentType: aws.String("application/json")}
	if exclusive {
		in.IfNoneMatch = aws.String("*")
	}
	if _, err := c.PutObject(ctx, in); err != nil {
		if awsclient.IsAPIError(err, "PreconditionFailed", "ConditionalRequestConflict") {
			return &ConflictError{Detail: fmt.Sprintf("another store's marker was written at s3://%s/%s at the same time: two applies are "+
				"creating a store at this prefix at once. Let the other one finish; then, if the store is yours to manage, import it "+
				"here (terraform import ADDRESS %s), or choose another prefix", s.Bucket, s.MarkerKey(), s.ID())}
		}
		return fmt.Errorf("s3:PutObject s3://%s/%s: %w", s.Bucket, s.MarkerKey(), err)
	}
	return nil
}

// ConflictError says why a prefix cannot become a new store.
type ConflictError struct {
	Detail string
	// ImportID, when set, is the store ID of an existing store at exactly
	// this prefix: importing it is the way to manage it.
	ImportID string
}

func (e *ConflictError) Error() string { return e.Detail }

// IsConflict tells whether err is a ConflictError.
func IsConflict(err error) bool {
	var c *ConflictError
	return errors.As(err, &c)
}

// CheckFree returns a ConflictError when s cannot be created as a new store:
// a store is recorded at its prefix, it is nested in another store (a
// marker at an ancestor prefix), or its prefix already holds objects (state
// of an application, or a store nested below it). Nothing is written.
func CheckFree(ctx context.Context, c OwnerAPI, s store.Store) error {
	if m, err := ReadMarker(ctx, c, s); err != nil {
		return err
	} else if m != nil {
		return &ConflictError{ImportID: s.ID(),
			Detail: fmt.Sprintf("s3://%s/%s/ already belongs to a state store (marker %s names %s)",
				s.Bucket, s.Prefix, store.MarkerName, m.StoreID)}
	}
	for _, a := range s.Ancestors() {
		parent := store.Store{Bucket: s.Bucket, Prefix: a}
		m, err := ReadMarker(ctx, c, parent)
		if err != nil {
			return err
		}
		if m != nil {
			return &ConflictError{Detail: fmt.Sprintf("s3://%s/%s/ is inside the state store %s: a store nested in another one would share its "+
				"directories and its force_destroy would reach this one's state. Choose a prefix outside s3://%s/%s/", s.Bucket, s.Prefix, parent.ID(), s.Bucket, a)}
		}
	}
	out, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(s.Bucket), Prefix: aws.String(s.KeyPrefix()), MaxKeys: aws.Int32(1)})
	if err != nil {
		return fmt.Errorf("s3:ListObjectsV2 s3://%s/%s: %w", s.Bucket, s.KeyPrefix(), err)
	}
	if len(out.Contents) > 0 {
		key := aws.ToString(out.Contents[0].Key)
		what := "objects"
		if nested, ok := store.MarkerStoreOf(s.Bucket, key); ok {
			what = "the state store " + nested.ID()
		}
		return &ConflictError{Detail: fmt.Sprintf("s3://%s/%s/ already holds %s (e.g. %s): another application's state, or data this store would "+
			"take over. Choose an empty prefix, or move the objects first", s.Bucket, s.Prefix, what, key)}
	}
	return nil
}

// NestedStores lists the stores recorded strictly below s (their markers),
// so that a force_destroy of s leaves them alone.
func NestedStores(ctx context.Context, c OwnerAPI, s store.Store) ([]store.Store, error) {
	var out []store.Store
	in := &s3.ListObjectsV2Input{Bucket: aws.String(s.Bucket), Prefix: aws.String(s.KeyPrefix())}
	for {
		page, err := c.ListObjectsV2(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("s3:ListObjectsV2 s3://%s/%s: %w", s.Bucket, s.KeyPrefix(), err)
		}
		for _, o := range page.Contents {
			if n, ok := store.MarkerStoreOf(s.Bucket, aws.ToString(o.Key)); ok && n.Prefix != s.Prefix {
				out = append(out, n)
			}
		}
		if !aws.ToBool(page.IsTruncated) || page.NextContinuationToken == nil {
			return out, nil
		}
		in.ContinuationToken = page.NextContinuationToken
	}
}

// CheckNotNested is CheckFree's nesting rule, run again after the marker is
// written: a store created at the same time at an ancestor or below this
// prefix (it passed its own check before this marker existed, as this one
// did before its marker) is a ConflictError. Two applies racing for nested
// prefixes then both see the other's marker, and both give up.
func CheckNotNested(ctx context.Context, c OwnerAPI, s store.Store) error {
	for _, a := range s.Ancestors() {
		parent := store.Store{Bucket: s.Bucket, Prefix: a}
		m, err := ReadMarker(ctx, c, parent)
		if err != nil {
			return err
		}
		if m != nil {
			return &ConflictError{Detail: fmt.Sprintf("the state store %s was created at the same time, and s3://%s/%s/ is inside it: "+
				"nested stores would share directories and one's force_destroy would reach the other's state. Choose a prefix outside "+
				"s3://%s/%s/", parent.ID(), s.Bucket, s.Prefix, s.Bucket, a)}
		}
	}
	nested, err := NestedStores(ctx, c, s)
	if err != nil {
		return err
	}
	if len(nested) > 0 {
		return &ConflictError{Detail: fmt.Sprintf("the state store %s was created at the same time inside s3://%s/%s/: nested stores "+
			"would share directories and this one's force_destroy would reach its state. Choose a prefix that holds no store", nested[0].ID(), s.Bucket, s.Prefix)}
	}
	return nil
}

// MarkerDeleteAPI deletes a marker.
type MarkerDeleteAPI interface {
	OwnerAPI
	DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, opts ...func(*s3.Options)) (*s3.DeleteObjectOutput, error)
}

// DeleteMarker deletes the store's ownership marker, whoever it names: the
// store goes, and its prefix is free again.
func DeleteMarker(ctx context.Context, c interface {
	DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, opts ...func(*s3.Options)) (*s3.DeleteObjectOutput, error)
}, s store.Store) error {
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.Bucket), Key: aws.String(s.MarkerKey())}); err != nil {
		return fmt.Errorf("s3:DeleteObject s3://%s/%s: %w", s.Bucket, s.MarkerKey(), err)
	}
	return nil
}

// RemoveOwnMarker deletes the store's marker if it still names owner (the
// token this create wrote): undoing a create that lost a race never removes
// another store's marker.
func RemoveOwnMarker(ctx context.Context, c MarkerDeleteAPI, s store.Store, owner string) error {
	m, err := ReadMarker(ctx, c, s)
	if err != nil || m == nil || m.Owner != owner {
		return err
	}
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.Bucket), Key: aws.String(s.MarkerKey())}); err != nil {
		return fmt.Errorf("s3:DeleteObject s3://%s/%s: %w", s.Bucket, s.MarkerKey(), err)
	}
	return nil
}
