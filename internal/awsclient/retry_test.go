package awsclient

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/smithy-go"
)

func apiErr(code, msg string) error { return &smithy.GenericAPIError{Code: code, Message: msg} }

func TestIAMPropagating(t *testing.T) {
	cases := map[error]bool{
		apiErr("MalformedPolicyDocument", "Invalid principal in policy: \"Federated\":\"arn:...\""): true,
		apiErr("MalformedPolicyDocument", "Syntax errors in policy."):                               false,
		apiErr("NoSuchEntity", "The role cannot be found"):                                          true,
		apiErr("InvalidParameterException", "Role arn:aws:iam::1:role/x does not exist"):            true,
		apiErr("InvalidParameterException", "namespace is invalid"):                                 false,
		apiErr("AccessDenied", "no"):                                                                false,
		errors.New("dial tcp: connection refused"):                                                  false,
	}
	for err, want := range cases {
		if got := IAMPropagating(err); got != want {
			t.Errorf("%v: got %v, want %v", err, got, want)
		}
	}
}

func TestRetry(t *testing.T) {
	calls := 0
	err := Retry(context.Background(), 10*time.Second, IAMPropagating, func() error {
		calls++
		if calls < 3 {
			return apiErr("NoSuchEntity", "not yet")
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("err %v after %d calls, want success on the 3rd", err, calls)
	}
	calls = 0
	err = Retry(context.Background(), 10*time.Second, IAMPropagating, func() error { calls++; return apiErr("AccessDenied", "no") })
	if err == nil || calls != 1 {
		t.Fatalf("a permanent error was retried: %d calls, %v", calls, err)
	}
	err = Retry(context.Background(), 600*time.Millisecond, IAMPropagating, func() error { return apiErr("NoSuchEntity", "never") })
	if err == nil || ErrorCode(err) != "NoSuchEntity" {
		t.Fatalf("timeout error %v should wrap the last API error", err)
	}
}

func TestIsNotFound(t *testing.T) {
	for _, code := range []string{"NoSuchEntity", "NoSuchKey", "NoSuchBucketPolicy", "ResourceNotFoundException", "NotFound"} {
		if !IsNotFound(apiErr(code, "x")) {
			t.Errorf("%s not recognised", code)
		}
	}
	if IsNotFound(nil) || IsNotFound(apiErr("AccessDenied", "no")) || IsNotFound(errors.New("connection refused")) {
		t.Error("a nil, access-denied or network error taken for not-found")
	}
}
