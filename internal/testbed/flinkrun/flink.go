package flinkrun

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed/awsfront"
)

// Real Flink for the test bed: a Flink 2.2.1 distribution assembled by Maven
// from the release's artifacts (tools/flink/pom.xml), the repository's own
// stateful job (tools/flink/src), and a runner that starts a local
// application cluster (one JobManager JVM, one TaskManager JVM) with the
// flinkConfiguration a FlinkDeployment carries plus only the rewrites a local
// run needs (localRewrites: the one place they are made).

// FlinkDist is a built Flink distribution and the test job.
type FlinkDist struct {
	Home   string // lib/ and opt/ as in the official image's /opt/flink
	JobJar string // the test job (org.flinkstate.testjob.CountingJob)
	Java   string // the java command
}

// TestJobClass is the entry class of the repository's test job.
const TestJobClass = "org.flinkstate.testjob.CountingJob"

// BuildFlink builds (once, cached by a hash of tools/flink) the Flink
// distribution and the test job with Maven. The Maven repository is kept in
// the cache too (<cache>/m2), so a warm run downloads nothing.
func BuildFlink(ctx context.Context, root string, logf func(string, ...any)) (FlinkDist, error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return FlinkDist{}, errors.New("testbed: real Flink needs java (17) on PATH")
	}
	src := filepath.Join(root, "tools", "flink")
	key, err := treeKey(src)
	if err != nil {
		return FlinkDist{}, err
	}
	out := filepath.Join(cacheDir(root), "flink", "flink-"+key)
	dist := FlinkDist{Home: filepath.Join(out, "dist"), JobJar: filepath.Join(out, "flinkstate-testjob.jar"), Java: java}
	if fileExists(dist.JobJar) {
		return dist, nil
	}
	// Test packages run in parallel and may all ask for it: one builds.
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return FlinkDist{}, err
	}
	unlock, err := lockFile(out + ".lock")
	if err != nil {
		return FlinkDist{}, err
	}
	defer unlock()
	if fileExists(dist.JobJar) {
		return dist, nil
	}
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		return FlinkDist{}, errors.New("testbed: building real Flink needs Maven (mvn) on PATH")
	}
	if logf != nil {
		logf("building Flink 2.2.1 and the test job from tools/flink into %s (Maven; once)", out)
	}
	tmp := fmt.Sprintf("%s.tmp%d", out, os.Getpid())
	_ = os.RemoveAll(tmp)
	defer os.RemoveAll(tmp)
	cmd := exec.CommandContext(ctx, mvn, "-B", "-q", "package",
		"-Dmaven.repo.local="+filepath.Join(cacheDir(root), "m2"),
		"-Dflinkstate.build="+filepath.Join(tmp, "build"),
		"-Dflinkstate.dist="+filepath.Join(tmp, "dist"))
	cmd.Dir = src
	if b, err := cmd.CombinedOutput(); err != nil {
		return FlinkDist{}, fmt.Errorf("building tools/flink with Maven: %w\n%s", err, b)
	}
	if err := os.Rename(filepath.Join(tmp, "build", "flinkstate-testjob.jar"), filepath.Join(tmp, "flinkstate-testjob.jar")); err != nil {
		return FlinkDist{}, err
	}
	_ = os.RemoveAll(filepath.Join(tmp, "build"))
	_ = os.RemoveAll(out)
	if err := os.Rename(tmp, out); err != nil {
		return FlinkDist{}, err
	}
	return dist, nil
}

// treeKey hashes every file under dir (names and contents), for the cache key.
func treeKey(dir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "target" {
				return filepath.SkipDir
			}
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%s\x00%d\x00", rel, len(b))
		h.Write(b)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))[:12], err
}

// FlinkJob is what a FlinkDeployment asks of Flink, as the runner takes it.
type FlinkJob struct {
	// Configuration is the deployment's flinkConfiguration, as written.
	Configuration map[string]string
	// PluginJar is the S3 plugin the deployment enables, as the official
	// image's ENABLE_BUILT_IN_PLUGINS names it (flink-s3-fs-hadoop-2.2.1.jar).
	PluginJar string
	// Parallelism is spec.job.parallelism.
	Parallelism int
	// RestorePath is the snapshot the job starts from (the operator sets
	// execution.state-recovery.path from initialSavepointPath); "" for none.
	RestorePath string
	// Args are the job's arguments (spec.job.args).
	Args []string
	// Env is the containers' environment: the credentials EKS injects.
	Env []string
	// Namespace and Name are the FlinkDeployment's: the operator makes
	// them kubernetes.namespace and kubernetes.cluster-id, which Kubernetes
	// HA names its ConfigMaps after.
	Namespace, Name string
	// Region is the AWS region the job runs in ("" for the test bed's
	// own): a job in region B (SecondRegion) reaches S3 at that region's
	// endpoint, which signs for it (SDK v1 AwsHostNameUtils.parseRegion
	// reads the region from s3.<region>.amazonaws.com), and has EKS's
	// AWS_REGION / AWS_DEFAULT_REGION of that region, as a pod of a
	// cluster there has them (amazon-eks-pod-identity-webhook
	// pkg/handler/handler.go), for STS's regional endpoint.
	Region string
}

// The distribution's flink-kubernetes (Kubernetes HA) is 2.2.0 for the
// same reason (tools/flink/pom.xml, flink.kubernetes.version).

// servedPlugins maps a plugin jar the official image has to the served
// artifact the test bed installs in its place, where the release's own is
// not served here: flink-s3-fs-hadoop 2.2.1 -> 2.2.0, whose content is the
// same (see tools/flink/pom.xml, flink.s3.version). The plugin directory
// keeps the name the deployment asked for.
var servedPlugins = map[string]string{"flink-s3-fs-hadoop-2.2.1.jar": "flink-s3-fs-hadoop-2.2.0.jar"}

// FlinkCluster is a running local application cluster.
type FlinkCluster struct {
	Dir     string
	RESTURL string
	// Configuration is what Flink was started with: the job's
	// configuration after localRewrites.
	Configuration map[string]string
	pids          []int
}

// operatorDefaults is what the operator adds beneath a deployment's
// flinkConfiguration in the configuration it renders for Flink (the
// flink-config-<name> ConfigMap replaces the image's conf/): its Helm
// chart's default configuration (helm/flink-kubernetes-operator/conf/flink-conf.yaml,
// release-1.15.0) sets
// kubernetes.operator.default-configuration.flink-version.v1_19+.env.java.default-opts.all
// to the JVM options Java 17 needs, the same list flink-dist's own
// config.yaml has under env.java.opts.all. (A real operator renders the
// rest of that configuration itself.)
var operatorDefaults = map[string]string{
	"env.java.default-opts.all": "--add-exports=java.base/sun.net.util=ALL-UNNAMED --add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED " +
		"--add-exports=jdk.compiler/com.sun.tools.javac.api=ALL-UNNAMED --add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED " +
		"--add-exports=jdk.compiler/com.sun.tools.javac.parser=ALL-UNNAMED --add-exports=jdk.compiler/com.sun.tools.javac.tree=ALL-UNNAMED " +
		"--add-exports=jdk.compiler/com.sun.tools.javac.util=ALL-UNNAMED --add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED " +
		"--add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.net=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED " +
		"--add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.lang.reflect=ALL-UNNAMED " +
		"--add-opens=java.base/java.text=ALL-UNNAMED --add-opens=java.base/java.time=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED " +
		"--add-opens=java.base/java.util.concurrent=ALL-UNNAMED --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED " +
		"--add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED",
}

// localRewrites are the only changes the runner makes to a deployment's
// configuration, each because the process runs on this machine instead of
// in a pod: where S3 is (the emulator's endpoint, path-style as it serves
// it), local addresses and ports instead of the pod's, memory sized for a
// 2-core test machine instead of the pod's resources (which the operator
// derives from spec.*.resource, not from flinkConfiguration), the pod's
// emptyDir and tmp mounts as local folders, and the job's parallelism and
// restore path (which the operator writes from spec.job). Nothing about
// state, checkpoints or credentials is rewritten.
func localRewrites(conf map[string]string, tb Bed, dir string, ports []int, job FlinkJob) map[string]string {
	out := machineRewrites(conf, tb, dir, job.Region)
	const host = "127.0.0.1"
	set := map[string]string{
		"jobmanager.rpc.address":          host,
		"jobmanager.bind-host":            host,
		"rest.address":                    host,
		"rest.bind-address":               host,
		"taskmanager.host":                host,
		"taskmanager.bind-host":           host,
		"jobmanager.memory.process.size":  "1024m",
		"taskmanager.memory.process.size": "1280m",
		"parallelism.default":             strconv.Itoa(max(job.Parallelism, 1)),
		// Ports of their own on the shared 127.0.0.1 (a pod's address has
		// the configured ones free: the node, node_native.go).
		"jobmanager.rpc.port": strconv.Itoa(ports[0]),
		"rest.port":           strconv.Itoa(ports[1]),
		"blob.server.port":    strconv.Itoa(ports[2]),
	}
	for k, v := range set {
		out[k] = v
	}
	if job.Name != "" {
		// What the operator sets for every deployment (FlinkConfigBuilder:
		// kubernetes.cluster-id = metadata.name, kubernetes.namespace =
		// metadata.namespace); Kubernetes HA keeps its ConfigMaps and leader
		// election in that namespace of the real API server. A pod reaches
		// the API server with its service account; the local JVMs with the
		// test bed's kubeconfig (kubernetes.config.file).
		out["kubernetes.cluster-id"] = job.Name
		out["kubernetes.namespace"] = job.Namespace
		out["kubernetes.config.file"] = tb.Kubeconfig
	}
	if job.RestorePath != "" {
		// StateRecoveryOptions.SAVEPOINT_PATH. The real operator 1.15.0
		// hands Flink the restore path under its Flink 1.20 client's key,
		// execution.savepoint.path (ApplicationReconciler.deploy), which
		// Flink 2.2 reads as this option's deprecated key (the node runs
		// what the operator rendered: TestAccRealOperator_restoreFrom*
		// check that key); the runner writes the 2.2 name.
		out["execution.state-recovery.path"] = job.RestorePath
	}
	return out
}

// machineRewrites are the rewrites every Flink process of the test bed
// gets (the runner's, localRewrites, and the node's pods', nodeRewrites):
// the deployment's configuration over the operator's defaults, where S3 is
// (the emulator, path-style as it serves it; region is the job's, "" for
// the test bed's own), and the pod's tmp and emptyDir mounts as folders
// in dir.
func machineRewrites(conf map[string]string, tb Bed, dir, region string) map[string]string {
	out := map[string]string{}
	for k, v := range operatorDefaults {
		out[k] = v
	}
	for k, v := range conf {
		out[k] = v
	}
	// Flink's S3 file systems mirror s3.* to fs.s3a.* (flink-s3-fs-base
	// S3FileSystemFactory / HadoopConfigLoader: FLINK_CONFIG_PREFIXES "s3.", "s3a.", "fs.s3a.").
	// (the http:// scheme is kept: DefaultS3ClientFactory.createEndpointConfiguration).
	out["s3.endpoint"] = s3Endpoint(tb, region)
	out["s3.path.style.access"] = "true"
	out["io.tmp.dirs"] = filepath.Join(dir, "tmp")
	// The pod's emptyDir for RocksDB/ForSt's working files.
	for _, k := range []string{"state.backend.rocksdb.localdir", "state.backend.forst.local-dir"} {
		if _, ok := out[k]; ok {
			out[k] = filepath.Join(dir, "localstate")
		}
	}
	return out
}

// testJVMOpt is added to the test bed's Flink JVMs (see launch).
const testJVMOpt = "-XX:TieredStopAtLevel=1"

// restPort is the port Flink's REST server listens on: rest.port, 8081 by
// default (Flink 2.2 RestOptions.PORT), which is also the port the
// operator calls (AbstractFlinkService.getClusterClient: RestOptions.PORT of
// the deployment's configuration).
func restPort(conf map[string]string) int {
	if p, err := strconv.Atoi(strings.TrimSpace(conf["rest.port"])); err == nil && p > 0 {
		return p
	}
	return 8081
}

// s3Endpoint is where Flink's S3 file system reaches S3: the test bed's
// TLS listener under S3's regional name when there is one (awsHostNames),
// else the emulator's plain-HTTP front. region is the job's ("" for the
// test bed's own).
func s3Endpoint(tb Bed, region string) string {
	if region == "" {
		region = tb.AWSRegion
	}
	if tb.STSAddress != "" {
		return "https://s3." + region + ".amazonaws.com"
	}
	return tb.AWSEndpoint
}

// StartFlink starts a local application cluster running the test job with
// the job's configuration, and waits until its REST API answers.
func StartFlink(ctx context.Context, dist FlinkDist, tb Bed, job FlinkJob) (*FlinkCluster, error) {
	if ha := job.Configuration["high-availability.type"]; ha != "" && !strings.EqualFold(ha, "none") && (job.Namespace == "" || job.Name == "") {
		return nil, fmt.Errorf("testbed: Kubernetes HA (high-availability.type = %s) needs the deployment's namespace and name", ha)
	}
	dir, err := os.MkdirTemp("", "flinkstate-flink-")
	if err != nil {
		return nil, err
	}
	c, err := startFlink(ctx, dist, tb, job, dir)
	if err != nil {
		// startFlink stopped what it started; its error carries the logs' tail.
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return c, nil
}

// startFlink starts the cluster in dir; on an error nothing it started runs.
func startFlink(ctx context.Context, dist FlinkDist, tb Bed, job FlinkJob, dir string) (*FlinkCluster, error) {
	if err := mkdirs(dir, "conf", "tmp", "localstate", "log", "plugins"); err != nil {
		return nil, err
	}
	if err := installPlugin(dist, dir, job.PluginJar); err != nil {
		return nil, err
	}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	c := &FlinkCluster{Dir: dir}
	c.Configuration = localRewrites(job.Configuration, tb, dir, ports, job)
	c.RESTURL = fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	if err := writeFlinkConf(filepath.Join(dir, "conf"), c.Configuration, nil); err != nil {
		return nil, err
	}
	env := append([]string{
		"FLINK_CONF_DIR=" + filepath.Join(dir, "conf"),
		"FLINK_PLUGINS_DIR=" + filepath.Join(dir, "plugins"),
		"FLINK_HOME=" + dist.Home,
	}, job.Env...)
	if job.Region != "" {
		// Later entries win (os/exec dedupEnv keeps the last).
		env = append(env, "AWS_REGION="+job.Region, "AWS_DEFAULT_REGION="+job.Region)
	}
	jvmOpts, err := awsNameOverrides(ctx, dist, tb, dir)
	if err != nil {
		return nil, err
	}
	confDir := filepath.Join(dir, "conf")
	// As bin/jobmanager.sh and bin/taskmanager.sh start them (config.sh,
	// flink-daemon.sh): memory JVM arguments and dynamic properties from
	// BashJavaUtils, the JVM options of env.java.default-opts.all +
	// env.java.opts.all + the process's own, then the entry class.
	launch := func(role, main string, args ...string) ([]string, error) {
		cmd := "GET_JM_RESOURCE_PARAMS"
		if role == "taskmanager" {
			cmd = "GET_TM_RESOURCE_PARAMS"
		}
		jvmArgs, dynamic, err := bashJavaUtils(ctx, dist, confDir, cmd)
		if err != nil {
			return nil, err
		}
		return flinkJavaArgs(dist, c.Configuration, confDir, role, jvmArgs, jvmOpts, main, append(append([]string{"--configDir", confDir}, dynamic...), args...)...), nil
	}
	jmArgs, err := launch("jobmanager", "org.apache.flink.container.entrypoint.StandaloneApplicationClusterEntryPoint",
		append([]string{"--job-classname", TestJobClass, "--jars", "file://" + dist.JobJar}, job.Args...)...)
	if err != nil {
		return nil, err
	}
	tmArgs, err := launch("taskmanager", "org.apache.flink.runtime.taskexecutor.TaskManagerRunner")
	if err != nil {
		return nil, err
	}
	pid, err := spawnEnv(dist.Java, jmArgs, env, filepath.Join(dir, "log", "jobmanager.log"))
	if err != nil {
		return nil, err
	}
	c.pids = append(c.pids, pid)
	pid, err = spawnEnv(dist.Java, tmArgs, env, filepath.Join(dir, "log", "taskmanager.log"))
	if err != nil {
		c.Stop()
		return nil, err
	}
	c.pids = append(c.pids, pid)
	if err := c.waitREST(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// ErrJobManagerExited is a JobManager whose process ended before its REST
// API answered: a container that exited (Flink's ClusterEntrypoint
// .runClusterEntrypoint exits with STARTUP_FAILURE_RETURN_CODE when the
// cluster's services cannot start, e.g. its Kubernetes HA services when the
// API server does not answer). The kubelet restarts such a container when
// its pod's restartPolicy is Always (the JobManager Deployment's pods).
var ErrJobManagerExited = errors.New("the JobManager process exited before its REST API answered")

// waitREST waits until the cluster's REST API answers, or its JobManager
// process (the first of c.pids) has exited; if it does not answer, the
// cluster is stopped, and the error is Flink's refusal of its
// configuration when the logs show one, else ErrJobManagerExited (with
// the JobManager log's last exception and its causes) or the REST API's
// error, with the logs' tail.
func (c *FlinkCluster) waitREST(ctx context.Context) error {
	jm := 0
	if len(c.pids) > 0 {
		jm = c.pids[0]
	}
	deadline := time.Now().Add(120 * time.Second)
	for {
		// One try (a timeout of 0 asks once).
		err := waitHTTP(ctx, c.RESTURL+"/config", "", 0)
		if err == nil {
			return nil
		}
		exited := jm != 0 && !alive(jm)
		if exited || time.Now().After(deadline) || ctx.Err() != nil {
			c.Stop()
			if refused := c.ConfigurationRefusal(); refused != nil {
				return refused
			}
			if exited {
				return fmt.Errorf("testbed: %w; jobmanager.log's last error: %s\n%s", ErrJobManagerExited, c.lastTrace("jobmanager.log"), c.LogTail(40))
			}
			return fmt.Errorf("testbed: Flink's REST API did not answer: %w\n%s", err, c.LogTail(40))
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// lastTrace is the last Java stack trace of one of the cluster's logs as
// one line: the exception's own line, then each "Caused by:" (outermost to
// innermost), without the frames; its last line when it has none.
func (c *FlinkCluster) lastTrace(log string) string {
	lines := c.LogLines(log)
	inTrace := func(l string) bool {
		return strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "Caused by:") || strings.HasPrefix(l, "Suppressed:")
	}
	last := len(lines) - 1
	for last >= 0 && !inTrace(lines[last]) {
		last--
	}
	if last < 0 {
		if len(lines) == 0 {
			return "empty"
		}
		return lines[len(lines)-1]
	}
	first := last
	for first > 0 && inTrace(lines[first-1]) {
		first--
	}
	var out []string
	if first > 0 {
		out = append(out, lines[first-1])
	}
	for _, l := range lines[first : last+1] {
		if strings.HasPrefix(l, "Caused by:") {
			out = append(out, l)
		}
	}
	return strings.Join(out, " | ")
}

// writeFlinkConf writes the configuration as config.yaml (Flink 2.x reads
// only that file: GlobalConfiguration.FLINK_CONF_FILENAME), with the
// program arguments (ApplicationConfiguration.APPLICATION_ARGS, a list) as
// the list the operator wrote, and the console logging configuration.
func writeFlinkConf(confDir string, conf map[string]string, args []string) error {
	m := map[string]any{}
	for k, v := range conf {
		m[k] = v
	}
	if len(args) > 0 {
		m["$internal.application.program-args"] = args
	}
	y, err := yaml.Marshal(m)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(confDir, "config.yaml"), y, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(confDir, "log4j.properties"), []byte(log4jConsole), 0o644)
}

// classPath is the distribution's lib/*, the class path Flink's scripts
// give every process (bin/config.sh constructFlinkClassPath).
func (d FlinkDist) classPath() string {
	return filepath.Join(d.Home, "lib") + string(filepath.Separator) + "*"
}

// mkdirs makes the folders subs in dir.
func mkdirs(dir string, subs ...string) error {
	for _, d := range subs {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// installPlugin does what ENABLE_BUILT_IN_PLUGINS asks of the official
// image's docker-entrypoint.sh: /opt/flink/opt/<jar> is copied to
// /opt/flink/plugins/<jar without .jar>/ (here dir/plugins).
func installPlugin(dist FlinkDist, dir, pluginJar string) error {
	if pluginJar == "" {
		return nil
	}
	jar := pluginJar
	if served, ok := servedPlugins[jar]; ok {
		jar = served
	}
	src := filepath.Join(dist.Home, "opt", jar)
	if !fileExists(src) {
		have, _ := filepath.Glob(filepath.Join(dist.Home, "opt", "*.jar"))
		return fmt.Errorf("testbed: the S3 plugin %s the deployment enables is not in the Flink distribution (it has %v)", pluginJar, have)
	}
	pdir := filepath.Join(dir, "plugins", strings.TrimSuffix(pluginJar, ".jar"))
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		return err
	}
	return os.Symlink(src, filepath.Join(pdir, pluginJar))
}

// flinkJavaArgs is a Flink JVM's command line as bin/config.sh and
// flink-console.sh / flink-daemon.sh build it: the memory JVM arguments,
// the JVM options of env.java.default-opts.all + env.java.opts.all +
// env.java.opts.<role>, the test bed's own (extra, then testJVMOpt), the
// logging configuration, the class path, the entry class and its
// arguments.
func flinkJavaArgs(dist FlinkDist, conf map[string]string, confDir, role string, memArgs, extra []string, main string, args ...string) []string {
	out := append([]string{}, memArgs...)
	out = append(out, strings.Fields(conf["env.java.default-opts.all"])...)
	out = append(out, strings.Fields(conf["env.java.opts.all"])...)
	out = append(out, strings.Fields(conf["env.java.opts."+role])...)
	out = append(out, extra...)
	// The test bed's one JVM option of its own: only the C1 compiler
	// (HotSpot's TieredStopAtLevel=1). The JVMs here live a minute or
	// two on 2 shared cores, where C2's compiler threads cost more CPU
	// than they save; it changes no behaviour of Flink's.
	out = append(out, testJVMOpt)
	out = append(out, "-Dlog4j.configurationFile="+filepath.Join(confDir, "log4j.properties"), "-cp", dist.classPath(), main)
	return append(out, args...)
}

// bashJavaUtils runs Flink's BashJavaUtils (flink-runtime
// org.apache.flink.runtime.util.bash.BashJavaUtils) as bin/config.sh does
// (runBashJavaUtilsCmd): of its output, the lines after the
// BASH_JAVA_UTILS_EXEC_RESULT: prefix are the JVM memory arguments and the
// dynamic properties that fix the derived memory configuration.
func bashJavaUtils(ctx context.Context, dist FlinkDist, confDir, command string) (jvmArgs, dynamic []string, err error) {
	out, err := exec.CommandContext(ctx, dist.Java, "-Xmx256m", testJVMOpt, "-cp", dist.classPath(), "org.apache.flink.runtime.util.bash.BashJavaUtils",
		command, "--configDir", confDir).CombinedOutput()
	if err != nil {
		return nil, nil, fmt.Errorf("BashJavaUtils %s: %w\n%s", command, err, out)
	}
	var results []string
	for _, l := range strings.Split(string(out), "\n") {
		if r, ok := strings.CutPrefix(l, "BASH_JAVA_UTILS_EXEC_RESULT:"); ok {
			results = append(results, r)
		}
	}
	if len(results) < 2 {
		return nil, nil, fmt.Errorf("BashJavaUtils %s printed no result:\n%s", command, out)
	}
	return strings.Fields(results[len(results)-2]), strings.Fields(results[len(results)-1]), nil
}

const log4jConsole = `rootLogger.level = INFO
rootLogger.appenderRef.console.ref = ConsoleAppender
appender.console.name = ConsoleAppender
appender.console.type = CONSOLE
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss,SSS} %-5p %-60c %x - %m%n
logger.akka.name = org.apache.pekko
logger.akka.level = WARN
logger.kafka.name = org.apache.hadoop
logger.kafka.level = WARN
`

// spawnEnv starts a process with exactly the test bed's environment plus env
// (not the calling process's AWS variables: credentials reach Flink only as
// EKS delivers them).
func spawnEnv(bin string, args, env []string, logPath string) (int, error) {
	base := []string{}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "AWS_") || strings.HasPrefix(kv, "KUBE") {
			continue
		}
		base = append(base, kv)
	}
	return spawnWithEnv(bin, args, append(base, env...), logPath)
}

// Stop kills the cluster's processes (as a pod's deletion would) and keeps
// its folder for the logs.
func (c *FlinkCluster) Stop() {
	stopPIDs(c.pids)
	c.pids = nil
}

// Remove stops the cluster and deletes its local folder.
func (c *FlinkCluster) Remove() {
	c.Stop()
	_ = os.RemoveAll(c.Dir)
}

// LogTail is the last n lines of both processes' logs, for failure messages.
func (c *FlinkCluster) LogTail(n int) string {
	var b strings.Builder
	for _, f := range append([]string{"jobmanager.log"}, c.taskManagerLogs()...) {
		lines := readLines(filepath.Join(c.Dir, "log", f))
		if len(lines) > n {
			lines = lines[len(lines)-n:]
		}
		fmt.Fprintf(&b, "--- %s\n%s\n", f, strings.Join(lines, "\n"))
	}
	return b.String()
}

func readLines(p string) []string {
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		out = append(out, s.Text())
	}
	return out
}

// restJSON calls Flink's REST API (flink-runtime rest handlers; paths as in
// the REST API reference of Flink 2.2).
func (c *FlinkCluster) restJSON(ctx context.Context, method, path string, body any, out any) error {
	var rd *strings.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = strings.NewReader(string(b))
	} else {
		rd = strings.NewReader("")
	}
	req, err := http.NewRequestWithContext(ctx, method, c.RESTURL+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		var e struct{ Errors []string }
		_ = json.NewDecoder(resp.Body).Decode(&e)
		return fmt.Errorf("%s %s: %s %v", method, path, resp.Status, e.Errors)
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// RunningJob waits until the cluster's job is RUNNING and returns its id.
// A job that fails or a cluster that dies ends the wait with the logs.
func (c *FlinkCluster) RunningJob(ctx context.Context, timeout time.Duration) (string, error) {
	last, id := "", ""
	done, err := poll(ctx, timeout, func() (bool, error) {
		var ov struct {
			Jobs []struct {
				JID   string `json:"jid"`
				State string `json:"state"`
			} `json:"jobs"`
		}
		if err := c.restJSON(ctx, http.MethodGet, "/jobs/overview", nil, &ov); err != nil || len(ov.Jobs) == 0 {
			// A configuration value Flink cannot read ends the wait at
			// once, naming the key; otherwise an error means the REST API
			// is not up yet: poll again.
			if refused := c.ConfigurationRefusal(); refused != nil {
				return false, refused
			}
			return false, nil //nolint:nilerr // see above
		}
		j := ov.Jobs[0]
		last = j.State
		switch j.State {
		case "RUNNING":
			id = j.JID
			return true, nil
		case "FAILED", "CANCELED", "FINISHED":
			if refused := c.ConfigurationRefusal(); refused != nil {
				return false, fmt.Errorf("the Flink job is %s: %w", j.State, refused)
			}
			return false, fmt.Errorf("testbed: the Flink job is %s\n%s", j.State, c.LogTail(60))
		}
		return false, nil
	})
	if err != nil || done {
		return id, err
	}
	return "", fmt.Errorf("testbed: the Flink job was not RUNNING within %s (last state %q)\n%s", timeout, last, c.LogTail(60))
}

// CompletedCheckpoints is how many checkpoints the job completed (REST
// /jobs/:jobid/checkpoints, counts.completed) and the latest's external path.
func (c *FlinkCluster) CompletedCheckpoints(ctx context.Context, jobID string) (int, string, error) {
	var cp struct {
		Counts struct {
			Completed int `json:"completed"`
		} `json:"counts"`
		Latest struct {
			Completed *struct {
				ExternalPath string `json:"external_path"`
			} `json:"completed"`
		} `json:"latest"`
	}
	if err := c.restJSON(ctx, http.MethodGet, "/jobs/"+jobID+"/checkpoints", nil, &cp); err != nil {
		return 0, "", err
	}
	path := ""
	if cp.Latest.Completed != nil {
		path = cp.Latest.Completed.ExternalPath
	}
	return cp.Counts.Completed, path, nil
}

// WaitCheckpoints waits until the job has completed at least n checkpoints
// and returns the latest's path.
func (c *FlinkCluster) WaitCheckpoints(ctx context.Context, jobID string, n int, timeout time.Duration) (string, error) {
	var path string
	done, err := poll(ctx, timeout, func() (bool, error) {
		got, p, err := c.CompletedCheckpoints(ctx, jobID)
		path = p
		return err == nil && got >= n && p != "", nil
	})
	if err != nil || done {
		return path, err
	}
	return "", fmt.Errorf("testbed: the Flink job did not complete %d checkpoints within %s\n%s", n, timeout, c.LogTail(60))
}

// poll calls cond every half second until it is done, fails, or timeout
// passes (wait.PollUntilContextTimeout of k8s.io/apimachinery, as
// internal/kube's waits use it). It reports whether cond was done; running
// out of time is not an error, an ended ctx is.
func poll(ctx context.Context, timeout time.Duration, cond func() (bool, error)) (bool, error) {
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(context.Context) (bool, error) { return cond() })
	if wait.Interrupted(err) {
		return false, ctx.Err()
	}
	return err == nil, err
}

// StopWithSavepoint stops the job with a savepoint in targetDir (REST
// POST /jobs/:jobid/stop) and returns the savepoint's path. formatType is
// CANONICAL or NATIVE; an empty targetDir uses the configured savepoint dir;
// drain emits MAX_WATERMARK before the savepoint (the request's "drain").
func (c *FlinkCluster) StopWithSavepoint(ctx context.Context, jobID, targetDir, formatType string, drain bool, timeout time.Duration) (string, error) {
	body := map[string]any{"drain": drain, "formatType": formatType}
	if targetDir != "" {
		body["targetDirectory"] = targetDir
	}
	return c.savepoint(ctx, jobID, "/stop", body, timeout)
}

// TriggerSavepoint takes a savepoint of the running job (REST POST
// /jobs/:jobid/savepoints, cancel-job false) and returns its path.
func (c *FlinkCluster) TriggerSavepoint(ctx context.Context, jobID, targetDir, formatType string, timeout time.Duration) (string, error) {
	body := map[string]any{"cancel-job": false, "formatType": formatType}
	if targetDir != "" {
		body["target-directory"] = targetDir
	}
	return c.savepoint(ctx, jobID, "/savepoints", body, timeout)
}

// savepoint triggers a savepoint operation and waits for its result
// (GET /jobs/:jobid/savepoints/:triggerid).
func (c *FlinkCluster) savepoint(ctx context.Context, jobID, op string, body map[string]any, timeout time.Duration) (string, error) {
	var trig struct {
		RequestID string `json:"request-id"`
	}
	if err := c.restJSON(ctx, http.MethodPost, "/jobs/"+jobID+op, body, &trig); err != nil {
		return "", err
	}
	var location string
	done, err := poll(ctx, timeout, func() (bool, error) {
		var st struct {
			Status struct {
				ID string `json:"id"`
			} `json:"status"`
			Operation struct {
				Location     string `json:"location"`
				FailureCause *struct {
					StackTrace string `json:"stack-trace"`
				} `json:"failure-cause"`
			} `json:"operation"`
		}
		if err := c.restJSON(ctx, http.MethodGet, "/jobs/"+jobID+"/savepoints/"+trig.RequestID, nil, &st); err != nil {
			return false, err
		}
		if st.Status.ID != "COMPLETED" {
			return false, nil
		}
		if st.Operation.FailureCause != nil {
			return false, fmt.Errorf("testbed: savepoint (%s) failed: %s", op, firstLines(st.Operation.FailureCause.StackTrace, 8))
		}
		location = st.Operation.Location
		return true, nil
	})
	if err != nil || done {
		return location, err
	}
	return "", fmt.Errorf("testbed: savepoint (%s) did not finish within %s\n%s", op, timeout, c.LogTail(60))
}

func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

var countLine = regexp.MustCompile(`flinkstate-testjob key=(\d+) count=(\d+) seq=(\d+)`)

// taskManagerLogs are the cluster's TaskManager logs in the order the
// TaskManagers started: taskmanager.log (the runner's standalone
// TaskManager), then taskmanager-<pod>.log of each TaskManager pod Flink's
// resource manager created for it (node_native.go), by attempt and index
// (<cluster-id>-taskmanager-<attempt>-<index>, Flink's
// KubernetesResourceManagerDriver.TASK_MANAGER_POD_FORMAT).
func (c *FlinkCluster) taskManagerLogs() []string {
	out := []string{"taskmanager.log"}
	pods, _ := filepath.Glob(filepath.Join(c.Dir, "log", "taskmanager-*.log"))
	order := func(p string) (int, int) {
		f := strings.Split(strings.TrimSuffix(filepath.Base(p), ".log"), "-")
		if len(f) < 2 {
			return 0, 0
		}
		a, _ := strconv.Atoi(f[len(f)-2])
		i, _ := strconv.Atoi(f[len(f)-1])
		return a, i
	}
	sort.SliceStable(pods, func(i, j int) bool {
		ai, ii := order(pods[i])
		aj, ij := order(pods[j])
		return ai < aj || ai == aj && ii < ij
	})
	for _, p := range pods {
		out = append(out, filepath.Base(p))
	}
	return out
}

// Counts reads the test job's output (the TaskManagers' stdout): for each
// key, the first and the last count printed.
func (c *FlinkCluster) Counts() (first, last map[int]int64) {
	first, last = map[int]int64{}, map[int]int64{}
	var lines []string
	for _, f := range c.taskManagerLogs() {
		lines = append(lines, readLines(filepath.Join(c.Dir, "log", f))...)
	}
	for _, l := range lines {
		m := countLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		k, _ := strconv.Atoi(m[1])
		n, _ := strconv.ParseInt(m[2], 10, 64)
		if _, ok := first[k]; !ok {
			first[k] = n
		}
		last[k] = n
	}
	return first, last
}

// WaitCounts waits until the job printed a count for every key of the test
// job (4) at least minTimes times over, and returns the first and last counts.
func (c *FlinkCluster) WaitCounts(ctx context.Context, minTimes int64, timeout time.Duration) (first, last map[int]int64, err error) {
	done, err := poll(ctx, timeout, func() (bool, error) {
		first, last = c.Counts()
		if len(last) != 4 {
			return false, nil
		}
		for k, n := range last {
			if n-first[k] < minTimes {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return nil, nil, err
	}
	if done {
		return first, last, nil
	}
	keys := make([]int, 0, len(last))
	for k := range last {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return first, last, fmt.Errorf("testbed: the job printed counts for keys %v, not %d more for each of 4, within %s\n%s", keys, minTimes, timeout, c.LogTail(40))
}

// awsNameOverrides are the JVM options that send the AWS SDK's fixed STS
// host names to the test bed's TLS listener: a JVM hosts file
// (jdk.net.hosts.file, read by java.net.InetAddress instead of the system
// resolver; so it also names this host and localhost) and a trust store
// with the test bed's CA beside the JDK's own (javax.net.ssl.trustStore).
// Nothing in Flink's configuration or the credentials class changes.
func awsNameOverrides(ctx context.Context, dist FlinkDist, tb Bed, dir string) ([]string, error) {
	if tb.STSAddress == "" {
		return nil, nil
	}
	host, _ := os.Hostname()
	hosts := "127.0.0.1 localhost " + host + "\n" + awsHostsLine(tb) + "\n"
	hostsFile := filepath.Join(dir, "conf", "hosts")
	if err := os.WriteFile(hostsFile, []byte(hosts), 0o644); err != nil {
		return nil, err
	}
	store, err := awsTrustStore(ctx, dist, tb, filepath.Join(dir, "conf"))
	if err != nil {
		return nil, err
	}
	return append([]string{"-Djdk.net.hosts.file=" + hostsFile}, store...), nil
}

// awsHostsLine is the hosts file line that sends the AWS SDK's STS and S3
// host names to the test bed's TLS listener.
func awsHostsLine(tb Bed) string {
	return tb.STSAddress + " " + strings.Join(awsfront.HostNames(tb.AWSRegion), " ")
}

// awsTrustStore writes, in dir, a trust store with the test bed's CA
// beside the JDK's own, and returns the JVM options that use it.
func awsTrustStore(ctx context.Context, dist FlinkDist, tb Bed, dir string) ([]string, error) {
	javaHome := filepath.Dir(filepath.Dir(resolved(dist.Java)))
	cacerts := filepath.Join(javaHome, "lib", "security", "cacerts")
	store := filepath.Join(dir, "truststore.p12")
	keytool := filepath.Join(javaHome, "bin", "keytool")
	for _, args := range [][]string{
		{"-importkeystore", "-noprompt", "-srckeystore", cacerts, "-srcstorepass", "changeit",
			"-destkeystore", store, "-deststoretype", "PKCS12", "-deststorepass", "changeit"},
		{"-importcert", "-noprompt", "-alias", "flinkstate-testbed", "-file", tb.AWSCAFile,
			"-keystore", store, "-storetype", "PKCS12", "-storepass", "changeit"},
	} {
		if fileExists(cacerts) || args[0] == "-importcert" {
			if out, err := exec.CommandContext(ctx, keytool, args...).CombinedOutput(); err != nil {
				return nil, fmt.Errorf("keytool %s: %w\n%s", args[0], err, out)
			}
		}
	}
	return []string{"-Djavax.net.ssl.trustStore=" + store, "-Djavax.net.ssl.trustStorePassword=changeit", "-Djavax.net.ssl.trustStoreType=PKCS12"}, nil
}

func resolved(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// IRSAEnv is what EKS's pod identity webhook injects into a pod whose
// ServiceAccount carries eks.amazonaws.com/role-arn
// (aws/amazon-eks-pod-identity-webhook, pkg/handler/handler.go:
// AWS_ROLE_ARN, AWS_WEB_IDENTITY_TOKEN_FILE, AWS_STS_REGIONAL_ENDPOINTS,
// AWS_REGION, AWS_DEFAULT_REGION), with the token file written in dir.
// The emulator's STS does not verify the token's signature, so the token
// is a well-formed JWT of no authority.
func IRSAEnv(dir string, tb Bed, roleARN string) ([]string, error) {
	token := filepath.Join(dir, "token")
	jwt := "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6dGVzdDp0ZXN0In0.c2ln"
	if err := os.WriteFile(token, []byte(jwt), 0o600); err != nil {
		return nil, err
	}
	return []string{"AWS_ROLE_ARN=" + roleARN, "AWS_WEB_IDENTITY_TOKEN_FILE=" + token,
		"AWS_STS_REGIONAL_ENDPOINTS=regional", "AWS_REGION=" + tb.AWSRegion, "AWS_DEFAULT_REGION=" + tb.AWSRegion}, nil
}

// LogLines reads one of the cluster's logs (jobmanager.log, taskmanager.log).
func (c *FlinkCluster) LogLines(name string) []string {
	return readLines(filepath.Join(c.Dir, "log", name))
}

// FlinkKnows is what a Flink version's jars declare (org.flinkstate.testjob.ConfigKeys, KnowsVersion):
// its ConfigOption keys (with fallback and deprecated keys), the fs.s3a.*
// keys of the S3 plugin's Hadoop, and which classes load from the plugin.
type FlinkKnows struct {
	Options, Hadoop map[string]bool
	Loads           map[string]bool
}

// parseKnows reads ConfigKeys' lines ("option KEY", "hadoop KEY", "class NAME true|false").
func parseKnows(out string) FlinkKnows {
	k := FlinkKnows{Options: map[string]bool{}, Hadoop: map[string]bool{}, Loads: map[string]bool{}}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) == 2 && f[0] == "option":
			k.Options[f[1]] = true
		case len(f) == 2 && f[0] == "hadoop":
			k.Hadoop[f[1]] = true
		case len(f) == 3 && f[0] == "class":
			k.Loads[f[1]] = f[2] == "true"
		}
	}
	return k
}

// shortHash is 12 hex digits of s's SHA-256, for cache file names.
func shortHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])[:12]
}
