package testbed

import (
	"context"
	"os"
	"path/filepath"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// DemoRealOperator plays the cluster's part for make demo when the
// operator's jars are given (FLINKSTATE_OPERATOR_DIR): the real Flink
// Kubernetes Operator 1.15.0 watching namespace, the node stand-in running
// its JobManager Deployments as real Flink 2.2.1, and kube-controller-
// manager's garbage collector, until ctx ends. Pods left from an earlier
// run are started again, as a restarted node's kubelet does: their jobs
// resume from Kubernetes HA, so make demo-destroy finds them running and
// the operator can take the final savepoint.
func DemoRealOperator(ctx context.Context, root string, env Env, namespace string, logf func(string, ...any)) error {
	kc, err := kube.New(kube.Config{ConfigPath: env.Kubeconfig})
	if err != nil {
		return err
	}
	dist, err := BuildFlink(ctx, root, logf)
	if err != nil {
		return err
	}
	if err := EnsureControllerManager(ctx, root, env, logf); err != nil {
		return err
	}
	hosts := filepath.Join(StateDir(root), "operator-hosts")
	node, err := StartNode(ctx, dist, env, kc.Dynamic, NodeOptions{Namespaces: []string{namespace}, HostsFile: hosts, Logf: logf})
	if err != nil {
		return err
	}
	defer node.Stop()
	op, err := StartRealOperator(ctx, root, env, RealOperatorOptions{Namespaces: []string{namespace}, Logf: logf, HostsFile: hosts})
	if err != nil {
		return err
	}
	defer op.Stop()
	logf("operator: the real Flink Kubernetes Operator 1.15.0 from %s runs (log %s); its pods run as real Flink 2.2.1", os.Getenv(OperatorDirEnv), op.Log)
	<-ctx.Done()
	return nil
}
