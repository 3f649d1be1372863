package testbed

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed/proc"
)

// The real kube-controller-manager (tools/kcm: the same Kubernetes release
// as the test bed's kube-apiserver), run for its garbage collector: a
// Deployment deleted with propagationPolicy Foreground, as the operator
// deletes a JobManager Deployment (NativeFlinkService.deleteClusterInternal,
// kubernetes.operator.resource.deletion.propagation default Foreground),
// keeps the foregroundDeletion finalizer until the garbage collector has
// deleted its dependents and removed it; without one the operator waits
// out its cluster shutdown timeout. The namespace controller runs too, so
// a deleted namespace goes away as on a cluster.

// Its pinned module, built on demand: by the first real-operator test bed
// (make test-operator, make demo with the operator's jars), never by CI,
// which runs the model. Declared here, beside its only user, so that the
// tool list in tools.go (a key of CI's tool cache) stays as it was.
func init() {
	toolModules = append(toolModules, toolModule{
		dir:      "kcm",
		packages: map[string]string{"kube-controller-manager": "k8s.io/kubernetes/cmd/kube-controller-manager"},
		onDemand: true,
	})
}

// controllerManagerControllers are the only controllers it runs
// (kube-controller-manager --controllers; names from
// cmd/kube-controller-manager/names). The deployment and replica set
// controllers are not among them: the node stand-in (node.go) runs the
// JobManager Deployment's pod itself.
var controllerManagerControllers = []string{"garbage-collector-controller", "namespace-controller"}

// EnsureControllerManager starts the test bed's kube-controller-manager
// unless one runs (built once into the cache on first use). It runs until
// the test bed stops (make testbed-down stops it with the rest).
func EnsureControllerManager(ctx context.Context, root string, env Env, logf func(string, ...any)) error {
	bin, err := Tool(ctx, root, "kube-controller-manager")
	if err != nil {
		return err
	}
	state := StateDir(root)
	unlock, err := lockFile(filepath.Join(state, "lock"))
	if err != nil {
		return err
	}
	defer unlock()
	pidFile := filepath.Join(state, "kcm.pid")
	if b, err := os.ReadFile(pidFile); err == nil {
		if pid, _ := strconv.Atoi(strings.TrimSpace(string(b))); alive(pid) {
			return nil
		}
	}
	logPath := filepath.Join(state, "logs", "kube-controller-manager.log")
	pid, err := spawn(bin, []string{
		"--kubeconfig=" + env.Kubeconfig,
		"--controllers=" + strings.Join(controllerManagerControllers, ","),
		// The test bed's admin credentials, not a token per controller
		// (which would need the service account token controller).
		"--use-service-account-credentials=false",
		"--leader-elect=false",
		// No serving port: nothing probes it, and the test bed's servers
		// listen on loopback only.
		"--secure-port=0",
		"--v=1",
	}, nil, logPath)
	if err != nil {
		return err
	}
	if err := writePIDs(state, append(readPIDs(state), pid)); err != nil {
		return err
	}
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		return err
	}
	// The garbage collector logs this once its informers have synced, or
	// were given up on after its initial sync timeout
	// (pkg/controller/garbagecollector, GarbageCollector.Run).
	deadline := time.Now().Add(2 * time.Minute)
	for {
		b, _ := os.ReadFile(logPath)
		switch {
		case strings.Contains(string(b), "Proceeding to collect garbage"):
			if logf != nil {
				logf("kube-controller-manager: pid %d, log %s (%s)", pid, logPath, strings.Join(controllerManagerControllers, ", "))
			}
			return nil
		case !alive(pid):
			return fmt.Errorf("kube-controller-manager exited at start (log %s):\n%s", logPath, tail(string(b), 30))
		case time.Now().After(deadline) || ctx.Err() != nil:
			return fmt.Errorf("kube-controller-manager's garbage collector did not sync in 2 minutes (log %s):\n%s", logPath, tail(string(b), 30))
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// tail is the last n lines of a log (proc.Tail).
func tail(s string, n int) string { return proc.Tail(s, n) }
