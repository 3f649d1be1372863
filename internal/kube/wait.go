package kube

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Transient tells whether a failed read may succeed if tried again: the API
// server unreachable or restarting (connection refused or reset, a request
// timeout: errors with no API status at all), or an API status that
// apimachinery classifies as server-side and temporary (500, 503, 504, 429,
// the server's own timeouts; k8s.io/apimachinery/pkg/api/errors). NotFound,
// Forbidden, Unauthorized and every other 4xx are answers, not blips.
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return true
	}
	switch {
	case apierrors.IsInternalError(err), apierrors.IsServiceUnavailable(err), apierrors.IsServerTimeout(err),
		apierrors.IsTimeout(err), apierrors.IsTooManyRequests(err), apierrors.IsUnexpectedServerError(err):
		return true
	}
	_, delay := apierrors.SuggestsClientDelay(err)
	return delay || status.Status().Code >= 500
}

// poll runs check every interval until it is done or fails, or timeout
// passes (wait.PollUntilContextTimeout of k8s.io/apimachinery/pkg/util/wait).
// A transient read failure (Transient) does not end the wait: it is kept
// and retried until the timeout. Timing out returns ErrTimeout-wrapped
// errors from the caller's describe, with the last read failure if the last
// read failed.
func poll(ctx context.Context, interval, timeout time.Duration, read func(context.Context) (done bool, err error), describe func(lastReadErr error) error) error {
	var readErr error
	err := wait.PollUntilContextTimeout(ctx, interval, timeout, true, func(ctx context.Context) (bool, error) {
		done, err := read(ctx)
		if Transient(err) {
			readErr = err
			return false, nil
		}
		if err == nil {
			readErr = nil
		}
		return done, err
	})
	if err != nil && wait.Interrupted(err) {
		return describe(readErr)
	}
	return err
}

// readFailure words the last failed read of a wait that timed out.
func readFailure(err error) string {
	if err == nil {
		return ""
	}
	return fmt.Sprintf("; the last read failed: %s", err)
}
