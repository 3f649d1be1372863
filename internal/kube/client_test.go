package kube

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const kubeconfigYAML = `apiVersion: v1
kind: Config
clusters:
- name: a
  cluster:
    server: https://a.example:6443
    insecure-skip-tls-verify: true
- name: b
  cluster:
    server: https://b.example:6443
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==
users:
- name: u
  user:
    token: from-file
contexts:
- name: ctx-a
  context: {cluster: a, user: u}
- name: ctx-b
  context: {cluster: b, user: u}
current-context: ctx-a
`

func writeKubeconfig(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(p, []byte(kubeconfigYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRESTConfig_kubeconfigAndContext(t *testing.T) {
	p := writeKubeconfig(t)
	cfg, err := Config{ConfigPath: p}.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://a.example:6443" || cfg.BearerToken != "from-file" {
		t.Fatalf("current context: host %q token %q", cfg.Host, cfg.BearerToken)
	}
	cfg, err = Config{ConfigPath: p, ConfigContext: "ctx-b", Token: "override"}.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://b.example:6443" || cfg.BearerToken != "override" {
		t.Fatalf("ctx-b with token override: host %q token %q", cfg.Host, cfg.BearerToken)
	}
	if _, err := (Config{ConfigPath: p, ConfigContext: "missing"}).RESTConfig(); err == nil {
		t.Fatal("a context that does not exist must be an error")
	}
}

func TestRESTConfig_hostOnlyIgnoresAmbientKubeconfig(t *testing.T) {
	clearEnv(t)
	t.Setenv("KUBECONFIG", writeKubeconfig(t))
	t.Setenv("KUBE_CONFIG_PATH", "")
	cfg, err := Config{Host: "https://eks.example", Token: "t", ClusterCACertificate: "-----BEGIN CERTIFICATE-----\n"}.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://eks.example" || cfg.BearerToken != "t" || string(cfg.CAData) == "" {
		t.Fatalf("host-only config: %+v", cfg)
	}
	// Without host, KUBECONFIG is the fallback.
	cfg, err = Config{}.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://a.example:6443" {
		t.Fatalf("KUBECONFIG fallback: host %q", cfg.Host)
	}
}

func ptr[T any](v T) *T { return &v }

// clearEnv empties every variable the configuration falls back to.
func clearEnv(t *testing.T) {
	for _, v := range []string{"KUBECONFIG", "KUBE_CONFIG_PATH", "KUBE_CONFIG_PATHS", "KUBE_CTX", "KUBE_HOST", "KUBE_TOKEN",
		"KUBE_CLUSTER_CA_CERT_DATA", "KUBE_CLIENT_CERT_DATA", "KUBE_CLIENT_KEY_DATA", "KUBE_INSECURE",
		"KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"} {
		t.Setenv(v, "")
	}
}

func TestRESTConfig_nothingConfigured(t *testing.T) {
	clearEnv(t)
	if _, err := (Config{}).RESTConfig(); err == nil {
		t.Fatal("no host and no kubeconfig must be an error")
	}
}

// The KUBE_* variables hashicorp/kubernetes reads stand in for the block;
// the block wins over them.
func TestRESTConfig_kubeEnv(t *testing.T) {
	clearEnv(t)
	t.Setenv("KUBE_HOST", "https://env.example")
	t.Setenv("KUBE_TOKEN", "env-token")
	t.Setenv("KUBE_CLUSTER_CA_CERT_DATA", "ca-pem")
	t.Setenv("KUBE_CLIENT_CERT_DATA", "cert-pem")
	t.Setenv("KUBE_CLIENT_KEY_DATA", "key-pem")
	cfg, err := Config{}.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://env.example" || cfg.BearerToken != "env-token" || string(cfg.CAData) != "ca-pem" ||
		string(cfg.CertData) != "cert-pem" || string(cfg.KeyData) != "key-pem" {
		t.Fatalf("from KUBE_*: host %q token %q ca %q cert %q key %q", cfg.Host, cfg.BearerToken, cfg.CAData, cfg.CertData, cfg.KeyData)
	}
	cfg, err = Config{Host: "https://block.example", Token: "block-token"}.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://block.example" || cfg.BearerToken != "block-token" {
		t.Fatalf("block over KUBE_*: host %q token %q", cfg.Host, cfg.BearerToken)
	}

	clearEnv(t)
	t.Setenv("KUBE_CONFIG_PATHS", string(filepath.ListSeparator)+writeKubeconfig(t))
	t.Setenv("KUBE_CTX", "ctx-b")
	t.Setenv("KUBE_INSECURE", "true")
	cfg, err = Config{}.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://b.example:6443" || !cfg.Insecure {
		t.Fatalf("KUBE_CONFIG_PATHS + KUBE_CTX + KUBE_INSECURE: host %q insecure %v", cfg.Host, cfg.Insecure)
	}
	t.Setenv("KUBE_CONFIG_PATHS", "")
	t.Setenv("KUBE_CONFIG_PATH", writeKubeconfig(t))
	if cfg, err = (Config{}).RESTConfig(); err != nil || cfg.Host != "https://b.example:6443" {
		t.Fatalf("KUBE_CONFIG_PATH: %v %v", cfg, err)
	}
}

// config_paths merges files in order, as KUBECONFIG does: the first file
// that sets a value wins.
func TestRESTConfig_configPaths(t *testing.T) {
	clearEnv(t)
	other := filepath.Join(t.TempDir(), "other")
	if err := os.WriteFile(other, []byte(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://c.example"}
users:
- name: v
  user: {token: other}
contexts:
- name: ctx-c
  context: {cluster: c, user: v}
current-context: ctx-c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Config{ConfigPaths: []string{writeKubeconfig(t), other}}.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://a.example:6443" {
		t.Fatalf("first file's current context: host %q", cfg.Host)
	}
	cfg, err = Config{ConfigPaths: []string{writeKubeconfig(t), other}, ConfigContext: "ctx-c"}.RESTConfig()
	if err != nil || cfg.Host != "https://c.example" || cfg.BearerToken != "other" {
		t.Fatalf("context from the second file: %v %v", cfg, err)
	}
}

func TestRESTConfig_clientCertificateAndProxy(t *testing.T) {
	clearEnv(t)
	cfg, err := Config{Host: "https://k.example", ClientCertificate: "cert-pem", ClientKey: "key-pem", ProxyURL: "http://proxy.example:3128"}.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if string(cfg.CertData) != "cert-pem" || string(cfg.KeyData) != "key-pem" {
		t.Fatalf("client certificate: %q %q", cfg.CertData, cfg.KeyData)
	}
	if cfg.Proxy == nil {
		t.Fatal("proxy_url set but no proxy function")
	}
	u, err := cfg.Proxy(&http.Request{URL: &url.URL{Scheme: "https", Host: "k.example"}})
	if err != nil || u.String() != "http://proxy.example:3128" {
		t.Fatalf("proxy: %v %v", u, err)
	}
}

// Nothing configured but a service account token mounted, as in a pod:
// the in-cluster configuration.
func TestRESTConfig_inCluster(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	old := ServiceAccountDir
	ServiceAccountDir = dir
	t.Cleanup(func() { ServiceAccountDir = old })
	if _, err := (Config{}).RESTConfig(); err == nil {
		t.Fatal("no token file: must be an error, not in-cluster")
	}
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte("sa-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
	t.Setenv("KUBERNETES_SERVICE_PORT", "443")
	cfg, err := Config{}.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://10.0.0.1:443" || cfg.BearerTokenFile != filepath.Join(dir, "token") || cfg.CAFile != filepath.Join(dir, "ca.crt") {
		t.Fatalf("in-cluster: %+v", cfg)
	}
	// Anything configured wins over the pod's service account.
	cfg, err = Config{Host: "https://k.example", Token: "t"}.RESTConfig()
	if err != nil || cfg.Host != "https://k.example" || cfg.BearerTokenFile != "" {
		t.Fatalf("configured host in a pod: %+v %v", cfg, err)
	}
}

func TestRESTConfig_insecureDropsKubeconfigCA(t *testing.T) {
	cfg, err := Config{ConfigPath: writeKubeconfig(t), ConfigContext: "ctx-b", Insecure: ptr(true)}.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Insecure || len(cfg.CAData) != 0 || cfg.CAFile != "" {
		t.Fatalf("insecure config still carries a CA: %+v", cfg.TLSClientConfig)
	}
}

func TestRESTConfig_exec(t *testing.T) {
	cfg, err := Config{Host: "https://eks.example", Exec: &Exec{
		APIVersion: "client.authentication.k8s.io/v1beta1", Command: "aws",
		Args: []string{"eks", "get-token", "--cluster-name", "c"}, Env: map[string]string{"AWS_PROFILE": "p"},
	}}.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ExecProvider == nil || cfg.ExecProvider.Command != "aws" || len(cfg.ExecProvider.Args) != 4 ||
		len(cfg.ExecProvider.Env) != 1 || cfg.ExecProvider.Env[0].Name != "AWS_PROFILE" {
		t.Fatalf("exec provider: %+v", cfg.ExecProvider)
	}
}

func TestOwnedMetadataKeys(t *testing.T) {
	entries := []metav1.ManagedFieldsEntry{
		{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationApply, FieldsV1: &metav1.FieldsV1{
			Raw: []byte(`{"f:metadata":{"f:labels":{"f:app":{}},"f:annotations":{"f:eks.amazonaws.com/role-arn":{}}}}`)}},
		{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: &metav1.FieldsV1{
			Raw: []byte(`{"f:metadata":{"f:labels":{"f:other":{}}}}`)}},
		{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: &metav1.FieldsV1{
			Raw: []byte(`{"f:metadata":{"f:labels":{"f:not-applied":{}}}}`)}},
	}
	got := OwnedMetadataKeys(entries, FieldManager)
	if len(got.Labels) != 1 || !got.Labels["app"] {
		t.Errorf("labels %v, want only app", got.Labels)
	}
	if len(got.Annotations) != 1 || !got.Annotations["eks.amazonaws.com/role-arn"] {
		t.Errorf("annotations %v, want only the role-arn", got.Annotations)
	}
}
