package testbed

import (
	"context"
	"path/filepath"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed/realop"
)

// The real-operator runner (package realop) as the test bed's tests and the
// provider's use it: started against this test bed's Env, its operator
// files and its PKI.

type (
	// RealOperatorOptions are realop.RealOperatorOptions.
	RealOperatorOptions = realop.RealOperatorOptions
	// RealOperator is a running operator JVM (realop.RealOperator).
	RealOperator = realop.RealOperator
	// RealWebhook is a running webhook JVM (realop.RealWebhook).
	RealWebhook = realop.RealWebhook
)

// OperatorDirEnv names the folder of the operator's jars (realop.OperatorDirEnv).
const OperatorDirEnv = realop.OperatorDirEnv

// ValidatingWebhookName is the chart's name of the validating webhook.
const ValidatingWebhookName = realop.ValidatingWebhookName

var (
	// ErrNoOperatorJars: OperatorDirEnv is not set (realop.ErrNoOperatorJars).
	ErrNoOperatorJars = realop.ErrNoOperatorJars
	// ErrNoNetns: a network namespace needs root (realop.ErrNoNetns).
	ErrNoNetns = realop.ErrNoNetns
)

// OperatorDir is the folder of the operator's jars (realop.OperatorDir).
func OperatorDir() (string, error) { return realop.OperatorDir() }

// StartRealOperator runs the real operator against the test bed
// (realop.StartRealOperator).
func StartRealOperator(ctx context.Context, root string, env Env, o RealOperatorOptions) (*RealOperator, error) {
	return realop.StartRealOperator(ctx, env.realopBed(root), o)
}

// StartRealWebhook starts and registers the operator's webhook
// (realop.StartRealWebhook).
func StartRealWebhook(ctx context.Context, root string, env Env, o RealOperatorOptions) (*RealWebhook, error) {
	return realop.StartRealWebhook(ctx, env.realopBed(root), o)
}

func (e Env) realopBed(root string) realop.Bed {
	return realop.Bed{KubeHost: e.KubeHost, Kubeconfig: e.Kubeconfig,
		HelmDir: filepath.Join(OperatorFilesDir(root), "helm"), IssueCert: issueCertFiles}
}
