package flinkrun

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// The kubelet's log endpoint: what the API server proxies a pods/log
// request to. kube-apiserver finds the pod's node (spec.nodeName), takes
// the node's address of the preferred type (--kubelet-preferred-address-types)
// and the port in status.daemonEndpoints.kubeletEndpoint, and asks
// GET https://<address>:<port>/containerLogs/<namespace>/<pod>/<container>
// with the PodLogOptions as query parameters (kubernetes
// pkg/registry/core/pod/strategy.go LogLocation, pkg/kubelet/client
// NodeConnectionInfoGetter), verifying the kubelet's serving certificate
// against --kubelet-certificate-authority. The kubelet answers with the
// container's output (pkg/kubelet/server/server.go getContainerLogs):
// previous=true the container's previous run, tailLines/limitBytes the end
// of it; a pod it does not run is 404, a previous run that does not exist
// 400.

// KubeletLogs finds the log file of a container's current run (previous:
// the run before it) of a pod the node runs; ok false when the node has
// no such pod, found false when it has the pod but not that run.
type KubeletLogs func(ns, pod, container string, previous bool) (file string, ok, found bool)

// Kubelet is a running log endpoint of the node stand-in.
type Kubelet struct {
	Port int
	srv  *http.Server
}

// ServeKubelet serves the kubelet's containerLogs endpoint on a loopback
// port with the given serving certificate, from logs.
func ServeKubelet(certFile, keyFile string, logs KubeletLogs) (*Kubelet, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		return nil, err
	}
	addr, ok := l.Addr().(*net.TCPAddr)
	if !ok {
		_ = l.Close()
		return nil, fmt.Errorf("kubelet stand-in: listener address %v is not TCP", l.Addr())
	}
	k := &Kubelet{Port: addr.Port}
	k.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serveContainerLogs(w, r, logs) }),
		ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = k.srv.Serve(l) }()
	return k, nil
}

// Close stops the endpoint.
func (k *Kubelet) Close() {
	if k != nil {
		_ = k.srv.Close()
	}
}

func serveContainerLogs(w http.ResponseWriter, r *http.Request, logs KubeletLogs) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/containerLogs/"), "/")
	if r.Method != http.MethodGet || !strings.HasPrefix(r.URL.Path, "/containerLogs/") || len(parts) != 3 {
		http.NotFound(w, r)
		return
	}
	ns, pod, container := parts[0], parts[1], parts[2]
	q := r.URL.Query()
	previous := q.Get("previous") == "true"
	file, ok, found := logs(ns, pod, container, previous)
	switch {
	case !ok:
		http.Error(w, fmt.Sprintf("pod %s/%s not found", ns, pod), http.StatusNotFound)
		return
	case !found && previous:
		http.Error(w, fmt.Sprintf("previous terminated container %q in pod %q not found", container, pod), http.StatusBadRequest)
		return
	case !found:
		http.Error(w, fmt.Sprintf("container %q in pod %q is waiting to start", container, pod), http.StatusBadRequest)
		return
	}
	b, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if n, err := strconv.Atoi(q.Get("tailLines")); err == nil && n >= 0 {
		b = tailLines(b, n)
	}
	if n, err := strconv.Atoi(q.Get("limitBytes")); err == nil && n >= 0 && n < len(b) {
		b = b[:n]
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write(b)
}

// tailLines is the last n lines of b.
func tailLines(b []byte, n int) []byte {
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 0 {
		return nil
	}
	return []byte(strings.Join(lines, "\n") + "\n")
}

var nodesGVR = corev1.SchemeGroupVersion.WithResource("nodes")

// RegisterNode writes the Node object the API server reads to reach the
// node's kubelet: its InternalIP (127.0.0.1) and the kubelet's port
// (status.daemonEndpoints.kubeletEndpoint.Port), as a kubelet registers its
// node (pkg/kubelet/kubelet_node_status.go registerWithAPIServer, then the
// status update). An existing Node of that name (an earlier stand-in's) is
// pointed at this endpoint.
func RegisterNode(ctx context.Context, dyn dynamic.Interface, name string, port int) error {
	node := &corev1.Node{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
		Status: corev1.NodeStatus{
			Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(port)}},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				Message: "the test bed's node stand-in", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
		},
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(node)
	if err != nil {
		return err
	}
	obj := &unstructured.Unstructured{Object: m}
	nodes := dyn.Resource(nodesGVR)
	created, err := nodes.Create(ctx, obj, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		created, err = nodes.Get(ctx, name, metav1.GetOptions{})
	}
	if err != nil {
		return err
	}
	// The status as the kubelet writes it (nodes/status): a create keeps
	// only part of it.
	created.Object["status"] = m["status"]
	_, err = nodes.UpdateStatus(ctx, created, metav1.UpdateOptions{})
	return err
}

// recordLog notes the log file of a container run of a pod the node
// starts (the pod's current run from now on; the one before becomes its
// previous run).
func (n *Node) recordLog(uid types.UID, file string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.podLogs == nil {
		n.podLogs = map[types.UID][]string{}
	}
	l := append(n.podLogs[uid], file)
	if len(l) > 2 {
		l = l[len(l)-2:]
	}
	n.podLogs[uid] = l
}

// keepLog copies the log of a run whose folder is about to be removed (a
// JobManager that failed to start) to the node's own folder, so that the
// kubelet endpoint still serves it, as a kubelet keeps an exited
// container's log.
func (n *Node) keepLog(uid types.UID, file string) {
	b, err := os.ReadFile(file)
	if err != nil {
		return
	}
	dir := filepath.Join(n.dir, "podlogs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return
	}
	kept := filepath.Join(dir, fmt.Sprintf("%s-%d.log", uid, time.Now().UnixNano()))
	if os.WriteFile(kept, b, 0o644) != nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for i, f := range n.podLogs[uid] {
		if f == file {
			n.podLogs[uid][i] = kept
		}
	}
}

// containerLog is the node's KubeletLogs.
func (n *Node) containerLog(ns, pod, container string, previous bool) (file string, ok, found bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for uid, p := range n.pods {
		if p.ns != ns || p.name != pod {
			continue
		}
		logs := n.podLogs[uid]
		i := len(logs) - 1
		if previous {
			i--
		}
		if container != mainContainer || i < 0 {
			return "", true, false
		}
		return logs[i], true, true
	}
	return "", false, false
}

// serveKubelet starts the node's kubelet endpoint and registers the node,
// when the test bed issued a kubelet certificate (Bed.KubeletCertFile; a
// test bed started before it did has none, and pods/log is not served).
func (n *Node) serveKubelet(ctx context.Context) error {
	if n.env.KubeletCertFile == "" {
		return nil
	}
	k, err := ServeKubelet(n.env.KubeletCertFile, n.env.KubeletKeyFile, n.containerLog)
	if err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := RegisterNode(rctx, n.dyn, NodeName, k.Port); err != nil {
		k.Close()
		return fmt.Errorf("node: registering Node %s: %w", NodeName, err)
	}
	n.kubelet = k
	return nil
}
