package awsclient

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
)

func apiErr(code, msg string) error { return &smithy.GenericAPIError{Code: code, Message: msg} }

func TestIAMPropagating(t *testing.T) {
	cases := map[error]bool{
		&iamtypes.MalformedPolicyDocumentException{Message: strp("Invalid principal in policy: \"Federated\":\"arn:...\"")}: true,
		&iamtypes.MalformedPolicyDocumentException{Message: strp("Syntax errors in policy.")}:                               false,
		&iamtypes.NoSuchEntityException{Message: strp("The role cannot be found")}:                                          true,
		&ekstypes.InvalidParameterException{Message: strp("Role arn:aws:iam::1:role/x does not exist")}:                     true,
		&ekstypes.InvalidParameterException{Message: strp("namespace is invalid")}:                                          false,
		// Untyped look-alikes, throttling and 5xx are not IAM propagation.
		apiErr("NoSuchEntity", "not typed"):                          false,
		apiErr("Throttling", "Rate exceeded"):                        false,
		&iamtypes.ServiceFailureException{}:                          false,
		apiErr("AccessDenied", "no"):                                 false,
		errors.New("dial tcp: connection refused"):                   false,
		&iamtypes.ConcurrentModificationException{}:                  false,
		fmt.Errorf("wrapped: %w", &iamtypes.NoSuchEntityException{}): true,
	}
	for err, want := range cases {
		if got := IAMPropagating(err); got != want {
			t.Errorf("%v: got %v, want %v", err, got, want)
		}
	}
}

func strp(s string) *string { return &s }

func TestRetry(t *testing.T) {
	calls := 0
	err := Retry(context.Background(), 10*time.Second, IAMPropagating, func() error {
		calls++
		if calls < 3 {
			return &iamtypes.NoSuchEntityException{Message: strp("not yet")}
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("err %v after %d calls, want success on the 3rd", err, calls)
	}
	calls = 0
	err = Retry(context.Background(), 10*time.Second, IAMPropagating, func() error { calls++; return apiErr("Throttling", "slow down") })
	if err == nil || calls != 1 {
		t.Fatalf("throttling was retried by the outer loop (the SDK retryer owns it): %d calls, %v", calls, err)
	}
	err = Retry(context.Background(), 600*time.Millisecond, IAMPropagating, func() error { return &iamtypes.NoSuchEntityException{} })
	var nse *iamtypes.NoSuchEntityException
	if err == nil || !errors.As(err, &nse) {
		t.Fatalf("timeout error %v should wrap the last API error", err)
	}
}

func TestIsNotFoundTypedOnly(t *testing.T) {
	for _, err := range []error{
		&s3types.NoSuchBucket{}, &s3types.NoSuchKey{}, &s3types.NotFound{},
		&iamtypes.NoSuchEntityException{}, &ekstypes.ResourceNotFoundException{},
		fmt.Errorf("wrapped: %w", &s3types.NoSuchBucket{}),
	} {
		if !notfound.Is(NotFound("thing", err)) {
			t.Errorf("%T not recognised", err)
		}
	}
	for _, err := range []error{
		nil,
		apiErr("AccessDenied", "no"),
		errors.New("connection refused"),
		// What a GET through a proxy answering 404 to everything decodes as.
		apiErr("NotFound", "Not Found"),
		errors.New("https response error StatusCode: 404, NoSuchBucket"),
		apiErr("NoSuchEntity", "an untyped code is not the typed error"),
	} {
		if got := NotFound("thing", err); notfound.Is(got) || got != err {
			t.Errorf("%v taken for not-found", err)
		}
	}
}

func TestIsAPIError(t *testing.T) {
	if !IsAPIError(apiErr("NoSuchBucketPolicy", "x"), "NoSuchBucketPolicy") || IsAPIError(apiErr("NotFound", "x"), "NoSuchBucketPolicy") ||
		IsAPIError(errors.New("x"), "") {
		t.Fatal("IsAPIError")
	}
}
