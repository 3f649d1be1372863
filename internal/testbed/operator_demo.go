package testbed

import (
	"context"
	"os"
	"time"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/awsclient"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed/opmodel"
)

// DemoOperator runs the model for make demo in namespace, with Flink's files
// written to the test bed's S3, until ctx ends.
func DemoOperator(ctx context.Context, env Env, namespace string, logf func(string, ...any)) error {
	kc, err := kube.New(kube.Config{ConfigPath: env.Kubeconfig})
	if err != nil {
		return err
	}
	ac, err := newEnvAWS(ctx, env)
	if err != nil {
		return err
	}
	op := &opmodel.Operator{Namespace: namespace, S3: ac.S3, Logf: logf}
	if os.Getenv("FLINKSTATE_DEMO_FLINK") != "model" {
		root, err := FindRoot()
		if err != nil {
			return err
		}
		dist, err := BuildFlink(ctx, root, logf)
		if err != nil {
			return err
		}
		dir, err := os.MkdirTemp("", "flinkstate-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		rf := &RealFlink{Dist: dist, Env: env, Dyn: kc.Dynamic, PodEnv: IRSAPodEnv(kc.Dynamic, env, dir), Logf: logf}
		defer rf.Close()
		op.Flink = rf
		if logf != nil {
			logf("operator: jobs run as real Flink 2.2.1 (FLINKSTATE_DEMO_FLINK=model for the model's placeholder files)")
		}
	}
	op.Run(ctx, kc.Dynamic, 200*time.Millisecond)
	return nil
}

// newEnvAWS builds AWS clients for the test bed from its env (credentials
// included, so the SDK never looks elsewhere).
func newEnvAWS(ctx context.Context, env Env) (*awsclient.Clients, error) {
	for _, kv := range env.Vars() {
		os.Setenv(kv[0], kv[1])
	}
	return awsclient.New(ctx, awsclient.Config{Region: env.AWSRegion, Endpoint: env.AWSEndpoint})
}
