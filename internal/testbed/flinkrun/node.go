package flinkrun

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed/opmodel"
)

// The node: what a cluster's kubelet, its deployment controller and its
// Service DNS do for the pods the real Flink Kubernetes Operator creates,
// with real Flink 2.2.1 processes in place of containers.
//
// The operator (through Flink 1.20's native Kubernetes client,
// KubernetesClusterDescriptor) creates, per FlinkDeployment, a JobManager
// Deployment labelled app=<name>, component=jobmanager,
// type=flink-native-kubernetes (Flink KubernetesUtils.getJobManagerSelectors),
// whose pod mounts the ConfigMap flink-config-<name> (config.yaml: the
// configuration the operator rendered) at /opt/flink/conf and
// pod-template-<name> (the TaskManager pod template), and a Service
// <name>-rest on port 8081. The node:
//   - as the deployment controller: keeps spec.replicas pods of each such
//     Deployment (at most one: JobManager standby replicas are not run),
//     owned by it, and writes its status (replicas, readyReplicas,
//     availableReplicas, the Available and Progressing conditions; a pod it
//     cannot create becomes the ReplicaFailure/FailedCreate condition),
//     which the operator's AbstractFlinkDeploymentObserver reads;
//   - as the scheduler: binds the TaskManager pods Flink's resource
//     manager creates (without a node) to itself (node_native.go);
//   - as the kubelet: runs each JobManager pod as Flink's Kubernetes
//     application entry point, whose native resource manager creates the
//     TaskManager pods, and each TaskManager pod as a Flink TaskManager JVM
//     (node_native.go), with the
//     configuration of the mounted config.yaml, the container's env, and
//     the ServiceAccount's credentials as EKS delivers them (IRSA's env
//     from its role annotation; EKS Pod Identity's agent URI and token
//     when NodeOptions.PodIdentity names an association); writes the pod's status (Running, Ready once the REST
//     API answers /config, as the pod's startupProbe asks); on a pod's
//     deletion stops the processes and removes the pod, as a kubelet
//     confirms a graceful deletion; a pod whose ConfigMap is not there yet
//     waits (ContainerCreating), as the kubelet waits for a volume; a pod
//     that fails to start gets the waiting reason CrashLoopBackOff and is
//     started again with back-off; a pod whose image the node does not
//     have (nodeHasImage: anything but Flink 2.2.1's images, which the
//     runner's distribution stands in for) waits in ImagePullBackOff, as
//     the kubelet reports an image it cannot pull, and never runs;
//   - as the Service's DNS name: gives each pod a loopback address of its
//     own (127.x.y.z, a pod IP) and writes <service>.<namespace> (and
//     .svc, .svc.cluster.local) of every Service selecting it into a hosts
//     file, which the operator's JVM reads (jdk.net.hosts.file).
//
//
// A TaskManager pod (restartPolicy Never, set by Flink's
// InitTaskManagerDecorator) is not restarted: when its process ends, the
// pod is terminated, and Flink's resource manager deletes it and asks for
// another (KubernetesResourceManagerDriver.onPodTerminated).

// errVolumeNotReady: a volume the pod mounts does not exist yet.
var errVolumeNotReady = errors.New("volume not ready")

// NodeName is the node the stand-in's pods are bound to (spec.nodeName).
const NodeName = "flinkstate-node"

// jobManagerSelector selects the JobManager Deployments and pods the
// operator's Flink client creates (Flink 1.20 KubernetesUtils
// .getJobManagerSelectors / getCommonLabels; Constants.LABEL_TYPE_NATIVE_TYPE).
const jobManagerSelector = "component=jobmanager,type=flink-native-kubernetes"

// flinkSelector selects every Deployment and pod of a Flink cluster the
// node runs: those of Flink's native integration, and those the operator's
// standalone mode creates (flink-kubernetes-standalone
// StandaloneKubernetesUtils: type=flink-standalone-kubernetes, a JobManager
// Deployment <name> and a TaskManager Deployment <name>-taskmanager,
// component jobmanager and taskmanager).
const flinkSelector = "type in (flink-native-kubernetes,flink-standalone-kubernetes)"

// standaloneType is the type label of the operator's standalone mode.
const standaloneType = "flink-standalone-kubernetes"

// mainContainer is the container Flink's pod decorators build
// (Constants.MAIN_CONTAINER_NAME).
const mainContainer = "flink-main-container"

// NodeOptions configure the node stand-in.
type NodeOptions struct {
	// Namespaces whose JobManager Deployments it runs.
	Namespaces []string
	// HostsFile is written with the Services' names (see RealOperatorOptions.HostsFile).
	HostsFile string
	// Logf reports what it starts and stops.
	Logf func(string, ...any)
	// Poll is how often it looks (default 300 ms).
	Poll time.Duration
	// PodIdentity, when set, is the cluster's EKS Pod Identity
	// associations: the role associated with a namespace's ServiceAccount,
	// "" for none (see podIdentityEnv).
	PodIdentity func(ctx context.Context, namespace, serviceAccount string) (roleARN string, err error)
}

// Node is a running node stand-in.
type Node struct {
	dist FlinkDist
	env  Bed
	dyn  dynamic.Interface
	o    NodeOptions
	dir  string

	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	pods    map[types.UID]*nodePod
	history map[string][]*FlinkCluster // "<ns>/<deployment>" -> clusters, oldest first
	hosts   string
	agents  map[string]*PodIdentityAgent // role ARN -> the Pod Identity Agent stand-in serving it

	// podLogs: the log files of each pod's container runs, oldest first
	// (the last two; recordLog), served by kubelet (kubelet.go).
	podLogs map[types.UID][]string
	kubelet *Kubelet

	trustOnce sync.Once // the pods' trust store (podJVMOpts)
	trust     []string
	trustErr  error
}

// nodePod is a pod the node runs.
type nodePod struct {
	// role is the pod's Flink process (podRole); deployment is the
	// JobManager Deployment that owns it (a TaskManager pod's too:
	// Fabric8FlinkKubeClient.createTaskManagerPod sets it as the owner).
	role                 string
	ns, name, deployment string
	uid                  types.UID
	addr                 string
	cluster              *FlinkCluster
	starting             bool
	failures             int
	retryAt              time.Time
	lastErr              string
	statusWritten        string
	// pullBackOff is the image the node does not have (nodeHasImage):
	// the container waits in ImagePullBackOff and nothing runs.
	pullBackOff string
	// standalone: a pod of the operator's standalone mode (standaloneType).
	standalone bool
	// once: restartPolicy Never (Flink's TaskManager pods): the process
	// runs once; terminated: it ended.
	once, terminated bool
}

// StartNode starts the node stand-in for the given namespaces. It writes
// the hosts file at once (the operator JVM may start before any pod runs).
func StartNode(ctx context.Context, dist FlinkDist, env Bed, dyn dynamic.Interface, o NodeOptions) (*Node, error) {
	if o.Poll == 0 {
		o.Poll = 300 * time.Millisecond
	}
	if err := ensurePodTemplateDir(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "flinkstate-node-")
	if err != nil {
		return nil, err
	}
	n := &Node{dist: dist, env: env, dyn: dyn, o: o, dir: dir, pods: map[types.UID]*nodePod{}, history: map[string][]*FlinkCluster{}}
	if err := n.writeHosts(); err != nil {
		return nil, err
	}
	if err := n.serveKubelet(ctx); err != nil {
		return nil, err
	}
	ctx, n.cancel = context.WithCancel(ctx)
	n.done = make(chan struct{})
	go func() {
		defer close(n.done)
		for {
			for _, ns := range o.Namespaces {
				n.sync(ctx, ns)
			}
			if err := n.writeHosts(); err != nil {
				n.logf("node: hosts file: %v", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(o.Poll):
			}
		}
	}()
	return n, nil
}

// Stop ends the node and every Flink process it runs (their folders are
// removed; LogTail them before).
func (n *Node) Stop() {
	if n == nil {
		return
	}
	n.cancel()
	<-n.done
	n.kubelet.Close()
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, p := range n.pods {
		if p.cluster != nil {
			p.cluster.Stop()
		}
	}
	for _, cs := range n.history {
		for _, c := range cs {
			c.Remove()
		}
	}
	for _, a := range n.agents {
		a.Close()
	}
	n.pods, n.history, n.agents = map[types.UID]*nodePod{}, map[string][]*FlinkCluster{}, nil
	_ = os.RemoveAll(n.dir)
}

// Clusters are the Flink clusters the node ran for a JobManager Deployment
// (named as the FlinkDeployment), oldest first; the last is the current
// one while a pod runs. Stopped ones keep their logs until Stop.
func (n *Node) Clusters(ns, name string) []*FlinkCluster {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]*FlinkCluster(nil), n.history[ns+"/"+name]...)
}

// Running is how many JobManager pods' processes run now.
func (n *Node) Running() int {
	return n.running(roleJobManager)
}

// TaskManagersRunning is how many TaskManager pods' processes run now.
func (n *Node) TaskManagersRunning() int {
	return n.running(roleTaskManager)
}

func (n *Node) running(role string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	r := 0
	for _, p := range n.pods {
		if p.role == role && p.cluster != nil && !p.starting && p.cluster.alive() {
			r++
		}
	}
	return r
}

// LogTail is the tail of every cluster's logs, for a failed test.
func (n *Node) LogTail(lines int) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var b strings.Builder
	for k, cs := range n.history {
		for i, c := range cs {
			fmt.Fprintf(&b, "=== %s #%d (%s)\n%s", k, i, c.RESTURL, c.LogTail(lines))
		}
	}
	return b.String()
}

func (n *Node) logf(format string, args ...any) {
	if n.o.Logf != nil {
		n.o.Logf(format, args...)
	}
}

var (
	deploymentsGVR = appsv1.SchemeGroupVersion.WithResource("deployments")
	podsGVR        = corev1.SchemeGroupVersion.WithResource("pods")
	servicesGVR    = corev1.SchemeGroupVersion.WithResource("services")
	configMapsGVR  = corev1.SchemeGroupVersion.WithResource("configmaps")
	accountsGVR    = corev1.SchemeGroupVersion.WithResource("serviceaccounts")
)

// sync is one pass over a namespace: the deployment controller's part,
// then the kubelet's.
func (n *Node) sync(ctx context.Context, ns string) {
	deps, err := n.dyn.Resource(deploymentsGVR).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: flinkSelector})
	if err != nil {
		return
	}
	pods, err := n.dyn.Resource(podsGVR).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: flinkSelector})
	if err != nil {
		return
	}
	for i := range deps.Items {
		n.syncDeployment(ctx, &deps.Items[i], pods.Items)
	}
	seen := map[types.UID]bool{}
	for i := range pods.Items {
		p := &pods.Items[i]
		nodeName, _, _ := unstructured.NestedString(p.Object, "spec", "nodeName")
		if nodeName == "" && p.GetDeletionTimestamp() == nil {
			if err := n.bindPod(ctx, p); err != nil {
				n.logf("node: binding pod %s/%s: %v", ns, p.GetName(), err)
			}
			continue // runs from the next pass, bound
		}
		if nodeName != NodeName {
			continue
		}
		seen[p.GetUID()] = true
		n.syncPod(ctx, p)
	}
	// Pods removed without a graceful deletion (force-deleted): their
	// processes end too.
	n.mu.Lock()
	var gone []*nodePod
	for uid, p := range n.pods {
		if p.ns == ns && !seen[uid] {
			gone = append(gone, p)
			delete(n.pods, uid)
		}
	}
	n.mu.Unlock()
	for _, p := range gone {
		n.stopPod(p)
	}
}

// ownedBy reports whether obj has owner uid.
func ownedBy(obj *unstructured.Unstructured, uid types.UID) bool {
	for _, r := range obj.GetOwnerReferences() {
		if r.UID == uid {
			return true
		}
	}
	return false
}

// syncDeployment keeps the Deployment's pods and writes its status, as
// the deployment and replica set controllers do (k8s.io/kubernetes
// pkg/controller/deployment and replicaset, v1.34: a pod is available once
// Ready for minReadySeconds, 0 here; Available is True when
// availableReplicas >= replicas - maxUnavailable, MinimumReplicasAvailable).
func (n *Node) syncDeployment(ctx context.Context, dep *unstructured.Unstructured, pods []unstructured.Unstructured) {
	// The Deployment's pods: those it owns that its selector selects (a
	// JobManager Deployment also owns the TaskManager pods of Flink's
	// native resource manager, which its selector does not select).
	sel, _, _ := unstructured.NestedStringMap(dep.Object, "spec", "selector", "matchLabels")
	var owned []*unstructured.Unstructured
	for i := range pods {
		if ownedBy(&pods[i], dep.GetUID()) && pods[i].GetDeletionTimestamp() == nil && hasLabels(&pods[i], sel) {
			owned = append(owned, &pods[i])
		}
	}
	want, found, _ := unstructured.NestedInt64(dep.Object, "spec", "replicas")
	if !found {
		want = 1
	}
	if want > 1 && dep.GetLabels()["component"] != roleTaskManager {
		want = 1 // one JobManager runs; standby replicas are not modelled
	}
	if dep.GetDeletionTimestamp() != nil {
		// The garbage collector deletes a deleted Deployment's pods; the
		// controllers stop managing it.
		return
	}
	var failure string
	switch {
	case int64(len(owned)) < want:
		if p, err := n.createPod(ctx, dep); err != nil {
			failure = err.Error()
		} else {
			owned = append(owned, p)
		}
	case int64(len(owned)) > want:
		for _, p := range owned[want:] {
			_ = n.dyn.Resource(podsGVR).Namespace(p.GetNamespace()).Delete(ctx, p.GetName(), metav1.DeleteOptions{})
		}
		owned = owned[:want]
	}
	ready := int64(0)
	for _, p := range owned {
		if podReady(p) {
			ready++
		}
	}
	n.writeDeploymentStatus(ctx, dep, int64(len(owned)), ready, want, failure)
}

// hasLabels reports whether obj carries every label of sel.
func hasLabels(obj *unstructured.Unstructured, sel map[string]string) bool {
	for k, v := range sel {
		if obj.GetLabels()[k] != v {
			return false
		}
	}
	return true
}

func podReady(p *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(p.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Ready" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// createPod creates the Deployment's pod from its template, bound to this
// node, owned by the Deployment (in a cluster by its ReplicaSet, which the
// Deployment owns; either way the garbage collector removes it with the
// Deployment).
func (n *Node) createPod(ctx context.Context, dep *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	meta, _, _ := unstructured.NestedMap(dep.Object, "spec", "template", "metadata")
	spec, _, _ := unstructured.NestedMap(dep.Object, "spec", "template", "spec")
	if spec == nil {
		return nil, errors.New("the Deployment has no pod template")
	}
	spec["nodeName"] = NodeName
	if meta == nil {
		meta = map[string]any{}
	}
	// A name as the replica set controller's generateName gives one
	// (<name>-<5 random characters>; the test bed's API server would do
	// the same for generateName, set here so the name is known at once).
	meta["name"] = dep.GetName() + "-" + randomHex(3)[:5]
	meta["namespace"] = dep.GetNamespace()
	meta["ownerReferences"] = []any{map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment", "name": dep.GetName(), "uid": string(dep.GetUID()),
		"controller": true, "blockOwnerDeletion": true,
	}}
	pod := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}}
	return n.dyn.Resource(podsGVR).Namespace(dep.GetNamespace()).Create(ctx, pod, metav1.CreateOptions{})
}

// writeDeploymentStatus writes what the deployment controller would, when
// it changed.
func (n *Node) writeDeploymentStatus(ctx context.Context, dep *unstructured.Unstructured, replicas, ready, want int64, failure string) {
	now := metav1.Now().UTC().Format(time.RFC3339)
	available := "False"
	availReason, availMsg := "MinimumReplicasUnavailable", "Deployment does not have minimum availability."
	if ready >= want {
		available, availReason, availMsg = "True", "MinimumReplicasAvailable", "Deployment has minimum availability."
	}
	progReason, progMsg := "ReplicaSetUpdated", fmt.Sprintf("ReplicaSet %q is progressing.", dep.GetName())
	if ready >= want {
		progReason, progMsg = "NewReplicaSetAvailable", fmt.Sprintf("ReplicaSet %q has successfully progressed.", dep.GetName())
	}
	old, _, _ := unstructured.NestedMap(dep.Object, "status")
	if conds, _, _ := unstructured.NestedSlice(old, "conditions"); len(conds) == 0 {
		// The first sync: the deployment controller syncs a new Deployment
		// as soon as its informer sees it, so on a cluster its first
		// conditions carry the second it was created in; the operator reads
		// exactly that (FlinkUtils.jmPodNeverStarted: Available False with
		// lastTransitionTime equal to creationTimestamp). The node's first
		// pass can come a poll later: the creation second is written.
		now = dep.GetCreationTimestamp().UTC().Format(time.RFC3339)
	}
	since := func(typ, status string) string {
		conds, _, _ := unstructured.NestedSlice(old, "conditions")
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && m["type"] == typ && m["status"] == status {
				if t, ok := m["lastTransitionTime"].(string); ok {
					return t
				}
			}
		}
		return now
	}
	conds := []any{
		map[string]any{"type": "Available", "status": available, "reason": availReason, "message": availMsg,
			"lastUpdateTime": since("Available", available), "lastTransitionTime": since("Available", available)},
		map[string]any{"type": "Progressing", "status": "True", "reason": progReason, "message": progMsg,
			"lastUpdateTime": since("Progressing", "True"), "lastTransitionTime": since("Progressing", "True")},
	}
	if failure != "" {
		// The replica set controller's condition for a pod the API server
		// refused (pkg/controller/replicaset: FailedCreate), which the
		// deployment controller copies and the operator's observer reads
		// (AbstractFlinkDeploymentObserver.checkFailedCreate).
		conds = append(conds, map[string]any{"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate", "message": failure,
			"lastUpdateTime": now, "lastTransitionTime": since("ReplicaFailure", "True")})
	}
	status := map[string]any{
		"observedGeneration": dep.GetGeneration(),
		"replicas":           replicas,
		"updatedReplicas":    replicas,
		"readyReplicas":      ready,
		"availableReplicas":  ready,
		"conditions":         conds,
	}
	if replicas-ready > 0 {
		status["unavailableReplicas"] = replicas - ready
	}
	// The API server drops zero counts (omitempty): compare without them.
	same := func(a, b map[string]any) bool {
		strip := func(m map[string]any) string {
			c := map[string]any{}
			for k, v := range m {
				if k == "conditions" {
					var cs []string
					vs, _ := v.([]any)
					for _, x := range vs {
						if cm, ok := x.(map[string]any); ok {
							cs = append(cs, fmt.Sprint(cm["type"], cm["status"], cm["reason"], cm["message"]))
						}
					}
					sort.Strings(cs)
					c[k] = cs
					continue
				}
				if fmt.Sprint(v) != "0" {
					c[k] = fmt.Sprint(v)
				}
			}
			return fmt.Sprint(c)
		}
		return strip(a) == strip(b)
	}
	if same(old, status) {
		return
	}
	obj := dep.DeepCopy()
	obj.Object["status"] = status
	if _, err := n.dyn.Resource(deploymentsGVR).Namespace(dep.GetNamespace()).UpdateStatus(ctx, obj, metav1.UpdateOptions{}); err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
		n.logf("node: status of Deployment %s/%s: %v", dep.GetNamespace(), dep.GetName(), err)
	}
}

// syncPod is the kubelet's part for one pod bound to this node.
func (n *Node) syncPod(ctx context.Context, pod *unstructured.Unstructured) {
	n.mu.Lock()
	p := n.pods[pod.GetUID()]
	if p == nil {
		owner := ""
		for _, r := range pod.GetOwnerReferences() {
			if r.Kind == "Deployment" {
				owner = r.Name
			}
		}
		restart, _, _ := unstructured.NestedString(pod.Object, "spec", "restartPolicy")
		p = &nodePod{role: podRole(pod), ns: pod.GetNamespace(), name: pod.GetName(), deployment: owner, uid: pod.GetUID(),
			standalone: pod.GetLabels()["type"] == standaloneType, once: restart == "Never"}
		n.pods[pod.GetUID()] = p
	}
	n.mu.Unlock()

	if pod.GetDeletionTimestamp() != nil {
		// A graceful deletion: the kubelet stops the containers, then
		// removes the pod (a deletion with grace period 0).
		n.mu.Lock()
		starting := p.starting
		if !starting {
			delete(n.pods, p.uid)
		}
		n.mu.Unlock()
		if starting {
			return // stopped once its start returns
		}
		n.stopPod(p)
		zero := int64(0)
		uid := p.uid
		_ = n.dyn.Resource(podsGVR).Namespace(p.ns).Delete(ctx, p.name, metav1.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &uid}})
		return
	}

	if image := mainImage(pod); !nodeHasImage(image) {
		n.mu.Lock()
		p.pullBackOff = image
		n.mu.Unlock()
		n.writePodStatus(ctx, pod, p)
		return
	}

	n.mu.Lock()
	var start bool
	if p.once {
		start = p.startsOnce(n)
	} else {
		start = p.startsAgain()
	}
	if start {
		p.starting = true
	}
	n.mu.Unlock()
	if start {
		go n.startPod(ctx, pod.DeepCopy(), p)
	}
	n.writePodStatus(ctx, pod, p)
}

// startsAgain reports whether a pod's processes start now (n.mu held): at
// first, and after they ended, restarted after the back-off, as
// restartPolicy Always (a Deployment's pods) asks.
func (p *nodePod) startsAgain() bool {
	idle := !p.starting && (p.cluster == nil || !p.cluster.alive()) && time.Now().After(p.retryAt)
	if idle && p.cluster != nil {
		// The processes ended (a container that exited).
		p.failures++
		p.lastErr = "the Flink processes exited"
		p.cluster.Stop()
		p.cluster = nil
		p.retryAt = time.Now().Add(backoff(p.failures))
		return false
	}
	return idle
}

// startsOnce reports whether a pod's process starts now (n.mu held): once;
// when it ends (or cannot start) the pod is terminated (restartPolicy
// Never, which Flink's InitTaskManagerDecorator sets).
func (p *nodePod) startsOnce(n *Node) bool {
	if p.cluster != nil && !p.starting && !p.cluster.alive() {
		p.cluster.Stop()
		p.cluster, p.terminated, p.lastErr = nil, true, "the TaskManager process exited"
		n.logf("node: TaskManager pod %s/%s: its process exited", p.ns, p.name)
	}
	return !p.starting && p.cluster == nil && !p.terminated && time.Now().After(p.retryAt)
}

// podMainContainer is the pod's Flink container (mainContainer), nil when
// it has none.
func podMainContainer(pod *unstructured.Unstructured) map[string]any {
	containers, _, _ := unstructured.NestedSlice(pod.Object, "spec", "containers")
	for _, c := range containers {
		if m, ok := c.(map[string]any); ok && m["name"] == mainContainer {
			return m
		}
	}
	return nil
}

// mainImage is the image of the pod's Flink container, or of its first
// container when none has that name.
func mainImage(pod *unstructured.Unstructured) string {
	m := podMainContainer(pod)
	if m == nil {
		containers, _, _ := unstructured.NestedSlice(pod.Object, "spec", "containers")
		if len(containers) > 0 {
			m, _ = containers[0].(map[string]any)
		}
	}
	image, _ := m["image"].(string)
	return image
}

// nodeHasImage is the node's rule for which images it can "pull": those
// the runner's Flink 2.2.1 distribution stands in for, the official
// image's Flink 2.2.1 tags (repository flink, from any registry or path
// ending in /flink; tag 2.2.1 or 2.2.1-<variant>, e.g. 2.2.1-java17,
// 2.2.1-java21, and the demo's 2.2.1-java17-next), and the 2.2 line's
// floating tags 2.2 and 2.2-<variant>, which name the newest 2.2.x release,
// 2.2.1 (the operator's examples use flink:2.2). Anything else (another
// Flink version, another repository, no tag, a digest) is an image this
// node cannot pull: the pod waits in ImagePullBackOff, which is how a test
// makes a job that cannot run (e.g. image = "flink:no-such-tag").
func nodeHasImage(image string) bool {
	repo, tag, ok := strings.Cut(image[strings.LastIndex(image, "/")+1:], ":")
	if !ok || strings.Contains(image, "@") {
		return false
	}
	if repo != "flink" {
		return false
	}
	return tag == "2.2.1" || strings.HasPrefix(tag, "2.2.1-") || tag == "2.2" || strings.HasPrefix(tag, "2.2-")
}

// backoff is the kubelet's crash loop back-off: 10 s doubled per restart,
// at most 5 minutes (kubelet MaxContainerBackOff).
func backoff(failures int) time.Duration {
	d := 10 * time.Second
	for i := 1; i < failures && d < 5*time.Minute; i++ {
		d *= 2
	}
	return min(d, 5*time.Minute)
}

// startPod runs the pod's processes; it returns when the REST API answers
// or the start failed.
func (n *Node) startPod(ctx context.Context, pod *unstructured.Unstructured, p *nodePod) {
	c, err := n.runPod(ctx, pod, p)
	n.mu.Lock()
	p.starting = false
	_, still := n.pods[p.uid]
	if errors.Is(err, errVolumeNotReady) || errors.Is(err, errWaitJobManager) {
		// Not a container failure: tried again at the next pass.
		p.retryAt = time.Now().Add(time.Second)
		n.mu.Unlock()
		return
	}
	if err != nil {
		p.failures++
		p.lastErr = err.Error()
		p.retryAt = time.Now().Add(backoff(p.failures))
		p.terminated = p.once
	} else {
		p.cluster, p.lastErr = c, ""
	}
	n.mu.Unlock()
	if err != nil {
		next := "restart in " + backoff(p.failures).String()
		if p.once {
			next = "terminated"
		}
		n.logf("node: pod %s/%s failed to start (%s): %v", p.ns, p.name, next, err)
		return
	}
	if p.role == roleTaskManager {
		n.logf("node: TaskManager pod %s/%s of %s runs", p.ns, p.name, pod.GetLabels()["app"])
	} else {
		// (tools/demo.sh reads "Flink of <ns>/<name>: REST API <url>,".)
		n.logf("node: Flink of %s/%s: REST API %s, pod %s (the operator calls %s-rest.%s:%d), logs %s",
			p.ns, p.deployment, c.RESTURL, p.name, p.deployment, p.ns, restPort(c.Configuration), filepath.Join(c.Dir, "log"))
	}
	if !still || ctx.Err() != nil {
		// Deleted while it started.
		c.Stop()
	}
}

// runPod starts the pod's Flink processes.
func (n *Node) runPod(ctx context.Context, pod *unstructured.Unstructured, p *nodePod) (*FlinkCluster, error) {
	if p.addr == "" {
		addr, err := podAddress()
		if err != nil {
			return nil, err
		}
		n.mu.Lock()
		p.addr = addr
		n.mu.Unlock()
	}
	job, main, err := n.podJob(ctx, pod, p.addr)
	if err != nil {
		return nil, err
	}
	// The Services' names resolve to the new address before Flink starts.
	if err := n.writeHosts(); err != nil {
		return nil, err
	}
	if p.role == roleTaskManager {
		return n.startTaskManagerPod(ctx, pod, main, job, p.addr, p.standalone)
	}
	c, err := n.startJobManagerPod(ctx, pod, main, job, p.addr, p.standalone)
	if err != nil {
		return nil, err
	}
	n.mu.Lock()
	key := p.ns + "/" + p.deployment
	n.history[key] = append(n.history[key], c)
	n.mu.Unlock()
	return c, nil
}

// podJob is what the pod would run: the mounted config.yaml as Flink reads
// it, the container's env, the ServiceAccount's credentials.
func (n *Node) podJob(ctx context.Context, pod *unstructured.Unstructured, addr string) (FlinkJob, map[string]any, error) {
	ns := pod.GetNamespace()
	main := podMainContainer(pod)
	if main == nil {
		return FlinkJob{}, nil, fmt.Errorf("pod %s/%s has no %s container", ns, pod.GetName(), mainContainer)
	}
	// The ConfigMap mounted where the image's Flink reads its configuration
	// (Flink's FlinkConfMountDecorator: /opt/flink/conf, volume
	// flink-config-volume, ConfigMap flink-config-<cluster-id>).
	cmName := mountedConfigMap(pod, main, "/opt/flink/conf")
	if cmName == "" {
		return FlinkJob{}, nil, fmt.Errorf("pod %s/%s mounts no ConfigMap at /opt/flink/conf", ns, pod.GetName())
	}
	cm, err := n.dyn.Resource(configMapsGVR).Namespace(ns).Get(ctx, cmName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		// Flink's KubernetesClusterDescriptor creates the ConfigMaps after
		// the Deployment (they are owned by it): the kubelet keeps such a
		// pod in ContainerCreating and mounts the volume once it exists.
		return FlinkJob{}, nil, fmt.Errorf("%w: ConfigMap %s of pod %s/%s", errVolumeNotReady, cmName, ns, pod.GetName())
	}
	if err != nil {
		return FlinkJob{}, nil, fmt.Errorf("ConfigMap %s of pod %s/%s: %w", cmName, ns, pod.GetName(), err)
	}
	data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
	text, ok := data["config.yaml"] // Flink 2.x (GlobalConfiguration.FLINK_CONF_FILENAME)
	if !ok {
		return FlinkJob{}, nil, fmt.Errorf("ConfigMap %s has no config.yaml (Flink 2.2 reads only that file)", cmName)
	}
	conf, args, err := readFlinkConfYAML(text)
	if err != nil {
		return FlinkJob{}, nil, fmt.Errorf("ConfigMap %s config.yaml: %w", cmName, err)
	}
	job := FlinkJob{Configuration: conf, Args: args, Namespace: conf["kubernetes.namespace"], Name: conf["kubernetes.cluster-id"]}
	if p, err := strconv.Atoi(conf["parallelism.default"]); err == nil {
		job.Parallelism = p
	}
	env, _, _ := unstructured.NestedSlice(main, "env")
	for _, e := range env {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		name, _ := m["name"].(string)
		value, hasValue := m["value"].(string)
		if !hasValue {
			path, _, _ := unstructured.NestedString(m, "valueFrom", "fieldRef", "fieldPath")
			if value, hasValue = fieldRefValue(pod, path, addr); !hasValue {
				continue // other sources (secrets, resources) are not used by Flink's decorators
			}
		}
		if name == opmodel.PluginsEnv {
			job.PluginJar = value
		}
		job.Env = append(job.Env, name+"="+value)
	}
	sa, _, _ := unstructured.NestedString(pod.Object, "spec", "serviceAccountName")
	if sa == "" {
		sa = "default"
	}
	creds, err := n.irsaEnv(ctx, ns, sa, pod.GetName())
	if err != nil {
		return FlinkJob{}, nil, err
	}
	job.Env = append(job.Env, creds...)
	if creds, err = n.podIdentityEnv(ctx, ns, sa, pod.GetName()); err != nil {
		return FlinkJob{}, nil, err
	}
	job.Env = append(job.Env, creds...)
	return job, main, nil
}

// irsaEnv is what EKS's pod identity webhook injects into a pod of a
// ServiceAccount annotated with eks.amazonaws.com/role-arn (see IRSAEnv);
// nothing for one without (its pods get no AWS credentials).
func (n *Node) irsaEnv(ctx context.Context, ns, sa, pod string) ([]string, error) {
	obj, err := n.dyn.Resource(accountsGVR).Namespace(ns).Get(ctx, sa, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("service account %s/%s: %w", ns, sa, err)
	}
	role := obj.GetAnnotations()["eks.amazonaws.com/role-arn"]
	if role == "" {
		return nil, nil
	}
	dir := filepath.Join(n.dir, ns, pod)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return IRSAEnv(dir, n.env, role)
}

// readFlinkConfYAML reads a config.yaml as Flink 2.2 does
// (YamlParserUtils / GlobalConfiguration.loadYAMLResource: nested maps
// flattened with ".", lists as Flink's list strings); the program
// arguments (ApplicationConfiguration.APPLICATION_ARGS) come back apart,
// as the runner passes them on the command line.
func readFlinkConfYAML(text string) (map[string]string, []string, error) {
	var raw map[string]any
	if err := yaml.Unmarshal([]byte(text), &raw); err != nil {
		return nil, nil, err
	}
	var args []string
	if app, ok := raw["$internal"].(map[string]any); ok {
		if a, ok := app["application"].(map[string]any); ok {
			if list, ok := a["program-args"].([]any); ok {
				for _, x := range list {
					args = append(args, opmodel.AsText(x))
				}
				delete(a, "program-args")
			}
		}
	}
	return opmodel.FlatConf(raw), args, nil
}

// stopPod ends a pod's processes.
func (n *Node) stopPod(p *nodePod) {
	n.mu.Lock()
	c := p.cluster
	p.cluster = nil
	n.mu.Unlock()
	if c != nil {
		c.Stop()
		n.logf("node: pod %s/%s stopped", p.ns, p.name)
	}
}

// writePodStatus writes the pod's status as the kubelet does, when it changed.
func (n *Node) writePodStatus(ctx context.Context, pod *unstructured.Unstructured, p *nodePod) {
	n.mu.Lock()
	running := p.cluster != nil && !p.starting
	addr, failures, lastErr, written, pull, terminated := p.addr, p.failures, p.lastErr, p.statusWritten, p.pullBackOff, p.terminated
	n.mu.Unlock()
	image := mainImage(pod)
	key := fmt.Sprint(running, addr, failures, lastErr != "", pull, terminated)
	if key == written {
		return
	}
	now := metav1.Now().UTC().Format(time.RFC3339)
	ready := "False"
	state := map[string]any{"waiting": map[string]any{"reason": "ContainerCreating"}}
	switch {
	case pull != "":
		// The kubelet's message for an image it is backing off pulling
		// (k8s.io/kubernetes v1.34 pkg/kubelet/images/image_manager.go,
		// "Back-off pulling image %q"; the reason ErrImagePullBackOff,
		// "ImagePullBackOff"), another of the reasons the operator's
		// observer fails a deployment on and forwards as an event
		// (DeploymentFailedException.CONTAINER_ERROR_REASONS). Nothing was
		// pulled here, so no earlier pull error is appended.
		state = map[string]any{"waiting": map[string]any{"reason": "ImagePullBackOff",
			"message": fmt.Sprintf("Back-off pulling image %q", pull)}}
	case terminated:
		// A container of a pod with restartPolicy Never that ended: the
		// kubelet reports it terminated and the pod Failed (Flink's
		// KubernetesPod.isTerminated reads either). The node does not
		// keep the JVM's exit code (it reaps its processes elsewhere), so
		// it reports the runtime's generic failure.
		state = map[string]any{"terminated": map[string]any{"exitCode": int64(1), "reason": "Error",
			"message": firstLines(lastErr, 3), "finishedAt": now}}
	case running:
		ready = "True"
		state = map[string]any{"running": map[string]any{"startedAt": now}}
	case lastErr != "":
		// What the kubelet reports for a container that keeps exiting
		// (kubelet images/ and container runtime manager: CrashLoopBackOff),
		// one of the reasons the operator's observer fails a deployment on
		// (DeploymentFailedException.CONTAINER_ERROR_REASONS).
		state = map[string]any{"waiting": map[string]any{"reason": "CrashLoopBackOff",
			"message": "back-off restarting failed container " + mainContainer + ": " + firstLines(lastErr, 3)}}
	}
	phase := "Pending"
	switch {
	case terminated:
		phase = "Failed"
	case pull == "" && (running || lastErr != ""):
		phase = "Running"
	}
	status := map[string]any{
		"phase":     phase,
		"hostIP":    "127.0.0.1",
		"hostIPs":   []any{map[string]any{"ip": "127.0.0.1"}},
		"startTime": pod.GetCreationTimestamp().UTC().Format(time.RFC3339),
		"conditions": []any{
			map[string]any{"type": "PodScheduled", "status": "True", "lastTransitionTime": now},
			map[string]any{"type": "Initialized", "status": "True", "lastTransitionTime": now},
			map[string]any{"type": "ContainersReady", "status": ready, "lastTransitionTime": now},
			map[string]any{"type": "Ready", "status": ready, "lastTransitionTime": now},
		},
		"containerStatuses": []any{map[string]any{
			"name": mainContainer, "image": image, "imageID": "", "ready": running, "started": running,
			"restartCount": int64(failures), "state": state,
		}},
	}
	if addr != "" {
		status["podIP"] = addr
		status["podIPs"] = []any{map[string]any{"ip": addr}}
	}
	obj := pod.DeepCopy()
	obj.Object["status"] = status
	if _, err := n.dyn.Resource(podsGVR).Namespace(pod.GetNamespace()).UpdateStatus(ctx, obj, metav1.UpdateOptions{}); err != nil {
		if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			n.logf("node: status of pod %s/%s: %v", pod.GetNamespace(), pod.GetName(), err)
		}
		return
	}
	n.mu.Lock()
	p.statusWritten = key
	n.mu.Unlock()
}

// writeHosts writes the Services' names for the pods that have an address
// (what cluster DNS answers for a Service, here the pod's own address
// instead of a cluster IP: there is no kube-proxy), when they changed.
func (n *Node) writeHosts() error {
	host, _ := os.Hostname()
	// The JVM then resolves only what the file names: this host too.
	lines := []string{"127.0.0.1 localhost " + host}
	n.mu.Lock()
	type target struct{ ns, deployment, addr string }
	var targets []target
	for _, p := range n.pods {
		if p.addr != "" && p.role == roleJobManager {
			targets = append(targets, target{p.ns, p.deployment, p.addr})
		}
	}
	n.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, t := range targets {
		svcs, err := n.dyn.Resource(servicesGVR).Namespace(t.ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + t.deployment})
		if err != nil {
			continue
		}
		for _, s := range svcs.Items {
			sel, _, _ := unstructured.NestedStringMap(s.Object, "spec", "selector")
			if sel["component"] != "jobmanager" {
				continue
			}
			name := s.GetName() + "." + t.ns
			lines = append(lines, t.addr+" "+name+" "+name+".svc "+name+".svc.cluster.local")
		}
	}
	sort.Strings(lines[1:])
	text := strings.Join(lines, "\n") + "\n"
	n.mu.Lock()
	defer n.mu.Unlock()
	if text == n.hosts {
		return nil
	}
	// The pods' JVMs read the same names, and the AWS names the test bed
	// serves (awsNameOverrides: their hosts file replaces the resolver).
	podText := text
	if n.env.STSAddress != "" {
		podText += awsHostsLine(n.env) + "\n"
	}
	for file, t := range map[string]string{n.o.HostsFile: text, n.podHosts(): podText} {
		if file == "" {
			continue
		}
		if err := os.WriteFile(file+".tmp", []byte(t), 0o644); err != nil {
			return err
		}
		if err := os.Rename(file+".tmp", file); err != nil {
			return err
		}
	}
	n.hosts = text
	return nil
}

// podAddress picks a loopback address of its own for a pod (Linux routes
// all of 127.0.0.0/8 to lo; other systems have 127.0.0.1 only, and the node
// runs on Linux only): random in 127.64.0.0/10, checked free on the ports a
// JobManager pod uses.
func podAddress() (string, error) {
	for range 50 {
		addr := fmt.Sprintf("127.%d.%d.%d", 64+rand.IntN(64), rand.IntN(256), 1+rand.IntN(254))
		free := true
		for _, port := range []int{8081, 6123, 6124, 6122} {
			l, err := net.Listen("tcp", net.JoinHostPort(addr, strconv.Itoa(port)))
			if err != nil {
				free = false
				break
			}
			_ = l.Close()
		}
		if free {
			return addr, nil
		}
	}
	return "", errors.New("no free loopback address for a pod")
}

// alive reports whether all of the cluster's processes run.
func (c *FlinkCluster) alive() bool {
	if len(c.pids) == 0 {
		return false
	}
	for _, pid := range c.pids {
		if !alive(pid) {
			return false
		}
	}
	return true
}

// Freeze makes the JobManager of the deployment's current cluster stop
// answering while its pod stays Running and Ready, as a hung JVM does
// (a long GC pause, a deadlock): its processes are stopped (SIGSTOP), so
// every REST and RPC call to it times out, and the node keeps reporting
// the pod as it was. That is what the kubelet reports for such a pod: the
// only probe on the JobManager's container is the operator's startupProbe
// (FlinkConfigBuilder with kubernetes.operator.jm-deployment.startup.probe.enabled,
// true by default; FlinkUtils.addStartupProbe: GET /config, period 1 s,
// failureThreshold Integer.MAX_VALUE; none of Flink's kubeclient
// decorators in the operator's jar adds a probe), and Kubernetes runs a
// startup probe only until it first succeeds ("Configure Liveness,
// Readiness and Startup Probes": once it succeeds the other probes take
// over; without a readiness probe the container stays Ready). The
// TaskManager pods keep running.
func (n *Node) Freeze(ns, name string) error { return n.signalJobManager(ns, name, syscall.SIGSTOP) }

// Thaw lets a frozen JobManager run again (SIGCONT).
func (n *Node) Thaw(ns, name string) error { return n.signalJobManager(ns, name, syscall.SIGCONT) }

func (n *Node) signalJobManager(ns, name string, sig syscall.Signal) error {
	cs := n.Clusters(ns, name)
	if len(cs) == 0 || !cs[len(cs)-1].alive() {
		return fmt.Errorf("node: no running cluster for %s/%s", ns, name)
	}
	// The JobManager pod's process, the leader of its own process group
	// (spawnWithEnv: Setpgid).
	if err := syscall.Kill(-cs[len(cs)-1].pids[0], sig); err != nil {
		return fmt.Errorf("node: %s to the JobManager of %s/%s: %w", sig, ns, name, err)
	}
	n.logf("node: JobManager of %s/%s: %s", ns, name, sig)
	return nil
}
