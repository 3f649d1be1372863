package awsclient

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
)

// Retry calls fn until it succeeds, fails with an error retryable does not
// accept, or timeout passes; the wait between calls grows from 500ms to 5s.
// It is for IAM eventual consistency only (see IAMPropagating): throttling
// and 5xx answers are the SDK retryer's job, inside each call, so nothing
// here multiplies its attempts.
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

// IAMPropagating tells whether an error is IAM eventual consistency that a
// retry clears: a principal or role created moments ago that the service
// cannot see yet. Only the typed errors and messages AWS documents for it:
//   - IAM: MalformedPolicyDocument "Invalid principal in policy" for a trust
//     policy naming a principal not yet propagated (IAM User Guide,
//     "Troubleshoot IAM: changes that I make are not always immediately
//     visible"; hashicorp/terraform-provider-aws internal/service/iam/role.go
//     retries exactly this on CreateRole and UpdateAssumeRolePolicy).
//   - IAM: NoSuchEntity on a call made right after creating that entity
//     (callers pass this predicate only then, e.g. PutRolePolicy after
//     CreateRole).
//   - EKS: InvalidParameterException saying the role does not exist or
//     cannot be assumed (CreatePodIdentityAssociation, EKS User Guide "Pod
//     Identity": the role must be assumable by pods.eks.amazonaws.com).
//
// Throttling, ConcurrentModification and ServiceFailure are not here: the
// SDK's standard retryer retries them inside each call.
func IAMPropagating(err error) bool {
	var malformed *iamtypes.MalformedPolicyDocumentException
	var noEntity *iamtypes.NoSuchEntityException
	var eksParam *ekstypes.InvalidParameterException
	switch {
	case errors.As(err, &malformed):
		return strings.Contains(malformed.ErrorMessage(), "Invalid principal")
	case errors.As(err, &noEntity):
		return true
	case errors.As(err, &eksParam):
		msg := strings.ToLower(eksParam.ErrorMessage())
		return strings.Contains(msg, "role") && (strings.Contains(msg, "does not exist") || strings.Contains(msg, "assume"))
	}
	return false
}

// NotFound returns err as a *notfound.Error about what when it is a typed
// "does not exist" answer: S3 NoSuchBucket, NoSuchKey or NotFound (a HEAD
// request, whose answer has no body), IAM NoSuchEntity, EKS
// ResourceNotFoundException. Anything else, including a 404 whose body
// names no such error (a proxy, a wrong endpoint), is returned as it is and
// never taken for "gone". Call it on the answer of the call that can say
// so, then ask notfound.Is.
//
// Note that a HEAD request's 404 decodes as NotFound whatever sent it: a
// caller that would forget a resource on it confirms with a GET first (see
// s3state.FindBucket).
func NotFound(what string, err error) error {
	return notfound.When(what, err, isNotFoundAnswer)
}

// isNotFoundAnswer is the typed check behind NotFound.
func isNotFoundAnswer(err error) bool {
	var (
		s3nf  *s3types.NotFound
		s3nsb *s3types.NoSuchBucket
		s3nsk *s3types.NoSuchKey
		iamnf *iamtypes.NoSuchEntityException
		eksnf *ekstypes.ResourceNotFoundException
	)
	return errors.As(err, &s3nf) || errors.As(err, &s3nsb) || errors.As(err, &s3nsk) || errors.As(err, &iamnf) || errors.As(err, &eksnf)
}

// IsAPIError tells whether err is an AWS error answer with one of the codes
// (for codes the SDK does not model as types, e.g. S3's
// NoSuchBucketPolicy). A body-less 404 decodes as "NotFound", never as one
// of these, so a proxy's 404 does not match.
func IsAPIError(err error, codes ...string) bool {
	c := ErrorCode(err)
	for _, want := range codes {
		if c != "" && c == want {
			return true
		}
	}
	return false
}
