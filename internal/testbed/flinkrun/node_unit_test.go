package flinkrun

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynfake "k8s.io/client-go/dynamic/fake"
)

// The config.yaml the operator renders (Flink 1.20's standard YAML, nested)
// reads back as the flat keys Flink 2.2 sees, and the program arguments
// come apart.
func TestReadFlinkConfYAML(t *testing.T) {
	conf, args, err := readFlinkConfYAML(`
execution:
  checkpointing:
    dir: s3://b/orders/checkpoints
    interval: 2s
$internal:
  application:
    program-args: [--rate, "5"]
  pipeline:
    job-id: 777fb35a3c0b034706c77ae2fc7d4707
parallelism:
  default: '1'
kubernetes:
  cluster-id: orders
`)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"execution.checkpointing.dir": "s3://b/orders/checkpoints", "execution.checkpointing.interval": "2s",
		"$internal.pipeline.job-id": "777fb35a3c0b034706c77ae2fc7d4707", "parallelism.default": "1", "kubernetes.cluster-id": "orders",
	}
	if !reflect.DeepEqual(conf, want) {
		t.Errorf("conf %v, want %v", conf, want)
	}
	if !reflect.DeepEqual(args, []string{"--rate", "5"}) {
		t.Errorf("args %q", args)
	}
}

// A pod's loopback address has the ports a JobManager pod uses free.
func TestPodAddress(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("pod addresses need Linux, which routes all of 127.0.0.0/8 to lo")
	}
	a, err := podAddress()
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^127\.(6[4-9]|[7-9][0-9]|1[01][0-9]|12[0-7])\.\d+\.\d+$`).MatchString(a) {
		t.Fatalf("address %q outside 127.64.0.0/10", a)
	}
}

// The deployment controller's part of the node, without Flink: a pod per
// JobManager Deployment, owned by it and bound to the node, and the
// Deployment's status as the operator's observer reads it (not available
// until the pod is Ready; available after); scaled to zero, the pod goes.
func TestNode_deploymentStatusAndPods(t *testing.T) {
	ctx := context.Background()
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(k8sruntime.NewScheme(), map[schema.GroupVersionResource]string{
		deploymentsGVR: "DeploymentList", podsGVR: "PodList", servicesGVR: "ServiceList",
	})
	labels := map[string]any{"app": "orders", "component": "jobmanager", "type": "flink-native-kubernetes"}
	dep := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "orders", "namespace": "ns", "uid": "dep-uid", "generation": int64(1), "labels": labels},
		"spec": map[string]any{"replicas": int64(1), "template": map[string]any{
			"metadata": map[string]any{"labels": labels},
			"spec":     map[string]any{"containers": []any{map[string]any{"name": mainContainer, "image": "flink:2.2.1-java17"}}},
		}},
	}}
	if _, err := dyn.Resource(deploymentsGVR).Namespace("ns").Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	n := &Node{dyn: dyn, pods: map[types.UID]*nodePod{}, history: map[string][]*FlinkCluster{}}
	pass := func() (*unstructured.Unstructured, []unstructured.Unstructured) {
		t.Helper()
		d, err := dyn.Resource(deploymentsGVR).Namespace("ns").Get(ctx, "orders", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pods, err := dyn.Resource(podsGVR).Namespace("ns").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n.syncDeployment(ctx, d, pods.Items)
		d, _ = dyn.Resource(deploymentsGVR).Namespace("ns").Get(ctx, "orders", metav1.GetOptions{})
		pods, _ = dyn.Resource(podsGVR).Namespace("ns").List(ctx, metav1.ListOptions{})
		return d, pods.Items
	}
	status := func(d *unstructured.Unstructured) string {
		st, _, _ := unstructured.NestedMap(d.Object, "status")
		conds, _, _ := unstructured.NestedSlice(st, "conditions")
		avail := ""
		for _, c := range conds {
			if m := c.(map[string]any); m["type"] == "Available" {
				avail = m["status"].(string) + "/" + m["reason"].(string)
			}
		}
		return fmt.Sprintf("replicas=%v ready=%v available=%v %s", st["replicas"], st["readyReplicas"], st["availableReplicas"], avail)
	}

	d, pods := pass()
	if len(pods) != 1 {
		t.Fatalf("pods %d, want 1", len(pods))
	}
	p := pods[0]
	refs := p.GetOwnerReferences()
	node, _, _ := unstructured.NestedString(p.Object, "spec", "nodeName")
	if len(refs) != 1 || refs[0].UID != "dep-uid" || refs[0].Kind != "Deployment" || refs[0].BlockOwnerDeletion == nil || !*refs[0].BlockOwnerDeletion ||
		node != NodeName || p.GetLabels()["component"] != "jobmanager" || !strings.HasPrefix(p.GetName(), "orders-") {
		t.Fatalf("pod %s: owners %+v, node %q, labels %v", p.GetName(), refs, node, p.GetLabels())
	}
	if got, want := status(d), "replicas=1 ready=0 available=0 False/MinimumReplicasUnavailable"; got != want {
		t.Errorf("before the pod is ready: %s, want %s", got, want)
	}

	// Ready (as the kubelet part writes it once Flink's REST API answers).
	_ = unstructured.SetNestedSlice(p.Object, []any{map[string]any{"type": "Ready", "status": "True"}}, "status", "conditions")
	if _, err := dyn.Resource(podsGVR).Namespace("ns").Update(ctx, &p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if d, _ = pass(); status(d) != "replicas=1 ready=1 available=1 True/MinimumReplicasAvailable" {
		t.Errorf("once the pod is ready: %s", status(d))
	}

	// Scaled to zero, as the operator does before deleting a cluster.
	_ = unstructured.SetNestedField(d.Object, int64(0), "spec", "replicas")
	if _, err := dyn.Resource(deploymentsGVR).Namespace("ns").Update(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	d, pods = pass()
	if len(pods) != 0 {
		t.Errorf("scaled to zero, %d pods remain", len(pods))
	}
	if got := status(d); got != "replicas=0 ready=0 available=0 True/MinimumReplicasAvailable" {
		t.Errorf("scaled to zero: %s", got)
	}
	if _, pods = pass(); len(pods) != 0 {
		t.Errorf("a pass after scaling to zero created %d pods", len(pods))
	}
}

// The node "has" Flink 2.2.1's images only (the runner's distribution
// stands in for them); a pod of any other image waits in ImagePullBackOff
// with the kubelet's message, and no Flink process is started for it.
func TestNode_imageItCannotPull(t *testing.T) {
	for image, want := range map[string]bool{
		"flink:2.2.1": true, "flink:2.2.1-java17": true, "flink:2.2.1-java21": true, "flink:2.2.1-java17-next": true,
		"registry.example.com/library/flink:2.2.1-java17": true, "flink:2.2": true, "flink:2.2-java17": true,
		"flink:no-such-tag": false, "flink:2.2.0-java17": false, "flink:2.2.10": false, "flink:1.20.1": false, "flink": false,
		"flink:latest": false, "myorg/flink-job:2.2.1": false, "flink@sha256:0123": false, "": false,
	} {
		if got := nodeHasImage(image); got != want {
			t.Errorf("nodeHasImage(%q) = %t, want %t", image, got, want)
		}
	}

	ctx := context.Background()
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(k8sruntime.NewScheme(), map[schema.GroupVersionResource]string{
		deploymentsGVR: "DeploymentList", podsGVR: "PodList", servicesGVR: "ServiceList",
	})
	pod := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "orders-abcde", "namespace": "ns", "uid": "pod-uid",
			"labels": map[string]any{"app": "orders", "component": "jobmanager", "type": "flink-native-kubernetes"}},
		"spec": map[string]any{"nodeName": NodeName, "containers": []any{map[string]any{"name": mainContainer, "image": "flink:no-such-tag"}}},
	}}
	if _, err := dyn.Resource(podsGVR).Namespace("ns").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	n := &Node{dyn: dyn, pods: map[types.UID]*nodePod{}, history: map[string][]*FlinkCluster{}}
	n.syncPod(ctx, pod)
	n.syncPod(ctx, pod)
	got, err := dyn.Resource(podsGVR).Namespace("ns").Get(ctx, "orders-abcde", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	phase, _, _ := unstructured.NestedString(got.Object, "status", "phase")
	statuses, _, _ := unstructured.NestedSlice(got.Object, "status", "containerStatuses")
	if phase != "Pending" || len(statuses) != 1 {
		t.Fatalf("status %v", got.Object["status"])
	}
	waiting, _, _ := unstructured.NestedStringMap(statuses[0].(map[string]any), "state", "waiting")
	if waiting["reason"] != "ImagePullBackOff" || waiting["message"] != `Back-off pulling image "flink:no-such-tag"` || podReady(got) {
		t.Errorf("container status %v, ready %t", statuses[0], podReady(got))
	}
	if p := n.pods["pod-uid"]; p == nil || p.starting || p.cluster != nil || len(n.history) != 0 {
		t.Errorf("the node started the pod of an image it cannot pull: %+v", p)
	}
}

// The TaskManager's -D arguments come out of the bash command Flink's
// decorators write, quoting and all.
func TestContainerDynamicArgs(t *testing.T) {
	main := map[string]any{"args": []any{"bash", "-c",
		`kubernetes-taskmanager.sh -D taskmanager.memory.network.min=134217730b -D 'taskmanager.resource-id=orders-taskmanager-1-1' -Dpipeline.name="a b \"c\"" -D jobmanager.rpc.address=orders.ns`}}
	got, err := containerDynamicArgs(main)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"-Dtaskmanager.memory.network.min=134217730b", "-Dtaskmanager.resource-id=orders-taskmanager-1-1", `-Dpipeline.name=a b "c"`, "-Djobmanager.rpc.address=orders.ns"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := containerDynamicArgs(map[string]any{"args": []any{"bash", "-c", "x -D 'a=b"}}); err == nil {
		t.Error("an unterminated quote is not an error")
	}
}

// The downward API's fields Flink's decorators read: the node's name for
// _POD_NODE_ID, the pod's address for _POD_IP_ADDRESS.
func TestFieldRefValue(t *testing.T) {
	pod := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "p", "namespace": "ns"}}}
	for path, want := range map[string]string{"spec.nodeName": NodeName, "status.podIP": "127.64.1.2", "metadata.name": "p", "metadata.namespace": "ns"} {
		if got, ok := fieldRefValue(pod, path, "127.64.1.2"); !ok || got != want {
			t.Errorf("%s = %q, %v; want %q", path, got, ok, want)
		}
	}
	if _, ok := fieldRefValue(pod, "status.podIP", ""); ok {
		t.Error("status.podIP before the pod has an address")
	}
	if _, ok := fieldRefValue(pod, "metadata.labels['x']", ""); ok {
		t.Error("an unknown field has a value")
	}
}

// A TaskManager pod's log sorts by attempt and index, after the standalone
// TaskManager's.
func TestTaskManagerLogsOrder(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "log"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"taskmanager-orders-taskmanager-1-10.log", "taskmanager-orders-taskmanager-2-1.log", "taskmanager-orders-taskmanager-1-2.log"} {
		if err := os.WriteFile(filepath.Join(dir, "log", f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := (&FlinkCluster{Dir: dir}).taskManagerLogs()
	want := []string{"taskmanager.log", "taskmanager-orders-taskmanager-1-2.log", "taskmanager-orders-taskmanager-1-10.log", "taskmanager-orders-taskmanager-2-1.log"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// A standalone JobManager's container args become the entry point's:
// the counting job in place of the image's class, $(VAR) expanded from
// the container's env as Kubernetes does, the job's args kept.
func TestStandaloneJobArgs(t *testing.T) {
	main := map[string]any{"args": []any{"standalone-job", "--job-classname", "org.example.Job", "--fromSavepoint", "s3://b/sp/savepoint-1",
		"--host", "$(_POD_IP_ADDRESS)", "--rate", "$(UNSET)", "$$(kept)"}}
	got, err := standaloneJobArgs(main, []string{"_POD_IP_ADDRESS=127.64.1.2"}, "/jobs/job.jar")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"--jars", "file:///jobs/job.jar", "--job-classname", TestJobClass, "--fromSavepoint", "s3://b/sp/savepoint-1",
		"--host", "127.64.1.2", "--rate", "$(UNSET)", "$(kept)"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := standaloneJobArgs(map[string]any{"args": []any{"jobmanager"}}, nil, "/j.jar"); err == nil {
		t.Error("a session JobManager's args are taken as an application's")
	}
}

// The node runs the counting job in place of an image's class, but keeps a
// class named in the test job's own package, so that a missing one fails
// in Flink as it would in the image.
func TestNodeJobClass(t *testing.T) {
	for given, want := range map[string]string{
		"org.example.Job":                  TestJobClass,
		"":                                 TestJobClass,
		TestJobClass:                       TestJobClass,
		"org.flinkstate.testjob.NoSuchJob": "org.flinkstate.testjob.NoSuchJob",
	} {
		if got := jobClass(given); got != want {
			t.Errorf("jobClass(%q) = %q, want %q", given, got, want)
		}
	}
}
