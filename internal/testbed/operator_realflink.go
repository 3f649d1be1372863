package testbed

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed/flinkrun"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed/opmodel"
)

// RealFlink makes the model's jobs real: where the model would only report
// a running job and write placeholder files, the cluster the operator would
// start runs as real Flink 2.2.1 JVMs (StartFlink) with the deployment's
// flinkConfiguration, and savepoints are taken by Flink. The model's rules
// (when to deploy, suspend, restore, which path) stay as they are; only
// what Flink itself does becomes real. The job run is always the test bed's
// own (tools/flink): the image's jars are not on this machine.
type RealFlink struct {
	Dist FlinkDist
	Env  Env
	Dyn  dynamic.Interface
	// PodEnv is the environment EKS gives the deployment's pods (the
	// credentials the pod identity webhook injects).
	PodEnv func(ctx context.Context, dep *unstructured.Unstructured) ([]string, error)
	Logf   func(string, ...any)
	// Region is the AWS region of the cluster the jobs run in ("" for the
	// test bed's own; SecondRegion for a standby cluster in region B):
	// FlinkJob.Region of every job started.
	Region string

	mu       sync.Mutex
	clusters map[string]*FlinkCluster // deployment UID -> its running cluster
	// A test's fault (SetJobManagerFault): the kubeconfig the JobManagers
	// reach the API server with ("" for the test bed's), and what is
	// called when a JobManager exited before its REST API answered.
	jmKubeconfig string
	onJMExit     func(error)
}

// SetJobManagerFault makes the JobManagers started from now on reach the
// API server with the kubeconfig at path instead of the test bed's (their
// kubernetes.config.file; e.g. one through a stopped FaultProxy: an API
// server they cannot reach), and has onExit called with the error of each
// JobManager that exits before its REST API answers, before the kubelet's
// restart (a test ends its fault there). "" and nil undo it.
func (f *RealFlink) SetJobManagerFault(path string, onExit func(error)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.jmKubeconfig, f.onJMExit = path, onExit
}

// fixedJobIDKey is Flink's PipelineOptionsInternal.PIPELINE_FIXED_JOB_ID.
const fixedJobIDKey = "$internal.pipeline.job-id"

// JobOf is what the operator hands Flink for a deployment: its
// flinkConfiguration, the S3 plugin its pod template enables, its
// parallelism, and the given restore path.
func JobOf(dep *unstructured.Unstructured, restore string) FlinkJob {
	// As the operator hands it to Flink: flattened, scalars as strings
	// (ConfigObjectNode.asFlatMap).
	raw, _, _ := unstructured.NestedFieldNoCopy(dep.Object, "spec", "flinkConfiguration")
	conf := opmodel.FlatConf(raw)
	job := FlinkJob{Configuration: conf, Namespace: dep.GetNamespace(), Name: dep.GetName(), RestorePath: restore}
	containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "podTemplate", "spec", "containers")
	for _, c := range containers {
		cm, ok := c.(map[string]any)
		if !ok {
			continue
		}
		env, _, _ := unstructured.NestedSlice(cm, "env")
		for _, e := range env {
			if m, ok := e.(map[string]any); ok && m["name"] == opmodel.PluginsEnv {
				job.PluginJar, _ = m["value"].(string)
			}
		}
	}
	p, _, _ := unstructured.NestedInt64(dep.Object, "spec", "job", "parallelism")
	job.Parallelism = int(p)
	return job
}

// Start runs the deployment's cluster and waits until its job runs; it
// returns the job's id. A job that fails or never runs is the error.
//
// restore is what the operator passes: a path, opmodel.LastStateDummyPath (resume
// from HA metadata, which Kubernetes HA does by itself for the same cluster
// id), or "". jobID is the id the operator chose (the model's deploy, as
// ApplicationReconciler.setJobIdIfNecessary: a new one for every deploy
// that does not resume the last state), passed as
// $internal.pipeline.job-id; without it Flink with Kubernetes HA would
// derive one id from the cluster id for every deploy. As the operator does
// before it submits (flink-kubernetes-operator release-1.15.0), a cluster
// with an HA directory gets a job result store of its own
// (ApplicationReconciler.setRandomJobResultStorePath) and the job graphs in
// its Kubernetes HA ConfigMaps are removed
// (AbstractFlinkService.submitApplicationCluster,
// FlinkUtils.deleteJobGraphInKubernetesHA), so a finished job is not
// recovered in place of the new one.
//
// submit is false when the kubelet restarts the pods of a deployed cluster
// (the operator submits nothing then: the job resumes from its HA metadata).
func (f *RealFlink) Start(ctx context.Context, dep *unstructured.Unstructured, restore, jobID string, submit bool) (string, error) {
	f.Stop(dep, false)
	path := restore
	if path == opmodel.LastStateDummyPath {
		path = ""
	}
	job := JobOf(dep, path)
	job.Region = f.Region
	if job.Configuration == nil {
		job.Configuration = map[string]string{}
	}
	if jobID != "" {
		job.Configuration[fixedJobIDKey] = jobID
	}
	if ha := job.Configuration["high-availability.storageDir"]; ha != "" {
		if _, ok := job.Configuration["job-result-store.delete-on-commit"]; !ok {
			job.Configuration["job-result-store.delete-on-commit"] = "false"
		}
		job.Configuration["job-result-store.storage-path"] = strings.TrimSuffix(ha, "/") + "/job-result-store/" + dep.GetName() + "/" + randomHex(16)
		if submit {
			f.deleteJobGraphs(ctx, dep)
		}
	}
	env, err := f.PodEnv(ctx, dep)
	if err != nil {
		return "", err
	}
	job.Env = env
	c, err := f.startRestarting(ctx, dep, job)
	if err != nil {
		return "", err
	}
	f.mu.Lock()
	if f.clusters == nil {
		f.clusters = map[string]*FlinkCluster{}
	}
	f.clusters[string(dep.GetUID())] = c
	f.mu.Unlock()
	if f.Logf != nil {
		f.Logf("operator: Flink of %s/%s: REST API %s, logs %s", dep.GetNamespace(), dep.GetName(), c.RESTURL, c.Dir+"/log")
	}
	return c.RunningJob(ctx, 3*time.Minute)
}

// startRestarting starts the deployment's cluster as its JobManager pod
// runs: a JobManager whose process exits before its REST API answers
// (flinkrun.ErrJobManagerExited; e.g. one that could not create its
// Kubernetes HA services on a loaded machine:
// HighAvailabilityServicesUtils.createHighAvailabilityServices, Flink
// 2.2.1) is started once more with the same configuration, as the kubelet
// restarts the container of a pod whose restartPolicy is Always (the only
// one a Deployment's pod template allows, apps/v1 validation; Flink's
// JobManager is a Deployment, KubernetesJobManagerFactory): at once after
// its first exit (kubernetes pkg/kubelet/kuberuntime
// kuberuntime_manager.go doBackOff: a container not in back-off is
// started, and only then its back-off begins). The operator sees nothing
// of it: an unreachable REST API is "tried again later"
// (JobStatusObserver.observe, operator release-1.15.0), and a JobManager
// Deployment not available stays DEPLOYING unless its container waits in
// CrashLoopBackOff (AbstractFlinkDeploymentObserver.observeJmDeployment,
// checkContainerErrors), which a first restart does not. A second exit
// would wait in CrashLoopBackOff, a failed deployment to the operator: not
// modelled, it is Start's error. A configuration Flink refuses is not
// restarted (it is refused again at every start), nor a JobManager that
// runs and never answers (no exit: neither Flink's decorators nor the
// operator give its container a liveness probe).
func (f *RealFlink) startRestarting(ctx context.Context, dep *unstructured.Unstructured, job FlinkJob) (*FlinkCluster, error) {
	f.mu.Lock()
	env, onExit := f.Env, f.onJMExit
	if f.jmKubeconfig != "" {
		env.Kubeconfig = f.jmKubeconfig
	}
	f.mu.Unlock()
	c, err := StartFlink(ctx, f.Dist, env, job)
	if err == nil || !errors.Is(err, flinkrun.ErrJobManagerExited) {
		return c, err
	}
	if onExit != nil {
		onExit(err)
	}
	if f.Logf != nil {
		msg, _, _ := strings.Cut(err.Error(), "\n")
		f.Logf("operator: the JobManager of %s/%s exited, the kubelet restarts it: %s", dep.GetNamespace(), dep.GetName(), msg)
	}
	return StartFlink(ctx, f.Dist, env, job)
}

// deleteJobGraphs removes the jobGraph- entries (Flink's
// Constants.JOB_GRAPH_STORE_KEY_PREFIX) from the deployment's Kubernetes HA
// ConfigMaps, as FlinkUtils.deleteJobGraphInKubernetesHA does.
func (f *RealFlink) deleteJobGraphs(ctx context.Context, dep *unstructured.Unstructured) {
	if f.Dyn == nil {
		return
	}
	r := f.Dyn.Resource(corev1.SchemeGroupVersion.WithResource("configmaps")).Namespace(dep.GetNamespace())
	list, err := r.List(ctx, metav1.ListOptions{LabelSelector: "app=" + dep.GetName() + ",type=flink-native-kubernetes"})
	if err != nil {
		return
	}
	for i := range list.Items {
		cm := &list.Items[i]
		data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
		changed := false
		for k := range data {
			if strings.HasPrefix(k, "jobGraph-") {
				delete(data, k)
				changed = true
			}
		}
		if changed {
			_ = unstructured.SetNestedStringMap(cm.Object, data, "data")
			_, _ = r.Update(ctx, cm, metav1.UpdateOptions{})
		}
	}
}

// ClusterOf is the cluster that runs the deployment's job now, or nil: for
// tests that read what the job printed.
func (f *RealFlink) ClusterOf(dep *unstructured.Unstructured) *FlinkCluster { return f.cluster(dep) }

// Running says whether the deployment's cluster runs (opmodel.Flink).
func (f *RealFlink) Running(dep *unstructured.Unstructured) bool { return f.cluster(dep) != nil }

func (f *RealFlink) cluster(dep *unstructured.Unstructured) *FlinkCluster {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.clusters[string(dep.GetUID())]
}

// Stop ends the deployment's cluster as deleting its pods would; with
// deleteHA also its Kubernetes HA ConfigMaps (labelled app=<cluster-id>,
// type=flink-native-kubernetes, as Flink 2.2.1 writes them), as the
// operator deletes the cluster with its HA data when the job is not to be
// resumed from it (ApplicationReconciler.cleanupInternal, deleteClusterDeployment).
func (f *RealFlink) Stop(dep *unstructured.Unstructured, deleteHA bool) {
	f.mu.Lock()
	c := f.clusters[string(dep.GetUID())]
	delete(f.clusters, string(dep.GetUID()))
	f.mu.Unlock()
	if c != nil {
		c.Remove()
	}
	if deleteHA && f.Dyn != nil {
		_ = f.Dyn.Resource(corev1.SchemeGroupVersion.WithResource("configmaps")).Namespace(dep.GetNamespace()).DeleteCollection(
			context.Background(), metav1.DeleteOptions{},
			metav1.ListOptions{LabelSelector: "app=" + dep.GetName() + ",type=flink-native-kubernetes"})
	}
}

// Close ends every cluster it started.
func (f *RealFlink) Close() {
	f.mu.Lock()
	cs := f.clusters
	f.clusters = nil
	f.mu.Unlock()
	for _, c := range cs {
		c.Remove()
	}
}

// Savepoint has Flink take a savepoint of the deployment's job into dir
// (CANONICAL unless req says NATIVE: the operator's
// kubernetes.operator.savepoint.format.type default), stopping the job
// (and draining it) when req says so, and returns its path.
func (f *RealFlink) Savepoint(ctx context.Context, dep *unstructured.Unstructured, jobID, dir string, req opmodel.SavepointRequest) (string, error) {
	c := f.cluster(dep)
	if c == nil {
		return "", fmt.Errorf("no Flink cluster runs for %s", dep.GetName())
	}
	format := req.FormatType
	if format == "" {
		format = "CANONICAL"
	}
	if req.Stop {
		return c.StopWithSavepoint(ctx, jobID, dir, format, req.Drain, 5*time.Minute)
	}
	return c.TriggerSavepoint(ctx, jobID, dir, format, 5*time.Minute)
}

// IRSAPodEnv is the pod identity webhook's stand-in for IRSA: the role in
// the deployment's ServiceAccount's eks.amazonaws.com/role-arn annotation
// (amazon-eks-pod-identity-webhook) and a token file in dir.
func IRSAPodEnv(dyn dynamic.Interface, tb Env, dir string) func(context.Context, *unstructured.Unstructured) ([]string, error) {
	return func(ctx context.Context, dep *unstructured.Unstructured) ([]string, error) {
		sa, _, _ := unstructured.NestedString(dep.Object, "spec", "serviceAccount")
		obj, err := dyn.Resource(corev1.SchemeGroupVersion.WithResource("serviceaccounts")).Namespace(dep.GetNamespace()).Get(ctx, sa, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("service account %s/%s of %s: %w", dep.GetNamespace(), sa, dep.GetName(), err)
		}
		role := obj.GetAnnotations()["eks.amazonaws.com/role-arn"]
		if role == "" {
			return nil, errors.New("service account " + sa + " has no eks.amazonaws.com/role-arn annotation: the pod gets no AWS credentials")
		}
		return IRSAEnv(strings.TrimSuffix(dir, "/"), tb, role)
	}
}
