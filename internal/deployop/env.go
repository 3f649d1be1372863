// Package deployop runs one create, update or delete of a FlinkDeployment
// as a sequence of checks, writes and waits on the domain's values
// (flinkdeploy.Want and Desired, kube's waits, checkpoint's reads,
// preflight's rules). It does not import Terraform: the resources convert
// their models to these values once and report what comes back.
package deployop

import (
	"context"
	"time"

	"k8s.io/client-go/dynamic"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
)

// Env is what an operation calls: the Kubernetes API and S3, each set up
// on first use (an error when the provider's block cannot give a client),
// and how AWS calls are bounded and their errors worded.
type Env struct {
	// Kube is the Kubernetes API's dynamic client.
	Kube func() (dynamic.Interface, error)
	// S3 reads the job's checkpoints and savepoints.
	S3 func(ctx context.Context) (checkpoint.S3Reader, error)
	// Bound gives every AWS call made with the returned context a deadline
	// d from now; Words words an AWS error (a missed deadline names the
	// endpoint and the bound).
	Bound func(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc)
	Words func(ctx context.Context, err error) string
}
