package flinkrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Flink's native Kubernetes integration on the node stand-in: the
// JobManager pod runs Flink's Kubernetes application entry point, whose
// resource manager (KubernetesResourceManagerDriver) creates a TaskManager
// pod per TaskManager the job needs; the node schedules those pods to
// itself and runs each as a Flink TaskManager JVM
// (KubernetesTaskExecutorRunner), as a cluster's scheduler and kubelet do.
// Both entry classes are in the distribution's lib/flink-kubernetes jar,
// as in the official image's flink-dist; the image's bin/ scripts are not
// in the test bed's distribution, so the node starts the JVMs as they do
// (flink-dist bin/kubernetes-jobmanager.sh, kubernetes-taskmanager.sh,
// flink-console.sh).

// errWaitJobManager: a TaskManager pod waits until its JobManager runs.
var errWaitJobManager = errors.New("waiting for the JobManager")

const (
	roleJobManager  = "jobmanager"
	roleTaskManager = "taskmanager"

	// taskManagerSelector selects the TaskManager pods Flink's resource
	// manager creates and watches (Flink 2.2 KubernetesUtils
	// .getTaskManagerSelectors: type=flink-native-kubernetes, app=<cluster-id>,
	// component=taskmanager).
	taskManagerSelector = "component=taskmanager,type=flink-native-kubernetes"

	// podTemplateDir is where the JobManager pod mounts the ConfigMap
	// pod-template-<cluster-id> (Flink 1.20 PodTemplateMountDecorator,
	// Constants.POD_TEMPLATE_DIR_IN_POD), and the only place Flink 2.2's
	// resource manager reads the TaskManager pod template from
	// (KubernetesUtils.getTaskManagerPodTemplateFileInPod: this absolute
	// path and TASK_MANAGER_POD_TEMPLATE_FILE_NAME; an empty template when
	// the file is missing). The provider's pod template carries the S3
	// plugin's ENABLE_BUILT_IN_PLUGINS, so the TaskManagers need it.
	podTemplateDir         = "/opt/flink/pod-template"
	taskManagerPodTemplate = "taskmanager-pod-template.yaml"

	jobManagerEntryClass  = "org.apache.flink.kubernetes.entrypoint.KubernetesApplicationClusterEntrypoint"
	taskManagerEntryClass = "org.apache.flink.kubernetes.taskmanager.KubernetesTaskExecutorRunner"

	// The operator's standalone mode runs the image's standalone scripts
	// (CmdStandaloneJobManagerDecorator: args "standalone-job" and its
	// options; CmdStandaloneTaskManagerDecorator: "taskmanager"), which
	// start these classes (flink-dist bin/standalone-job.sh,
	// taskmanager.sh).
	standaloneJobManagerEntryClass  = "org.apache.flink.container.entrypoint.StandaloneApplicationClusterEntryPoint"
	standaloneTaskManagerEntryClass = "org.apache.flink.runtime.taskexecutor.TaskManagerRunner"
)

// podRole is the pod's Flink process: the component label Flink's
// decorators set (Constants.LABEL_COMPONENT_JOB_MANAGER / _TASK_MANAGER).
func podRole(pod *unstructured.Unstructured) string {
	if pod.GetLabels()["component"] == roleTaskManager {
		return roleTaskManager
	}
	return roleJobManager
}

// bindPod schedules a pod to the node, as kube-scheduler does: a Binding
// (POST pods/<name>/binding), with which the API server sets spec.nodeName
// and the PodScheduled condition True (k8s.io/kubernetes v1.34
// pkg/registry/core/pod/storage BindingREST.setPodNodeAndMetadata). Flink's
// resource manager counts a TaskManager pod as scheduled on that condition
// (KubernetesPod.isScheduled) and creates its pods without a node
// (InitTaskManagerDecorator).
func (n *Node) bindPod(ctx context.Context, pod *unstructured.Unstructured) error {
	b := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Binding",
		"metadata": map[string]any{"name": pod.GetName(), "namespace": pod.GetNamespace(), "uid": string(pod.GetUID())},
		"target":   map[string]any{"apiVersion": "v1", "kind": "Node", "name": NodeName},
	}}
	_, err := n.dyn.Resource(podsGVR).Namespace(pod.GetNamespace()).Create(ctx, b, metav1.CreateOptions{}, "binding")
	if err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// fieldRefValue is the downward API's value of a pod field an env var
// names (Kubernetes "Expose Pod Information to Containers Through
// Environment Variables"); Flink's decorators use spec.nodeName
// (_POD_NODE_ID, InitTaskManagerDecorator) and status.podIP
// (_POD_IP_ADDRESS, InitJobManagerDecorator).
func fieldRefValue(pod *unstructured.Unstructured, path, addr string) (string, bool) {
	switch path {
	case "spec.nodeName":
		return NodeName, true
	case "status.podIP":
		return addr, addr != ""
	case "status.hostIP":
		return "127.0.0.1", true
	case "metadata.name":
		return pod.GetName(), true
	case "metadata.namespace":
		return pod.GetNamespace(), true
	case "metadata.uid":
		return string(pod.GetUID()), true
	case "spec.serviceAccountName":
		sa, _, _ := unstructured.NestedString(pod.Object, "spec", "serviceAccountName")
		return sa, true
	}
	return "", false
}

// containerDynamicArgs are the -D arguments of the container's start
// command: Flink's decorators start both processes through bash
// (KubernetesUtils.getStartCommandWithBashWrapper: ["bash", "-c",
// "<script> <args>"], CmdJobManagerDecorator, CmdTaskManagerDecorator); the
// TaskManager's carry its resource ID, its memory and slots, and every
// setting whose value in the JobManager differs from the config.yaml
// (KubernetesResourceManagerDriver.createKubernetesTaskManagerParameters,
// BootstrapTools.getDynamicPropertiesAsString).
func containerDynamicArgs(main map[string]any) ([]string, error) {
	var words []string
	command, _, _ := unstructured.NestedStringSlice(main, "args")
	for i := 0; i < len(command); i++ {
		if command[i] == "-c" && i+1 < len(command) {
			w, err := shellWords(command[i+1])
			if err != nil {
				return nil, err
			}
			words = append(words, w...)
			i++
		}
	}
	var out []string
	for i := 0; i < len(words); i++ {
		switch w := words[i]; {
		case w == "-D" && i+1 < len(words):
			out = append(out, "-D"+words[i+1])
			i++
		case strings.HasPrefix(w, "-D") && len(w) > 2:
			out = append(out, w)
		}
	}
	return out, nil
}

// shellWords splits a command line as bash does for words: blanks
// separate, single quotes keep everything, double quotes keep all but \",
// \\ and \$, a backslash outside quotes keeps the next character.
func shellWords(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated ' in %q", s)
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`+"`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unterminated \" in %q", s)
			}
			in = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			in = true
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out, nil
}

// nodeRewrites are the changes the node makes to the configuration a pod
// mounts, each because the process runs on this machine instead of in a
// pod (see localRewrites): where S3 is, the pod's address to bind (its
// advertised addresses stay as Flink's client wrote them: the JobManager's
// jobmanager.rpc.address is the internal Service's name <cluster-id>.<ns>,
// InternalServiceDecorator, which the node's hosts file resolves; under
// Kubernetes HA Flink sets it from _POD_IP_ADDRESS itself,
// KubernetesEntrypointUtils.loadConfiguration), the pod's emptyDir and tmp
// mounts as local folders, the API server (the test bed's kubeconfig in
// place of the pod's service account), memory sized for a 2-core test
// machine (the JobManager's, and the TaskManagers' it derives from
// taskmanager.memory.process.size) and, for the JobManager, the test job
// in place of the image's jar (pipeline.jars and the entry class the
// operator writes from spec.job: FlinkConfigBuilder.applyJobConfig; the
// node runs the repository's counting job whatever jarURI names).
func nodeRewrites(conf map[string]string, tb Bed, dist FlinkDist, dir, addr, role string) map[string]string {
	out := machineRewrites(conf, tb, dir, "")
	// Flink's fabric8 client reads kubernetes.config.file when it is set
	// (FlinkKubeClientFactory.createFabric8ioKubernetesClient).
	out["kubernetes.config.file"] = tb.Kubeconfig
	if role == roleTaskManager {
		out["taskmanager.host"] = addr
		out["taskmanager.bind-host"] = addr
		// What a standalone TaskManager sizes itself from (a native one
		// gets its sizes from the JobManager's -D arguments).
		out["taskmanager.memory.process.size"] = "1280m"
		return out
	}
	out["jobmanager.bind-host"] = addr
	out["rest.bind-address"] = addr
	out["jobmanager.memory.process.size"] = "1024m"
	out["taskmanager.memory.process.size"] = "1280m"
	// KubernetesApplicationClusterEntrypoint.getPackagedProgram /
	// fetchArtifacts: PipelineOptions.JARS (local:// is used in place),
	// ApplicationConfiguration.APPLICATION_MAIN_CLASS, and
	// ArtifactFetchOptions.BASE_DIR for anything it would fetch.
	out["pipeline.jars"] = "local://" + dist.JobJar
	out["$internal.application.main"] = jobClass(conf["$internal.application.main"])
	out["user.artifacts.base-dir"] = filepath.Join(dir, "artifacts")
	return out
}

// podJVMOpts are the JVM options every pod's JVM gets from the node: the
// node's hosts file for pods (the Services' names, and the AWS names the
// test bed serves), read again at every lookup (no caching), and the
// trust store with the test bed's CA.
func (n *Node) podJVMOpts(ctx context.Context) ([]string, error) {
	n.trustOnce.Do(func() {
		if n.env.STSAddress != "" {
			n.trust, n.trustErr = awsTrustStore(ctx, n.dist, n.env, n.dir)
		}
	})
	if n.trustErr != nil {
		return nil, n.trustErr
	}
	opts := []string{"-Djdk.net.hosts.file=" + n.podHosts(), "-Dsun.net.inetaddr.ttl=0", "-Dsun.net.inetaddr.negative.ttl=0"}
	return append(opts, n.trust...), nil
}

func (n *Node) podHosts() string { return filepath.Join(n.dir, "hosts") }

// mountedConfigMap is the ConfigMap a container mounts at path, "" for none.
func mountedConfigMap(pod *unstructured.Unstructured, main map[string]any, path string) string {
	volume := ""
	mounts, _, _ := unstructured.NestedSlice(main, "volumeMounts")
	for _, m := range mounts {
		if mm, ok := m.(map[string]any); ok && mm["mountPath"] == path {
			volume, _ = mm["name"].(string)
		}
	}
	if volume == "" {
		return ""
	}
	volumes, _, _ := unstructured.NestedSlice(pod.Object, "spec", "volumes")
	for _, v := range volumes {
		if vm, ok := v.(map[string]any); ok && vm["name"] == volume {
			name, _, _ := unstructured.NestedString(vm, "configMap", "name")
			return name
		}
	}
	return ""
}

// podTemplate writes the files of the ConfigMap the JobManager pod mounts
// at podTemplateDir into dir; false when it mounts none.
func (n *Node) podTemplate(ctx context.Context, pod *unstructured.Unstructured, main map[string]any, dir string) (bool, error) {
	name := mountedConfigMap(pod, main, podTemplateDir)
	if name == "" {
		return false, nil
	}
	cm, err := n.dyn.Resource(configMapsGVR).Namespace(pod.GetNamespace()).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, fmt.Errorf("%w: ConfigMap %s of pod %s/%s", errVolumeNotReady, name, pod.GetNamespace(), pod.GetName())
	}
	if err != nil {
		return false, err
	}
	data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
	for k, v := range data {
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(k)), []byte(v), 0o644); err != nil {
			return false, err
		}
	}
	return true, nil
}

// ensurePodTemplateDir makes the mount point podTemplateDir on this
// machine (empty; each JobManager sees its own pod's files there, bound in
// a mount namespace of its own: withBindMount).
func ensurePodTemplateDir() error {
	if err := os.MkdirAll(podTemplateDir, 0o755); err != nil {
		return fmt.Errorf("node: the JobManager's pod template is read from %s (Flink's KubernetesUtils.getTaskManagerPodTemplateFileInPod), which the node binds per pod; making it needs root: %w", podTemplateDir, err)
	}
	return nil
}

// withBindMount runs bin in a mount namespace of its own (unshare(1)), in
// which src is bound at target, as a container sees its volume at its
// mount path; the process keeps its pid (unshare and sh exec it).
func withBindMount(src, target, bin string, args []string) (string, []string, error) {
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		return "", nil, fmt.Errorf("node: binding the pod's %s needs unshare(1): %w", target, err)
	}
	return unshare, append([]string{"--mount", "--propagation", "private", "--", "sh", "-c",
		`mount --bind "$1" "$2" && shift 2 && exec "$@"`, "sh", src, target, bin}, args...), nil
}

// podProcessEnv is the environment of a pod's JVM: the container's, then
// where Flink's scripts find the configuration, plugins and home (later
// entries win: os/exec keeps the last of a name).
func podProcessEnv(job FlinkJob, dist FlinkDist, dir string) []string {
	return append(append([]string{}, job.Env...),
		"FLINK_CONF_DIR="+filepath.Join(dir, "conf"),
		"FLINK_PLUGINS_DIR="+filepath.Join(dir, "plugins"),
		"FLINK_HOME="+dist.Home)
}

// envRef is a $(VAR) reference in a container's args, which Kubernetes
// replaces with the container's variable of that name, leaving it as
// written when there is none ("Define a Command and Arguments for a
// Container": $(VAR) in args; $$ escapes).
var envRef = regexp.MustCompile(`\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

func expandEnvRefs(s string, env []string) string {
	return envRef.ReplaceAllStringFunc(s, func(m string) string {
		if m == "$$" {
			return "$"
		}
		name := m[2 : len(m)-1]
		for _, kv := range env {
			if k, _, ok := strings.Cut(kv, "="); ok && k == name {
				return envValue(env, name)
			}
		}
		return m
	})
}

// TestJobPackage is the package of the repository's test job's classes.
const TestJobPackage = "org.flinkstate.testjob."

// jobClass is the entry class the node runs for the one the operator wrote
// (spec.job.entryClass): the repository's counting job in place of the
// image's, except that a class named in the test job's own package is kept
// as given, so a test can name one the jar does not hold and meet what
// Flink does then (PackagedProgram.loadMainClass: ClassNotFoundException,
// and the JobManager exits).
func jobClass(given string) string {
	if strings.HasPrefix(given, TestJobPackage) {
		return given
	}
	return TestJobClass
}

// standaloneJobArgs are StandaloneApplicationClusterEntryPoint's
// arguments from a standalone JobManager container's args ("standalone-job",
// then --job-classname, --fromSavepoint, --allowNonRestoredState, --host
// $(_POD_IP_ADDRESS) under HA, and the job's args:
// CmdStandaloneJobManagerDecorator.getApplicationClusterArgs), with the
// repository's counting job in place of the image's (--jars, and its
// class for --job-classname).
func standaloneJobArgs(main map[string]any, env []string, jobJar string) ([]string, error) {
	args, _, _ := unstructured.NestedStringSlice(main, "args")
	if len(args) == 0 || args[0] != "standalone-job" {
		return nil, fmt.Errorf("a standalone JobManager's args start with standalone-job, not %q", args)
	}
	given := ""
	for i := 1; i+1 < len(args); i++ {
		if args[i] == "--job-classname" {
			given = args[i+1]
		}
	}
	out := []string{"--jars", "file://" + jobJar, "--job-classname", jobClass(given)}
	for i := 1; i < len(args); i++ {
		if args[i] == "--job-classname" && i+1 < len(args) {
			i++
			continue
		}
		out = append(out, expandEnvRefs(args[i], env))
	}
	return out, nil
}

func envValue(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

// startJobManagerPod runs a JobManager pod: Flink's Kubernetes application
// entry point, as kubernetes-jobmanager.sh starts it (BashJavaUtils
// GET_JM_RESOURCE_PARAMS for the memory arguments and dynamic properties,
// then the class with -D arguments only: KubernetesEntrypointUtils reads
// the configuration from FLINK_CONF_DIR), and waits until its REST API
// answers.
// A standalone JobManager pod runs StandaloneApplicationClusterEntryPoint
// as standalone-job.sh starts it (BashJavaUtils for the memory, then
// --configDir and the container's arguments: standaloneJobArgs).
func (n *Node) startJobManagerPod(ctx context.Context, pod *unstructured.Unstructured, main map[string]any, job FlinkJob, addr string, standalone bool) (*FlinkCluster, error) {
	dir, err := os.MkdirTemp("", "flinkstate-flink-")
	if err != nil {
		return nil, err
	}
	c, err := n.startJobManagerIn(ctx, pod, main, job, addr, dir, standalone)
	if err != nil {
		n.keepLog(pod.GetUID(), filepath.Join(dir, "log", "jobmanager.log"))
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return c, nil
}

func (n *Node) startJobManagerIn(ctx context.Context, pod *unstructured.Unstructured, main map[string]any, job FlinkJob, addr, dir string, standalone bool) (*FlinkCluster, error) {
	if err := mkdirs(dir, "conf", "tmp", "localstate", "log", "plugins", "artifacts", "pod-template"); err != nil {
		return nil, err
	}
	mounted, err := n.podTemplate(ctx, pod, main, filepath.Join(dir, "pod-template"))
	if err != nil {
		return nil, err
	}
	if err := installPlugin(n.dist, dir, job.PluginJar); err != nil {
		return nil, err
	}
	c := &FlinkCluster{Dir: dir, Configuration: nodeRewrites(job.Configuration, n.env, n.dist, dir, addr, roleJobManager)}
	c.RESTURL = fmt.Sprintf("http://%s:%d", addr, restPort(c.Configuration))
	confDir := filepath.Join(dir, "conf")
	if err := writeFlinkConf(confDir, c.Configuration, job.Args); err != nil {
		return nil, err
	}
	jvmOpts, err := n.podJVMOpts(ctx)
	if err != nil {
		return nil, err
	}
	memArgs, dynamic, err := bashJavaUtils(ctx, n.dist, confDir, "GET_JM_RESOURCE_PARAMS")
	if err != nil {
		return nil, err
	}
	entry, own := jobManagerEntryClass, []string(nil)
	if standalone {
		entry, dynamic = standaloneJobManagerEntryClass, append([]string{"--configDir", confDir}, dynamic...)
		own, err = standaloneJobArgs(main, job.Env, n.dist.JobJar)
	} else {
		own, err = containerDynamicArgs(main)
	}
	if err != nil {
		return nil, err
	}
	bin, args := n.dist.Java, flinkJavaArgs(n.dist, c.Configuration, confDir, roleJobManager, memArgs, jvmOpts, entry, append(dynamic, own...)...)
	if mounted {
		if bin, args, err = withBindMount(filepath.Join(dir, "pod-template"), podTemplateDir, bin, args); err != nil {
			return nil, err
		}
	}
	n.recordLog(pod.GetUID(), filepath.Join(dir, "log", "jobmanager.log"))
	pid, err := spawnEnv(bin, args, podProcessEnv(job, n.dist, dir), filepath.Join(dir, "log", "jobmanager.log"))
	if err != nil {
		return nil, err
	}
	c.pids = []int{pid}
	if err := c.waitREST(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// startTaskManagerPod runs a TaskManager pod: KubernetesTaskExecutorRunner
// as kubernetes-taskmanager.sh starts it (the JVM memory options of
// FLINK_TM_JVM_MEM_OPTS, which CmdTaskManagerDecorator sets; no
// BashJavaUtils: the resource manager passed the memory as -D arguments;
// --configDir and the pod's -D arguments). Its log is written beside its
// JobManager's (taskmanager-<pod>.log in the cluster's log folder), where
// the cluster's Counts read the job's output.
//
// A standalone TaskManager pod runs TaskManagerRunner as taskmanager.sh
// starts it (BashJavaUtils GET_TM_RESOURCE_PARAMS for the memory, then
// --configDir and the dynamic properties).
func (n *Node) startTaskManagerPod(ctx context.Context, pod *unstructured.Unstructured, main map[string]any, job FlinkJob, addr string, standalone bool) (*FlinkCluster, error) {
	// Its JobManager's cluster: where its log goes. A standalone
	// TaskManager Deployment's pods can come before their JobManager runs;
	// they start once it does (a TaskManager started earlier would only
	// retry its registration until then).
	cs := n.Clusters(pod.GetNamespace(), pod.GetLabels()["app"])
	if len(cs) == 0 || !cs[len(cs)-1].alive() {
		return nil, fmt.Errorf("%w: the JobManager of %s does not run yet", errWaitJobManager, pod.GetLabels()["app"])
	}
	jm := cs[len(cs)-1]
	logDir := filepath.Join(jm.Dir, "log")
	dir := filepath.Join(jm.Dir, "taskmanagers", pod.GetName())
	if err := mkdirs(dir, "conf", "tmp", "localstate", "plugins"); err != nil {
		return nil, err
	}
	if err := installPlugin(n.dist, dir, job.PluginJar); err != nil {
		return nil, err
	}
	c := &FlinkCluster{Dir: dir, Configuration: nodeRewrites(job.Configuration, n.env, n.dist, dir, addr, roleTaskManager)}
	confDir := filepath.Join(dir, "conf")
	if err := writeFlinkConf(confDir, c.Configuration, nil); err != nil {
		return nil, err
	}
	jvmOpts, err := n.podJVMOpts(ctx)
	if err != nil {
		return nil, err
	}
	entry, memArgs := taskManagerEntryClass, strings.Fields(envValue(job.Env, "FLINK_TM_JVM_MEM_OPTS"))
	var dynamic []string
	if standalone {
		entry = standaloneTaskManagerEntryClass
		if memArgs, dynamic, err = bashJavaUtils(ctx, n.dist, confDir, "GET_TM_RESOURCE_PARAMS"); err != nil {
			return nil, err
		}
	} else {
		if dynamic, err = containerDynamicArgs(main); err != nil {
			return nil, err
		}
		if len(dynamic) == 0 {
			return nil, errors.New("the TaskManager pod's command has no -D arguments (Flink's resource manager passes its resource ID and memory)")
		}
	}
	args := flinkJavaArgs(n.dist, c.Configuration, confDir, roleTaskManager, memArgs, jvmOpts, entry, append([]string{"--configDir", confDir}, dynamic...)...)
	n.recordLog(pod.GetUID(), filepath.Join(logDir, "taskmanager-"+pod.GetName()+".log"))
	pid, err := spawnEnv(n.dist.Java, args, podProcessEnv(job, n.dist, dir), filepath.Join(logDir, "taskmanager-"+pod.GetName()+".log"))
	if err != nil {
		return nil, err
	}
	c.pids = []int{pid}
	return c, nil
}
