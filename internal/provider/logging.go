package provider

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/logging"
	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// The provider's log subsystems: every AWS and Kubernetes API request and
// response (and so every poll of a wait, each being a request) at DEBUG,
// with headers and bodies never logged, so no credential or token can
// appear. terraform shows them with TF_LOG_PROVIDER=DEBUG (or TRACE);
// TF_LOG_PROVIDER_FLINKSTATE_AWS / _KUBERNETES set one side's level alone.
// This wraps the SDKs' transports the way hashicorp/kubernetes wraps
// client-go's (rest.Config.WrapTransport with a logging round-tripper).
const (
	logAWS  = "aws"
	logKube = "kubernetes"
)

// loggingTransport logs each request and its response or error.
type loggingTransport struct {
	subsystem string
	next      http.RoundTripper
	// secrets are configured values masked wherever they might appear.
	secrets []string
}

// apiCallObserver, when set, sees every API request the provider makes,
// with its subsystem: the acceptance tests set it (TestMain) to check that
// the runner permissions the docs give cover each call the suite makes
// (runner_permissions_test.go). Nil otherwise.
var apiCallObserver func(subsystem string, req *http.Request)

func (t *loggingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if apiCallObserver != nil {
		apiCallObserver(t.subsystem, req)
	}
	ctx := tflog.NewSubsystem(req.Context(), t.subsystem,
		tflog.WithLevelFromEnv("TF_LOG_PROVIDER_FLINKSTATE_"+strings.ToUpper(t.subsystem)))
	if len(t.secrets) > 0 {
		ctx = tflog.SubsystemMaskAllFieldValuesStrings(ctx, t.subsystem, t.secrets...)
		ctx = tflog.SubsystemMaskMessageStrings(ctx, t.subsystem, t.secrets...)
	}
	fields := map[string]any{
		"http.method": req.Method,
		"http.url":    redactURL(req.URL),
	}
	if t.subsystem == logAWS {
		if svc := awsmiddleware.GetServiceID(req.Context()); svc != "" {
			fields["aws.service"] = svc
		}
		if op := awsmiddleware.GetOperationName(req.Context()); op != "" {
			fields["aws.operation"] = op
		}
	}
	tflog.SubsystemDebug(ctx, t.subsystem, "API request", fields)
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	fields["duration_ms"] = time.Since(start).Milliseconds()
	if err != nil {
		fields["error"] = err.Error()
		tflog.SubsystemDebug(ctx, t.subsystem, "API request failed", fields)
		return resp, err
	}
	fields["http.status"] = resp.StatusCode
	for _, h := range []string{"X-Amz-Request-Id", "X-Amzn-Requestid", "Audit-Id"} {
		if v := resp.Header.Get(h); v != "" {
			fields["request_id"] = v
		}
	}
	tflog.SubsystemDebug(ctx, t.subsystem, "API response", fields)
	return resp, err
}

// signingParams are presigned-URL query parameters that carry credentials
// (AWS Signature Version 4, query string authentication).
var signingParams = []string{"X-Amz-Credential", "X-Amz-Signature", "X-Amz-Security-Token"}

// redactURL drops user info and masks credential-carrying query values.
func redactURL(u *url.URL) string {
	c := *u
	c.User = nil
	if c.RawQuery != "" {
		q := c.Query()
		for k := range q {
			for _, s := range signingParams {
				if strings.EqualFold(k, s) {
					q.Set(k, "***")
				}
			}
			if strings.EqualFold(k, "token") || strings.EqualFold(k, "access_token") {
				q.Set(k, "***")
			}
		}
		c.RawQuery = q.Encode()
	}
	return c.String()
}

// awsLogging is the aws block's configuration hook: the SDK's HTTP client
// wrapped by loggingTransport, and the SDK's own retry messages (no request
// content) sent to the same subsystem.
func awsLogging(cfg *aws.Config) {
	next := http.DefaultTransport
	if hc, ok := cfg.HTTPClient.(*http.Client); ok && hc != nil {
		if hc.Transport != nil {
			next = hc.Transport
		}
		c := *hc
		c.Transport = &loggingTransport{subsystem: logAWS, next: next}
		cfg.HTTPClient = &c
	} else if cfg.HTTPClient != nil {
		cfg.HTTPClient = doerTransport{subsystem: logAWS, inner: cfg.HTTPClient}
	} else {
		cfg.HTTPClient = &http.Client{Transport: &loggingTransport{subsystem: logAWS, next: next}}
	}
	cfg.ClientLogMode |= aws.LogRetries
	cfg.Logger = sdkLogger{}
}

// doerTransport logs around an HTTP client that is not an *http.Client
// (the SDK's default awshttp.BuildableClient).
type doerTransport struct {
	subsystem string
	inner     interface {
		Do(*http.Request) (*http.Response, error)
	}
}

func (d doerTransport) Do(req *http.Request) (*http.Response, error) {
	return (&loggingTransport{subsystem: d.subsystem, next: roundTripFunc(d.inner.Do)}).RoundTrip(req)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// sdkLogger sends the AWS SDK's log lines (retry attempts) to the aws
// subsystem at DEBUG.
type sdkLogger struct{}

func (sdkLogger) Logf(logging.Classification, string, ...any) {}

func (sdkLogger) WithContext(ctx context.Context) logging.Logger { return sdkCtxLogger{ctx} }

type sdkCtxLogger struct{ ctx context.Context }

func (l sdkCtxLogger) Logf(c logging.Classification, format string, v ...any) {
	ctx := tflog.NewSubsystem(l.ctx, logAWS, tflog.WithLevelFromEnv("TF_LOG_PROVIDER_FLINKSTATE_AWS"))
	tflog.SubsystemDebug(ctx, logAWS, "AWS SDK: "+sprintf(format, v...), map[string]any{"classification": string(c)})
}

// kubeLogging wraps client-go's transport.
func kubeLogging(secrets ...string) func(http.RoundTripper) http.RoundTripper {
	var masked []string
	for _, s := range secrets {
		if s != "" {
			masked = append(masked, s)
		}
	}
	return func(next http.RoundTripper) http.RoundTripper {
		return &loggingTransport{subsystem: logKube, next: next, secrets: masked}
	}
}

func sprintf(format string, v ...any) string { return fmt.Sprintf(format, v...) }
