package testbed

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed/flinkrun"
)

// The node stand-in's kubelet endpoint answers the API server's pods/log
// as a kubelet does: the API server finds the Node of the pod's
// spec.nodeName, dials its InternalIP at the kubelet port, verifies the
// serving certificate (--kubelet-certificate-authority), and proxies the
// container's log; kube.JobManagerRootCause reads Flink's reason from it.
func TestNodeKubelet_podLogsThroughTheAPIServer(t *testing.T) {
	env, _ := testbedEnv(t)
	if env.KubeletCertFile == "" {
		t.Fatal("the test bed issued no kubelet serving certificate")
	}
	ctx := context.Background()
	kc, err := kube.New(kube.Config{ConfigPath: env.Kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(kc.REST)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	previous, current := filepath.Join(dir, "previous.log"), filepath.Join(dir, "current.log")
	write := func(f, s string) {
		if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(previous, "INFO starting\norg.apache.flink.util.FlinkException: Could not start.\n\tat a.B.c(B.java:1)\n"+
		"Caused by: java.lang.ClassNotFoundException: org.apache.flink.state.forst.ForStStateBackendFactory\n\tat a.B.c(B.java:1)\n")
	write(current, "INFO starting again\nINFO line two\nINFO line three\n")
	ns := "kubelet-" + randomHex(4)
	k, err := flinkrun.ServeKubelet(env.KubeletCertFile, env.KubeletKeyFile, func(gotNS, pod, container string, prev bool) (string, bool, bool) {
		if gotNS != ns || pod != "orders-jm-1" {
			return "", false, false
		}
		if container != "flink-main-container" {
			return "", true, false
		}
		if prev {
			return previous, true, true
		}
		return current, true, true
	})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if err := flinkrun.RegisterNode(ctx, kc.Dynamic, NodeName, k.Port); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	no := false
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "orders-jm-1", Labels: map[string]string{"app": "orders", "component": "jobmanager"}},
		Spec: corev1.PodSpec{NodeName: NodeName, AutomountServiceAccountToken: &no,
			Containers: []corev1.Container{{Name: "flink-main-container", Image: "flink:2.2.1"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	tail := int64(1)
	b, err := cs.CoreV1().Pods(ns).GetLogs("orders-jm-1", &corev1.PodLogOptions{Container: "flink-main-container", TailLines: &tail}).DoRaw(ctx)
	if err != nil {
		t.Fatalf("pods/log: %v", err)
	}
	if string(b) != "INFO line three\n" {
		t.Errorf("pods/log tailLines=1 = %q, want the current run's last line", b)
	}
	rc, ok, err := kube.JobManagerRootCause(ctx, kc.REST, ns, "orders")
	if err != nil || !ok {
		t.Fatalf("JobManagerRootCause = %+v, %v, %v", rc, ok, err)
	}
	if rc.Cause != "java.lang.ClassNotFoundException: org.apache.flink.state.forst.ForStStateBackendFactory" || !rc.Previous || rc.Pod != "orders-jm-1" {
		t.Errorf("JobManagerRootCause = %+v, want the previous run's ClassNotFoundException", rc)
	}
	if !strings.Contains(rc.Describe(), "previous run, pod orders-jm-1") {
		t.Errorf("Describe = %q", rc.Describe())
	}
}
