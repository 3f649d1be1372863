// Package kube builds the Kubernetes client the provider uses from its
// `kubernetes` block (kubeconfig path and context, or host + token + CA, or
// an exec credential plugin such as `aws eks get-token`), and holds the
// server-side apply and wait helpers the resources share.
package kube

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ktypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// FieldManager is the server-side apply field manager of every object this
// provider writes.
const FieldManager = "terraform-provider-flinkstate"

// RequestTimeout bounds each request to the API server (unless the
// kubeconfig sets its own request-timeout).
const RequestTimeout = 30 * time.Second

// Exec is an exec credential plugin.
type Exec struct {
	APIVersion string
	Command    string
	Args       []string
	Env        map[string]string
}

// Config is the provider's `kubernetes` block.
type Config struct {
	ConfigPath           string
	ConfigPaths          []string
	ConfigContext        string
	Host                 string
	Token                string
	ClusterCACertificate string // PEM
	ClientCertificate    string // PEM
	ClientKey            string // PEM
	ProxyURL             string
	Insecure             *bool // nil: KUBE_INSECURE, else false
	Exec                 *Exec
	UserAgent            string
	// WrapTransport wraps the HTTP round-tripper (request logging).
	WrapTransport func(http.RoundTripper) http.RoundTripper
}

// Client is the dynamic client of one cluster, and its configuration.
type Client struct {
	REST    *rest.Config
	Dynamic dynamic.Interface
}

// withEnv fills what the block leaves unset from the environment variables
// hashicorp/kubernetes reads (its provider.go: KUBE_CONFIG_PATH,
// KUBE_CONFIG_PATHS, KUBE_CTX, KUBE_HOST, KUBE_TOKEN,
// KUBE_CLUSTER_CA_CERT_DATA, KUBE_CLIENT_CERT_DATA, KUBE_CLIENT_KEY_DATA,
// KUBE_INSECURE). The block always wins.
func (c Config) withEnv() Config {
	env := func(dst *string, name string) {
		if *dst == "" {
			*dst = os.Getenv(name)
		}
	}
	env(&c.Host, "KUBE_HOST")
	env(&c.Token, "KUBE_TOKEN")
	env(&c.ClusterCACertificate, "KUBE_CLUSTER_CA_CERT_DATA")
	env(&c.ClientCertificate, "KUBE_CLIENT_CERT_DATA")
	env(&c.ClientKey, "KUBE_CLIENT_KEY_DATA")
	env(&c.ConfigContext, "KUBE_CTX")
	if c.Insecure == nil {
		if v, err := strconv.ParseBool(os.Getenv("KUBE_INSECURE")); err == nil {
			c.Insecure = &v
		}
	}
	return c
}

func (c Config) insecure() bool { return c.Insecure != nil && *c.Insecure }

// kubeconfigPaths returns the kubeconfig files to load: config_path or
// config_paths, else KUBE_CONFIG_PATH, KUBE_CONFIG_PATHS or KUBECONFIG when
// no host is given (an explicit host is never mixed with an ambient
// kubeconfig).
func (c Config) kubeconfigPaths() []string {
	var ps []string
	switch {
	case c.ConfigPath != "":
		ps = []string{c.ConfigPath}
	case len(c.ConfigPaths) > 0:
		ps = c.ConfigPaths
	case c.Host == "":
		for _, name := range []string{"KUBE_CONFIG_PATH", "KUBE_CONFIG_PATHS", "KUBECONFIG"} {
			if v := os.Getenv(name); v != "" {
				ps = filepath.SplitList(v)
				break
			}
		}
	}
	var out []string
	for _, f := range ps {
		if f == "" {
			continue
		}
		if strings.HasPrefix(f, "~/") {
			if home, err := os.UserHomeDir(); err == nil {
				f = filepath.Join(home, f[2:])
			}
		}
		out = append(out, f)
	}
	return out
}

// ServiceAccountDir is where a pod's service account token and CA are
// mounted (client-go rest.InClusterConfig reads the same fixed paths). A
// variable so tests can point it at a stand-in directory.
var ServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// inClusterConfig is rest.InClusterConfig (client-go rest/config.go) with
// the service account directory as a parameter: the API server from
// KUBERNETES_SERVICE_HOST/PORT, the token file (re-read as it rotates) and
// the cluster CA.
func inClusterConfig(dir string) (*rest.Config, bool) {
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	tokenFile := filepath.Join(dir, "token")
	if host == "" || port == "" {
		return nil, false
	}
	if _, err := os.Stat(tokenFile); err != nil {
		return nil, false
	}
	return &rest.Config{
		Host:            "https://" + net.JoinHostPort(host, port),
		BearerTokenFile: tokenFile,
		TLSClientConfig: rest.TLSClientConfig{CAFile: filepath.Join(dir, "ca.crt")},
	}, true
}

// RESTConfig turns the block into a client-go configuration.
func (c Config) RESTConfig() (*rest.Config, error) {
	c = c.withEnv()
	paths := c.kubeconfigPaths()
	if len(paths) == 0 && c.Host == "" {
		// Nothing configured: in a pod with a service account token, use
		// it, as client-go's in-cluster configuration does.
		if cfg, ok := inClusterConfig(ServiceAccountDir); ok && c.Exec == nil && c.Token == "" && c.ClientCertificate == "" {
			return c.finish(cfg)
		}
		return nil, errors.New("no Kubernetes configuration: set kubernetes.host (with token, exec or client credentials), " +
			"kubernetes.config_path, KUBE_HOST, KUBE_CONFIG_PATH or KUBECONFIG, or run in a pod with a service account token")
	}
	rules := &clientcmd.ClientConfigLoadingRules{Precedence: paths}
	overrides := &clientcmd.ConfigOverrides{}
	if c.ConfigContext != "" {
		overrides.CurrentContext = c.ConfigContext
	}
	if c.Host != "" {
		overrides.ClusterInfo.Server = c.Host
	}
	if c.ClusterCACertificate != "" {
		overrides.ClusterInfo.CertificateAuthorityData = []byte(c.ClusterCACertificate)
	}
	if c.insecure() {
		overrides.ClusterInfo.InsecureSkipTLSVerify = true
	}
	if c.ProxyURL != "" {
		overrides.ClusterInfo.ProxyURL = c.ProxyURL
	}
	if c.Token != "" {
		overrides.AuthInfo.Token = c.Token
	}
	if c.ClientCertificate != "" {
		overrides.AuthInfo.ClientCertificateData = []byte(c.ClientCertificate)
	}
	if c.ClientKey != "" {
		overrides.AuthInfo.ClientKeyData = []byte(c.ClientKey)
	}
	if c.Exec != nil {
		ex := &clientcmdapi.ExecConfig{
			APIVersion:      c.Exec.APIVersion,
			Command:         c.Exec.Command,
			Args:            c.Exec.Args,
			InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
		}
		for k, v := range c.Exec.Env {
			ex.Env = append(ex.Env, clientcmdapi.ExecEnvVar{Name: k, Value: v})
		}
		overrides.AuthInfo.Exec = ex
	}
	var cc clientcmd.ClientConfig
	if len(paths) == 0 {
		// Host-only configuration: nothing to load from disk.
		cc = clientcmd.NewDefaultClientConfig(*clientcmdapi.NewConfig(), overrides)
	} else {
		cc = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	}
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("building Kubernetes client configuration: %w", err)
	}
	if c.insecure() {
		// A CA from the kubeconfig and insecure together are refused by
		// client-go; insecure was asked for explicitly, so it wins.
		cfg.CAData = nil
		cfg.CAFile = ""
	}
	return c.finish(cfg)
}

func (c Config) finish(cfg *rest.Config) (*rest.Config, error) {
	if c.UserAgent != "" {
		cfg.UserAgent = c.UserAgent
	}
	if c.WrapTransport != nil {
		cfg.Wrap(c.WrapTransport)
	}
	cfg.QPS = 50
	cfg.Burst = 100
	if cfg.Timeout == 0 {
		// client-go's rest.Config.Timeout is the http.Client timeout of
		// every request: a frozen API server fails a call (and so a plan)
		// in bounded time instead of hanging. Waits bound the whole loop
		// with the resource's timeouts on top.
		cfg.Timeout = RequestTimeout
	}
	return cfg, nil
}

// New builds the client. It does not contact the cluster.
func New(c Config) (*Client, error) {
	cfg, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Client{REST: cfg, Dynamic: dyn}, nil
}

// Apply writes obj with server-side apply as FieldManager, taking over
// fields another manager set (as terraform apply is the source of truth).
// It is for updates of objects this provider created (Create) or imported:
// applying to a name that does not exist creates it, so a create must never
// go through Apply.
func Apply(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	body, err := obj.MarshalJSON()
	if err != nil {
		return nil, err
	}
	force := true
	r := dyn.Resource(gvr).Namespace(obj.GetNamespace())
	live, err := r.Patch(ctx, obj.GetName(), ktypes.ApplyPatchType, body,
		metav1.PatchOptions{FieldManager: FieldManager, Force: &force})
	if err != nil {
		return nil, err
	}
	if hasUpdateEntry(live) {
		// A create whose ownership conversion failed: finish it now.
		return upgradeOwnership(ctx, r, live)
	}
	return live, nil
}
