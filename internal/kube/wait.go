package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Transient tells whether a failed read may succeed if tried again: the API
// server unreachable or restarting (client-go returns the transport's
// *url.Error: connection refused or reset, the request timeout of
// rest.Config.Timeout), or an API status that apimachinery classifies as
// server-side and temporary (500, 503, 504, 429, the server's own
// timeouts; k8s.io/apimachinery/pkg/api/errors). NotFound, Forbidden,
// Unauthorized and every other 4xx are answers, not blips; so is any other
// error (a FAILED deployment, a decoding error).
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		switch {
		case apierrors.IsInternalError(err), apierrors.IsServiceUnavailable(err), apierrors.IsServerTimeout(err),
			apierrors.IsTimeout(err), apierrors.IsTooManyRequests(err), apierrors.IsUnexpectedServerError(err):
			return true
		}
		_, delay := apierrors.SuggestsClientDelay(err)
		return delay || status.Status().Code >= 500
	}
	var urlErr *url.Error
	var netErr net.Error
	return errors.As(err, &urlErr) || errors.As(err, &netErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err)
}

// poll runs check every interval until it is done or fails, or timeout
// passes (wait.PollUntilContextTimeout of k8s.io/apimachinery/pkg/util/wait).
// A transient read failure (Transient) does not end the wait: it is kept
// and retried until the timeout. Timing out returns ErrTimeout-wrapped
// errors from the caller's describe, with the last read failure if the last
// read failed.
func poll(ctx context.Context, interval, timeout time.Duration, read func(context.Context) (done bool, err error), describe func(lastReadErr error, end waitEnd) error) error {
	var readErr error
	outer := ctx
	start := time.Now()
	err := wait.PollUntilContextTimeout(ctx, interval, timeout, true, func(context.Context) (bool, error) {
		// Reads run under the caller's context, not the poll's deadline: a
		// read started just before the deadline would otherwise fail in
		// client-go's rate limiter ("would exceed context deadline") and
		// end the wait with that instead of the timeout. Each read is still
		// bounded by rest.Config.Timeout and the caller's context.
		done, err := read(outer)
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
		end := waitEnd{Timeout: timeout}
		if errors.Is(outer.Err(), context.Canceled) {
			end.Interrupted, end.After = true, time.Since(start)
		}
		return describe(readErr, end)
	}
	return err
}

// ErrInterrupted: the run was cancelled while a wait was going on
// (terraform's Ctrl-C, a stopped CI job: terraform-plugin-go cancels the
// request's context when Terraform stops the provider).
var ErrInterrupted = errors.New("interrupted")

// waitEnd says how a wait ended without its condition: at its timeout, or
// interrupted After some time. Waits word their errors with it, so that a
// Ctrl-C is never reported as a timeout or an unreachable operator.
type waitEnd struct {
	Interrupted bool
	After       time.Duration
	Timeout     time.Duration
}

// err is the sentinel: ErrInterrupted, or the wait's own timeout error.
func (e waitEnd) err(timeoutErr error) error {
	if e.Interrupted {
		return ErrInterrupted
	}
	return timeoutErr
}

// when is "after 10m0s" or "850ms into the wait (the run was cancelled)".
func (e waitEnd) when() string {
	if e.Interrupted {
		return fmt.Sprintf("%s into the wait (the run was cancelled, e.g. by Ctrl-C)", e.After.Round(time.Millisecond))
	}
	return "after " + e.Timeout.String()
}

// hint is a question about the cause of a timeout; nothing when interrupted.
func (e waitEnd) hint(h string) string {
	if e.Interrupted {
		return ""
	}
	return h
}

// readFailure words the last failed read of a wait that timed out.
func readFailure(err error) string {
	if err == nil {
		return ""
	}
	return fmt.Sprintf("; the last read failed: %s", err)
}
