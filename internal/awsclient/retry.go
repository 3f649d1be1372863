package awsclient

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// Retry calls fn until it succeeds, fails with an error retryable does not
// accept, or timeout passes; the wait between calls grows from 500ms to 5s.
// IAM is eventually consistent: a role or OIDC provider created seconds ago
// may still be "invalid" or "not found" elsewhere.
func Retry(ctx context.Context, timeout time.Duration, retryable func(error) bool, fn func() error) error {
	deadline := time.Now().Add(timeout)
	wait := 500 * time.Millisecond
	for {
		err := fn()
		if err == nil || !retryable(err) {
			return err
		}
		if time.Now().Add(wait).After(deadline) {
			return fmt.Errorf("still failing after %s: %w", timeout, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		case <-time.After(wait):
		}
		wait = min(wait*2, 5*time.Second)
	}
}

// ErrorCode is the AWS API error code of err, or "".
func ErrorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// IAMPropagating tells whether an IAM error is the kind eventual consistency
// produces and a retry may clear: a principal (OIDC provider, role) not yet
// visible, an entity not yet readable, a concurrent change, throttling.
func IAMPropagating(err error) bool {
	switch ErrorCode(err) {
	case "MalformedPolicyDocument":
		return strings.Contains(err.Error(), "Invalid principal")
	case "NoSuchEntity", "ConcurrentModification", "Throttling", "ThrottlingException", "ServiceFailure":
		return true
	case "InvalidParameterException", "InvalidParameterValueException":
		// EKS: "role ... does not exist" or cannot be assumed yet.
		msg := strings.ToLower(err.Error())
		return strings.Contains(msg, "role") && (strings.Contains(msg, "does not exist") || strings.Contains(msg, "assume"))
	}
	return false
}

// IsNotFound recognises the "does not exist" answers of S3, IAM and EKS
// (a missing bucket, key, role, policy, configuration or association).
func IsNotFound(err error) bool {
	if err == nil {
		return false
	}
	var nf *s3types.NotFound
	var nsb *s3types.NoSuchBucket
	var nsk *s3types.NoSuchKey
	if errors.As(err, &nf) || errors.As(err, &nsb) || errors.As(err, &nsk) {
		return true
	}
	switch ErrorCode(err) {
	case "NotFound", "NoSuchBucket", "NoSuchKey", "NoSuchEntity", "NoSuchBucketPolicy", "NoSuchLifecycleConfiguration",
		"NoSuchTagSet", "NoSuchTagSetError", "ServerSideEncryptionConfigurationNotFoundError", "ResourceNotFoundException":
		return true
	}
	return strings.Contains(err.Error(), "StatusCode: 404")
}
