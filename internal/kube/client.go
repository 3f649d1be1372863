// Package kube builds the Kubernetes client the provider uses from its
// `kubernetes` block (kubeconfig path and context, or host + token + CA, or
// an exec credential plugin such as `aws eks get-token`), and holds the
// server-side apply and wait helpers the resources share.
package kube

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

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
	ConfigContext        string
	Host                 string
	Token                string
	ClusterCACertificate string // PEM
	Insecure             bool
	Exec                 *Exec
	UserAgent            string
}

// Client is the dynamic client of one cluster, and its configuration.
type Client struct {
	REST    *rest.Config
	Dynamic dynamic.Interface
}

// kubeconfigPaths returns the kubeconfig files to load: config_path, else
// KUBE_CONFIG_PATH or KUBECONFIG when no host is given (an explicit host is
// never mixed with an ambient kubeconfig).
func (c Config) kubeconfigPaths() []string {
	p := c.ConfigPath
	if p == "" && c.Host == "" {
		p = os.Getenv("KUBE_CONFIG_PATH")
		if p == "" {
			p = os.Getenv("KUBECONFIG")
		}
	}
	if p == "" {
		return nil
	}
	var out []string
	for _, f := range filepath.SplitList(p) {
		if strings.HasPrefix(f, "~/") {
			if home, err := os.UserHomeDir(); err == nil {
				f = filepath.Join(home, f[2:])
			}
		}
		out = append(out, f)
	}
	return out
}

// RESTConfig turns the block into a client-go configuration.
func (c Config) RESTConfig() (*rest.Config, error) {
	paths := c.kubeconfigPaths()
	if len(paths) == 0 && c.Host == "" {
		return nil, errors.New("no Kubernetes configuration: set kubernetes.host (with token, exec or client credentials), kubernetes.config_path, or KUBECONFIG")
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
	if c.Insecure {
		overrides.ClusterInfo.InsecureSkipTLSVerify = true
	}
	if c.Token != "" {
		overrides.AuthInfo.Token = c.Token
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
	if c.Insecure {
		// A CA from the kubeconfig and insecure together are refused by
		// client-go; insecure was asked for explicitly, so it wins.
		cfg.TLSClientConfig.CAData = nil
		cfg.TLSClientConfig.CAFile = ""
	}
	if c.UserAgent != "" {
		cfg.UserAgent = c.UserAgent
	}
	cfg.QPS = 50
	cfg.Burst = 100
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
func Apply(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	body, err := obj.MarshalJSON()
	if err != nil {
		return nil, err
	}
	force := true
	return dyn.Resource(gvr).Namespace(obj.GetNamespace()).Patch(ctx, obj.GetName(), ktypes.ApplyPatchType, body,
		metav1.PatchOptions{FieldManager: FieldManager, Force: &force})
}
