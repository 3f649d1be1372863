package realop

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed/proc"
)

// The real Flink Kubernetes Operator 1.15.0, run from the jars a user has in
// the operator's container image. No package registry serves them; a
// developer builds them by hand from the operator's release source, outside
// this repository, and names the folder in FLINKSTATE_OPERATOR_DIR. Without
// it nothing here runs and the real-operator tests skip saying why.

// OperatorDirEnv names a folder laid out as the operator image's working
// directory (/flink-kubernetes-operator in the image built by the
// operator's Dockerfile at release-1.15.0): the jars below, and log4j/ with
// the logging binding the image keeps under /opt/flink/log/log4j.
const OperatorDirEnv = "FLINKSTATE_OPERATOR_DIR"

// The jars docker-entrypoint.sh puts on the operator's classpath
// ("operator": standalone, operator; "webhook": standalone, operator,
// webhook), then $OPERATOR_LOG/log4j/*.
const (
	operatorStandaloneJar = "flink-kubernetes-standalone-1.15.0.jar"
	operatorJar           = "flink-kubernetes-operator-1.15.0-shaded.jar"
	operatorWebhookJar    = "flink-kubernetes-webhook-1.15.0-shaded.jar"
	operatorMainClass     = "org.apache.flink.kubernetes.operator.FlinkOperator"
)

// ErrNoOperatorJars: FLINKSTATE_OPERATOR_DIR is not set.
var ErrNoOperatorJars = errors.New(OperatorDirEnv + " is not set: the real Flink Kubernetes Operator 1.15.0 runs only from jars you bring " +
	"(not served by any package registry here; build them from the operator's release-1.15.0 source, outside this repository, " +
	"and name their folder in " + OperatorDirEnv + ", see TESTBED.md \"The real operator\")")

// OperatorDir is the folder of the operator's jars, checked: ErrNoOperatorJars
// when unset, an error naming what is missing otherwise.
func OperatorDir() (string, error) {
	dir := os.Getenv(OperatorDirEnv)
	if dir == "" {
		return "", ErrNoOperatorJars
	}
	var missing []string
	for _, f := range []string{operatorStandaloneJar, operatorJar, operatorWebhookJar} {
		if !proc.FileExists(filepath.Join(dir, f)) {
			missing = append(missing, f)
		}
	}
	if logs, _ := filepath.Glob(filepath.Join(dir, "log4j", "*.jar")); len(logs) == 0 {
		missing = append(missing, "log4j/*.jar")
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("%s=%s lacks %s (the operator image's /flink-kubernetes-operator jars and /opt/flink/log/log4j)", OperatorDirEnv, dir, strings.Join(missing, ", "))
	}
	return dir, nil
}

// RealOperatorOptions are what a test changes of the chart's defaults.
type RealOperatorOptions struct {
	// Namespaces the operator watches (the chart's watchNamespaces).
	Namespaces []string
	// Conf is appended to the chart's rendered flink-conf.yaml (the
	// chart's defaultConfiguration."flink-conf.yaml" override does the
	// same), e.g. kubernetes.operator.reconcile.interval.
	Conf map[string]string
	// Logf reports progress.
	Logf func(string, ...any)
	// HostsFile, when set, is the operator JVM's hosts file
	// (jdk.net.hosts.file, read by java.net.InetAddress in place of the
	// system resolver), with name caching off so that a name added later
	// resolves at once: the node stand-in (node.go) writes the Services'
	// names there, <name>-rest.<namespace> being where the operator calls
	// a JobManager.
	HostsFile string
}

// RealOperator is a running operator JVM.
type RealOperator struct {
	PID     int
	Log     string
	ConfDir string
}

// Stop ends the operator JVM (its process group).
func (r *RealOperator) Stop() {
	if r == nil || r.PID <= 0 {
		return
	}
	_ = syscall.Kill(-r.PID, syscall.SIGTERM)
	for i := 0; i < 50 && proc.Alive(r.PID); i++ {
		time.Sleep(100 * time.Millisecond)
	}
	_ = syscall.Kill(-r.PID, syscall.SIGKILL)
}

// operatorConf renders the operator's configuration as the chart's
// templates/controller/configmap.yaml does with the chart's values.yaml:
// conf/flink-conf.yaml (defaultConfiguration.append: true), then
// defaultConfiguration."flink-conf.yaml", then
// kubernetes.operator.watched.namespaces from watchNamespaces. The chart's
// operatorHealth adds a health probe server on port 8085 that binds every
// interface; here it is turned off instead (nothing probes it, and servers
// the test bed starts listen on loopback only). extra goes last.
func operatorConf(helmDir string, namespaces []string, extra map[string]string) (string, error) {
	base, err := os.ReadFile(filepath.Join(helmDir, "conf", "flink-conf.yaml"))
	if err != nil {
		return "", err
	}
	raw, err := os.ReadFile(filepath.Join(helmDir, "values.yaml"))
	if err != nil {
		return "", err
	}
	var values struct {
		DefaultConfiguration map[string]any `json:"defaultConfiguration"`
	}
	if err := yaml.Unmarshal(raw, &values); err != nil {
		return "", fmt.Errorf("%s: %w", filepath.Join(helmDir, "values.yaml"), err)
	}
	var b strings.Builder
	b.Write(base)
	b.WriteString("\n")
	if s, ok := values.DefaultConfiguration["flink-conf.yaml"].(string); ok {
		b.WriteString(s)
		b.WriteString("\n")
	}
	if len(namespaces) > 0 {
		fmt.Fprintf(&b, "kubernetes.operator.watched.namespaces: %s\n", strings.Join(namespaces, ","))
	}
	b.WriteString("kubernetes.operator.health.probe.enabled: false\n")
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, extra[k])
	}
	return b.String(), nil
}

// StartRealOperator runs the operator JVM against the test bed as the
// chart's controller container runs it: `docker-entrypoint.sh operator`'s
// classpath and main class, the chart's configuration as FLINK_CONF_DIR and
// the env of templates/controller/deployment.yaml, with
// KUBERNETES_SERVICE_HOST/PORT set as in a pod (the operator then calls a
// JobManager at <name>-rest.<namespace>:8081; without them, at localhost)
// and the test bed's kubeconfig. It returns once the operator has started
// its controllers (its log says so), or fails with the log's tail.
func StartRealOperator(ctx context.Context, env Bed, o RealOperatorOptions) (*RealOperator, error) {
	dir, err := OperatorDir()
	if err != nil {
		return nil, err
	}
	work, err := operatorWorkDir(env.HelmDir, "flinkstate-operator-", o)
	if err != nil {
		return nil, err
	}
	confDir, pluginsDir := filepath.Join(work, "conf"), filepath.Join(work, "plugins")
	u, err := url.Parse(env.KubeHost)
	if err != nil {
		return nil, fmt.Errorf("kube-apiserver address %q: %w", env.KubeHost, err)
	}
	ns := "flink-operator"
	if len(o.Namespaces) > 0 {
		ns = o.Namespaces[0]
	}
	java, err := javaCommand()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(work, "operator.log")
	args := []string{
		// The entrypoint's classpath, from the image's working directory.
		"-cp", strings.Join([]string{filepath.Join(dir, operatorStandaloneJar), filepath.Join(dir, operatorJar), filepath.Join(dir, "log4j", "*")}, ":"),
		"-Dlog4j.configurationFile=" + filepath.Join(confDir, "log4j-operator.properties"),
		operatorMainClass,
	}
	if o.HostsFile != "" {
		args = append([]string{"-Djdk.net.hosts.file=" + o.HostsFile, "-Dsun.net.inetaddr.ttl=0", "-Dsun.net.inetaddr.negative.ttl=0"}, args...)
	}
	procEnv := append(os.Environ(),
		"KUBECONFIG="+env.Kubeconfig,
		"KUBERNETES_SERVICE_HOST="+u.Hostname(), "KUBERNETES_SERVICE_PORT="+u.Port(),
		"OPERATOR_NAMESPACE="+ns, "OPERATOR_NAME=flink-kubernetes-operator", "POD_NAME=flink-kubernetes-operator-0",
		"HOST_IP=127.0.0.1", "POD_IP=127.0.0.1",
		"FLINK_CONF_DIR="+confDir, "FLINK_PLUGINS_DIR="+pluginsDir, "LOGGING_FRAMEWORK=log4j2",
	)
	pid, err := proc.Spawn(java, args, procEnv, logPath)
	if err != nil {
		return nil, err
	}
	op := &RealOperator{PID: pid, Log: logPath, ConfDir: confDir}
	if o.Logf != nil {
		o.Logf("real operator 1.15.0: pid %d, log %s, watching %v", pid, logPath, o.Namespaces)
	}
	// The Java Operator SDK logs "'<name>' controller started" for each
	// controller once its informers have synced (io.javaoperatorsdk
	// .operator.processing.Controller.start); the two the test bed uses
	// must both run.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		b, _ := os.ReadFile(logPath)
		switch {
		case strings.Contains(string(b), "'flinkdeploymentcontroller' controller started") &&
			strings.Contains(string(b), "'flinkstatesnapshotcontroller' controller started"):
			return op, nil
		case !proc.Alive(pid):
			return nil, fmt.Errorf("the real operator exited at start (log %s):\n%s", logPath, tail(string(b), 40))
		case time.Now().After(deadline) || ctx.Err() != nil:
			op.Stop()
			return nil, fmt.Errorf("the real operator did not start in 3 minutes (log %s):\n%s", logPath, tail(string(b), 40))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// javaCommand is the java of JAVA_HOME, or on PATH.
func javaCommand() (string, error) {
	if h := os.Getenv("JAVA_HOME"); h != "" && proc.FileExists(filepath.Join(h, "bin", "java")) {
		return filepath.Join(h, "bin", "java"), nil
	}
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if p := filepath.Join(d, "java"); proc.FileExists(p) {
			return p, nil
		}
	}
	return "", errors.New("no java on PATH (the operator runs on Java 17)")
}

func tail(s string, n int) string { return proc.Tail(s, n) }

// operatorWorkDir makes a working folder for one of the chart's containers
// (the operator's or the webhook's): conf/ as the chart's ConfigMap
// flink-operator-config mounts it at /opt/flink/conf (the configuration
// rendered by operatorConf under both names, and the chart's log4j files)
// and an empty plugins/.
func operatorWorkDir(helm, prefix string, o RealOperatorOptions) (string, error) {
	conf, err := operatorConf(helm, o.Namespaces, o.Conf)
	if err != nil {
		return "", fmt.Errorf("rendering the operator's configuration from %s: %w", helm, err)
	}
	work, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", err
	}
	confDir := filepath.Join(work, "conf")
	for _, d := range []string{confDir, filepath.Join(work, "plugins")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", err
		}
	}
	// The chart's ConfigMap has the configuration under both names.
	for _, f := range []string{"flink-conf.yaml", "config.yaml"} {
		if err := os.WriteFile(filepath.Join(confDir, f), []byte(conf), 0o644); err != nil {
			return "", err
		}
	}
	for _, f := range []string{"log4j-operator.properties", "log4j-console.properties"} {
		b, err := os.ReadFile(filepath.Join(helm, "conf", f))
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(confDir, f), b, 0o644); err != nil {
			return "", err
		}
	}
	return work, nil
}
