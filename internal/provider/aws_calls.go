package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/smithy-go"
)

// Bounds on AWS calls. Every operation of the AWS resources runs under a
// deadline: the resource's timeouts where it has them, else these. A frozen
// endpoint then fails plan or apply in bounded time, naming the endpoint,
// instead of hanging (the SDK's default HTTP client has no overall timeout).
const (
	awsReadBound  = 30 * time.Second // Read, ImportState, ModifyPlan: refresh and plan
	awsWriteBound = 5 * time.Minute  // Create, Update, Delete without a timeouts block
)

type awsBoundKey struct{}

type awsBound struct {
	d time.Duration
	m *meta
}

// boundAWS gives every AWS call made with the returned context a deadline d
// from now; awsErr then explains a missed deadline.
func (m *meta) boundAWS(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, d)
	return context.WithValue(ctx, awsBoundKey{}, awsBound{d: d, m: m}), cancel
}

// awsErr is err as a diagnostic detail; an error from a call that got no
// answer before the deadline says so and names the endpoint.
func awsErr(ctx context.Context, err error) string {
	if err == nil {
		return ""
	}
	if !errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return err.Error()
	}
	b, _ := ctx.Value(awsBoundKey{}).(awsBound)
	service := "AWS"
	var oe *smithy.OperationError
	if errors.As(err, &oe) {
		service = oe.Service()
	}
	endpoint := "its endpoint"
	if b.m != nil && b.m.awsClients != nil {
		endpoint = b.m.awsClients.Endpoint(service)
	}
	return fmt.Sprintf("%s: no answer from %s within %s. Check that the endpoint is reachable (aws.endpoint, AWS_ENDPOINT_URL, network), "+
		"or raise the resource's timeouts.", err, endpoint, b.d)
}

// alreadyExists is the detail for a create that found its object already
// there: nothing is adopted; importing it is the way to manage it here.
func alreadyExists(what, importID string) string {
	return fmt.Sprintf("%s already exists: created outside this configuration, by another one, or by an earlier apply whose answer was lost. "+
		"Nothing was changed, and this resource does not take over existing objects. To manage it with this configuration, import it:\n\n"+
		"  terraform import ADDRESS %s\n\n"+
		"where ADDRESS is the resource address Terraform names above this message (after \"with\"), or add an import block with "+
		"to = that address and id = %q. Otherwise choose another name.", what, importID, importID)
}
