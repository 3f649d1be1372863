package testbed

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed/flinkrun"
)

// The Flink runner and node stand-in (package flinkrun) as the test bed's
// tests and the provider's use them: started against this test bed's Env.

type (
	// FlinkDist is a built Flink distribution (flinkrun.FlinkDist).
	FlinkDist = flinkrun.FlinkDist
	// FlinkJob is what a Flink cluster runs (flinkrun.FlinkJob).
	FlinkJob = flinkrun.FlinkJob
	// FlinkCluster is a running Flink cluster (flinkrun.FlinkCluster).
	FlinkCluster = flinkrun.FlinkCluster
	// Node is a running node stand-in (flinkrun.Node).
	Node = flinkrun.Node
	// NodeOptions configure the node stand-in (flinkrun.NodeOptions).
	NodeOptions = flinkrun.NodeOptions
	// PodIdentityAgent is the EKS Pod Identity Agent stand-in (flinkrun.PodIdentityAgent).
	PodIdentityAgent = flinkrun.PodIdentityAgent
)

// TestJobClass is the entry class of the repository's test job.
const TestJobClass = flinkrun.TestJobClass

// The JobManager Deployments the operator creates (apps/v1).
var deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// BuildFlink builds Flink and the test job once into the cache (flinkrun.BuildFlink).
func BuildFlink(ctx context.Context, root string, logf func(string, ...any)) (FlinkDist, error) {
	return flinkrun.BuildFlink(ctx, root, logf)
}

// StartFlink runs job on a Flink cluster of this machine against the test
// bed (flinkrun.StartFlink).
func StartFlink(ctx context.Context, dist FlinkDist, env Env, job FlinkJob) (*FlinkCluster, error) {
	return flinkrun.StartFlink(ctx, dist, env.FlinkBed(), job)
}

// StartNode starts the node stand-in (flinkrun.StartNode).
func StartNode(ctx context.Context, dist FlinkDist, env Env, dyn dynamic.Interface, o NodeOptions) (*Node, error) {
	return flinkrun.StartNode(ctx, dist, env.FlinkBed(), dyn, o)
}

// IRSAEnv is the environment EKS gives a pod whose ServiceAccount has
// roleARN (flinkrun.IRSAEnv).
func IRSAEnv(dir string, env Env, roleARN string) ([]string, error) {
	return flinkrun.IRSAEnv(dir, env.FlinkBed(), roleARN)
}

// StartPodIdentityAgent serves roleARN's credentials as EKS's Pod Identity
// Agent would (flinkrun.StartPodIdentityAgent).
func StartPodIdentityAgent(ctx context.Context, env Env, roleARN string) (*PodIdentityAgent, error) {
	return flinkrun.StartPodIdentityAgent(ctx, env.FlinkBed(), roleARN)
}

// FlinkBed is what the Flink runner and the node stand-in need of the test
// bed (flinkrun.Bed).
func (e Env) FlinkBed() flinkrun.Bed {
	return flinkrun.Bed{Kubeconfig: e.Kubeconfig, AWSEndpoint: e.AWSEndpoint, AWSRegion: e.AWSRegion,
		STSAddress: e.STSAddress, AWSCAFile: e.AWSCAFile, KubeletCertFile: e.KubeletCertFile, KubeletKeyFile: e.KubeletKeyFile, Vars: e.Vars()}
}
