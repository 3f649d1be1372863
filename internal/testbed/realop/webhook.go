package realop

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed/proc"
)

// The operator's admission webhook, run as the chart's flink-webhook
// container runs it (templates/controller/deployment.yaml:
// `docker-entrypoint.sh webhook`, WEBHOOK_KEYSTORE_FILE/TYPE/PASSWORD,
// WEBHOOK_SERVER_PORT 9443, the operator's conf/ as FLINK_CONF_DIR) and
// registered as the chart registers it (templates/webhook/
// validating_webhook_configuration.yaml and
// mutating_webhook_configuration.yaml: failurePolicy Fail, CREATE and
// UPDATE of the flink.apache.org resources, the watched namespaces as
// namespaceSelector). Two differences, both because the test bed has no
// pod network: the webhook runs in a network namespace of its own
// (isolatedNet; it binds every interface) reached through a port of the
// host's loopback, and the configurations name that address in
// clientConfig.url where the chart names the Service
// flink-operator-webhook-service (no kube-proxy or cluster DNS resolves a
// Service here). Its certificate comes from a CA of the test bed's own, in
// caBundle, where the chart has cert-manager's.

const operatorWebhookMainClass = "org.apache.flink.kubernetes.operator.admission.FlinkOperatorWebhook"

// The chart's port for the webhook's server (WEBHOOK_SERVER_PORT).
const webhookServerPort = 9443

// ValidatingWebhookName is the chart's name of the validating webhook; the
// API server names it in a refusal ("admission webhook
// \"validationwebhook.flink.apache.org\" denied the request: ...").
const ValidatingWebhookName = "validationwebhook.flink.apache.org"

var (
	validatingWebhookGVR = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"}
	mutatingWebhookGVR   = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations"}
	// The operator's CRD (helm/flink-kubernetes-operator/crds).
	flinkDeploymentGVR = schema.GroupVersionResource{Group: "flink.apache.org", Version: "v1beta1", Resource: "flinkdeployments"}
)

// RealWebhook is a running webhook JVM and its registrations.
type RealWebhook struct {
	PID  int
	Log  string
	Name string // the configurations' name

	net *isolatedNet
	dyn dynamic.Interface
}

// StartRealWebhook starts the webhook for the namespaces in o (the
// operator's release namespace is the first), registers it, and returns
// once the API server sends it a request and it answers (a server-side dry
// run of a FlinkDeployment its validator refuses is refused by it). Without
// root it fails with ErrNoNetns wrapped.
func StartRealWebhook(ctx context.Context, env Bed, o RealOperatorOptions) (*RealWebhook, error) {
	dir, err := OperatorDir()
	if err != nil {
		return nil, err
	}
	if len(o.Namespaces) == 0 {
		return nil, fmt.Errorf("the webhook needs the namespaces it serves")
	}
	work, err := operatorWorkDir(env.HelmDir, "flinkstate-webhook-", o)
	if err != nil {
		return nil, err
	}
	confDir, certDir := filepath.Join(work, "conf"), filepath.Join(work, "certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return nil, err
	}
	release := o.Namespaces[0]
	password := randomHex(12)
	caPEM, err := webhookKeystore(env, certDir, release, password)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(env.KubeHost)
	if err != nil {
		return nil, fmt.Errorf("kube-apiserver address %q: %w", env.KubeHost, err)
	}
	kubePort, err := strconv.Atoi(u.Port())
	if err != nil {
		return nil, fmt.Errorf("kube-apiserver address %q: %w", env.KubeHost, err)
	}
	java, err := javaCommand()
	if err != nil {
		return nil, err
	}
	rc, err := clientcmd.BuildConfigFromFlags("", env.Kubeconfig)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, err
	}

	n, err := newIsolatedNet()
	if err != nil {
		return nil, err
	}
	w := &RealWebhook{Log: filepath.Join(work, "webhook.log"), Name: "flink-operator-" + release + "-webhook-configuration", net: n, dyn: dyn}
	ok := false
	defer func() {
		if !ok {
			w.Stop()
		}
	}()
	// Inside, the kubeconfig's API server address (127.0.0.1:<port>) is
	// the host's.
	if err := n.forwardIn(kubePort); err != nil {
		return nil, fmt.Errorf("forwarding the API server into the webhook's network: %w", err)
	}
	hostPort, err := n.forwardOut(webhookServerPort)
	if err != nil {
		return nil, err
	}
	args := []string{
		"-cp", strings.Join([]string{filepath.Join(dir, operatorStandaloneJar), filepath.Join(dir, operatorJar), filepath.Join(dir, operatorWebhookJar), filepath.Join(dir, "log4j", "*")}, ":"),
		"-Dlog4j.configurationFile=" + filepath.Join(confDir, "log4j-operator.properties"),
		operatorWebhookMainClass,
	}
	procEnv := append(os.Environ(),
		"KUBECONFIG="+env.Kubeconfig,
		"KUBERNETES_SERVICE_HOST="+u.Hostname(), "KUBERNETES_SERVICE_PORT="+u.Port(),
		"WEBHOOK_KEYSTORE_PASSWORD="+password,
		"WEBHOOK_KEYSTORE_FILE="+filepath.Join(certDir, "keystore.p12"),
		"WEBHOOK_KEYSTORE_TYPE=pkcs12",
		"WEBHOOK_SERVER_PORT="+strconv.Itoa(webhookServerPort),
		"OPERATOR_NAMESPACE="+release,
		"FLINK_CONF_DIR="+confDir, "FLINK_PLUGINS_DIR="+filepath.Join(work, "plugins"), "LOGGING_FRAMEWORK=log4j2",
	)
	if err := n.do(func() (err error) { w.PID, err = proc.Spawn(java, args, procEnv, w.Log); return err }); err != nil {
		return nil, err
	}
	if o.Logf != nil {
		o.Logf("real operator webhook 1.15.0: pid %d, log %s, at https://127.0.0.1:%d (its own network namespace)", w.PID, w.Log, hostPort)
	}
	// FlinkOperatorWebhook.run logs "Webhook listening at <address>:<port>"
	// once its server is bound.
	if err := waitLog(ctx, w.PID, w.Log, "Webhook listening at", 3*time.Minute); err != nil {
		return nil, fmt.Errorf("the real operator's webhook: %w", err)
	}
	if err := w.register(ctx, o.Namespaces, fmt.Sprintf("https://127.0.0.1:%d", hostPort), caPEM); err != nil {
		return nil, err
	}
	if err := w.waitServing(ctx, release); err != nil {
		return nil, err
	}
	ok = true
	return w, nil
}

// webhookKeystore writes certs/keystore.p12 as the chart's cert-manager
// Certificate does (templates/cert-manager/certificate.yaml: a PKCS12
// keystore for the Service's DNS names), for 127.0.0.1 as well (the
// address the API server calls here), and returns the CA's PEM. openssl
// writes the PKCS12 file (Go's standard library has no PKCS12 encoder).
func webhookKeystore(env Bed, certDir, release, password string) ([]byte, error) {
	svc := "flink-operator-webhook-service." + release
	caFile, certFile, keyFile := filepath.Join(certDir, "ca.crt"), filepath.Join(certDir, "tls.crt"), filepath.Join(certDir, "tls.key")
	if err := env.IssueCert("testbed-webhook-ca", &x509.Certificate{
		Subject:     pkix.Name{CommonName: svc + ".svc"},
		DNSNames:    []string{svc + ".svc", svc + ".svc.cluster.local"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, caFile, certFile, keyFile); err != nil {
		return nil, err
	}
	out, err := exec.Command("openssl", "pkcs12", "-export", "-in", certFile, "-inkey", keyFile, "-certfile", caFile,
		"-name", "webhook", "-passout", "pass:"+password, "-out", filepath.Join(certDir, "keystore.p12")).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("openssl pkcs12 (the webhook's keystore): %v: %s", err, out)
	}
	return os.ReadFile(caFile)
}

func (w *RealWebhook) register(ctx context.Context, namespaces []string, base string, caPEM []byte) error {
	selector := map[string]any{"matchExpressions": []any{map[string]any{
		"key": "kubernetes.io/metadata.name", "operator": "In", "values": toAnySlice(namespaces),
	}}}
	hook := func(name, path string, resources []string) map[string]any {
		return map[string]any{
			"name":                    name,
			"admissionReviewVersions": []any{"v1"},
			// caBundle is []byte: base64 in JSON.
			"clientConfig":  map[string]any{"url": base + path, "caBundle": base64.StdEncoding.EncodeToString(caPEM)},
			"failurePolicy": "Fail",
			"rules": []any{map[string]any{
				"apiGroups": []any{"flink.apache.org"}, "apiVersions": []any{"*"}, "scope": "Namespaced",
				"operations": []any{"CREATE", "UPDATE"}, "resources": toAnySlice(resources),
			}},
			"sideEffects":       "None",
			"namespaceSelector": selector,
		}
	}
	objs := []struct {
		gvr  schema.GroupVersionResource
		kind string
		hook map[string]any
	}{
		{validatingWebhookGVR, "ValidatingWebhookConfiguration", hook(ValidatingWebhookName, "/validate", []string{"flinkdeployments", "flinksessionjobs", "flinkstatesnapshots"})},
		{mutatingWebhookGVR, "MutatingWebhookConfiguration", hook("mutationwebhook.flink.apache.org", "/mutate", []string{"flinksessionjobs", "flinkdeployments"})},
	}
	for _, o := range objs {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "admissionregistration.k8s.io/v1", "kind": o.kind,
			"metadata": map[string]any{"name": w.Name},
			"webhooks": []any{o.hook},
		}}
		if _, err := w.dyn.Resource(o.gvr).Create(ctx, u, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("registering the webhook (%s %s): %w", o.kind, w.Name, err)
		}
	}
	return nil
}

// waitServing dry-runs the create of a FlinkDeployment the operator's
// validator refuses (no spec.flinkVersion: DefaultValidator
// .validateFlinkVersion, "Flink Version must be defined.") until the
// webhook refuses it: the API server has then loaded the registration and
// reaches the webhook.
func (w *RealWebhook) waitServing(ctx context.Context, ns string) error {
	probe := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkDeployment",
		"metadata": map[string]any{"name": "webhook-probe", "namespace": ns},
		"spec":     map[string]any{"image": "flink:2.2", "serviceAccount": "flink"},
	}}
	var last error
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		_, err := w.dyn.Resource(flinkDeploymentGVR).Namespace(ns).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil && strings.Contains(err.Error(), ValidatingWebhookName) {
			return nil
		}
		last = err
		if !proc.Alive(w.PID) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	b, _ := os.ReadFile(w.Log)
	return fmt.Errorf("the API server did not reach the webhook (last answer to a dry run: %v; log %s):\n%s", last, w.Log, tail(string(b), 30))
}

// Stop removes the registrations first (with failurePolicy Fail, a
// registered webhook that does not answer refuses every create and
// update), then ends the JVM and the forwarders.
func (w *RealWebhook) Stop() {
	if w == nil {
		return
	}
	if w.dyn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, gvr := range []schema.GroupVersionResource{validatingWebhookGVR, mutatingWebhookGVR} {
			if err := w.dyn.Resource(gvr).Delete(ctx, w.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				fmt.Fprintf(os.Stderr, "removing %s %s: %v\n", gvr.Resource, w.Name, err)
			}
		}
	}
	if w.PID > 0 {
		_ = syscall.Kill(-w.PID, syscall.SIGTERM)
		for i := 0; i < 50 && proc.Alive(w.PID); i++ {
			time.Sleep(100 * time.Millisecond)
		}
		_ = syscall.Kill(-w.PID, syscall.SIGKILL)
	}
	if w.net != nil {
		w.net.Close()
	}
}

// waitLog waits until the process's log has want, failing when it exits.
func waitLog(ctx context.Context, pid int, logPath, want string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		b, _ := os.ReadFile(logPath)
		switch {
		case strings.Contains(string(b), want):
			return nil
		case !proc.Alive(pid):
			return fmt.Errorf("exited at start (log %s):\n%s", logPath, tail(string(b), 40))
		case time.Now().After(deadline) || ctx.Err() != nil:
			return fmt.Errorf("did not log %q in %s (log %s):\n%s", want, timeout, logPath, tail(string(b), 40))
		}
		time.Sleep(300 * time.Millisecond)
	}
}

func toAnySlice(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
