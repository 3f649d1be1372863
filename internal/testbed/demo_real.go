package testbed

import (
	"context"
	"errors"
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
	// The admission webhook, as the chart installs it by default; it needs
	// a network namespace of its own (root), else the demo goes on
	// without it, as an operator installed without cert-manager does.
	wh, err := StartRealWebhook(ctx, root, env, RealOperatorOptions{Namespaces: []string{namespace}, Logf: logf})
	switch {
	case errors.Is(err, ErrNoNetns):
		logf("operator: no admission webhook (%v): specs the validator refuses are refused in status.error instead", err)
	case err != nil:
		return err
	default:
		defer wh.Stop()
		logf("operator: the admission webhook runs (log %s)", wh.Log)
	}
	logf("operator: the real Flink Kubernetes Operator 1.15.0 from %s runs (log %s); its pods run as real Flink 2.2.1", os.Getenv(OperatorDirEnv), op.Log)
	<-ctx.Done()
	return nil
}
