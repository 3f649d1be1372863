package kube

import (
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

func TestRESTConfig_nothingConfigured(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	t.Setenv("KUBE_CONFIG_PATH", "")
	if _, err := (Config{}).RESTConfig(); err == nil {
		t.Fatal("no host and no kubeconfig must be an error")
	}
}

func TestRESTConfig_insecureDropsKubeconfigCA(t *testing.T) {
	cfg, err := Config{ConfigPath: writeKubeconfig(t), ConfigContext: "ctx-b", Insecure: true}.RESTConfig()
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
