package provider

import (
	"context"
	"errors"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/awsclient"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// meta is what resources get from Configure. Clients are built on first use,
// never in Configure: during plan the configuration may hold unknown values
// (a cluster created in the same run), and planning a create needs no API.
type meta struct {
	version string

	awsCfg     awsclient.Config
	awsUnknown bool
	awsOnce    sync.Once
	awsClients *awsclient.Clients
	awsErr     error

	kubeCfg     kube.Config
	kubeUnknown bool
	kubeOnce    sync.Once
	kubeClient  *kube.Client
	kubeErr     error
}

var errUnknownConfig = errors.New("the provider configuration is not known yet (it depends on values computed during apply); " +
	"this operation cannot run during plan")

func newMeta(version string) *meta {
	return &meta{version: version}
}

func (m *meta) userAgent() string { return "terraform-provider-flinkstate/" + m.version }

func (m *meta) setAWS(a *awsModel) {
	m.awsCfg.UserAgent = m.userAgent()
	if a == nil {
		return
	}
	m.awsUnknown = anyUnknown(a.Region, a.Profile, a.Endpoint, a.S3UsePathStyle, a.SkipCredentialsValidation)
	m.awsCfg.Region = a.Region.ValueString()
	m.awsCfg.Profile = a.Profile.ValueString()
	m.awsCfg.Endpoint = a.Endpoint.ValueString()
	if !a.S3UsePathStyle.IsNull() && !a.S3UsePathStyle.IsUnknown() {
		v := a.S3UsePathStyle.ValueBool()
		m.awsCfg.S3UsePathStyle = &v
	}
	m.awsCfg.SkipCredentialsValidation = a.SkipCredentialsValidation.ValueBool()
}

func (m *meta) setKube(ctx context.Context, k *kubeModel) diag.Diagnostics {
	var diags diag.Diagnostics
	m.kubeCfg.UserAgent = m.userAgent()
	if k == nil {
		return diags
	}
	m.kubeUnknown = anyUnknown(k.ConfigPath, k.ConfigContext, k.Host, k.Token, k.ClusterCACertificate, k.Insecure)
	m.kubeCfg.ConfigPath = k.ConfigPath.ValueString()
	m.kubeCfg.ConfigContext = k.ConfigContext.ValueString()
	m.kubeCfg.Host = k.Host.ValueString()
	m.kubeCfg.Token = k.Token.ValueString()
	m.kubeCfg.ClusterCACertificate = k.ClusterCACertificate.ValueString()
	m.kubeCfg.Insecure = k.Insecure.ValueBool()
	if e := k.Exec; e != nil && !e.Command.IsNull() {
		if anyUnknown(e.APIVersion, e.Command, e.Args, e.Env) {
			m.kubeUnknown = true
			return diags
		}
		ex := &kube.Exec{APIVersion: e.APIVersion.ValueString(), Command: e.Command.ValueString()}
		diags.Append(e.Args.ElementsAs(ctx, &ex.Args, false)...)
		diags.Append(e.Env.ElementsAs(ctx, &ex.Env, false)...)
		m.kubeCfg.Exec = ex
	}
	return diags
}

// AWS returns the AWS clients, building them on first use.
func (m *meta) AWS(ctx context.Context) (*awsclient.Clients, error) {
	if m.awsUnknown {
		return nil, errUnknownConfig
	}
	m.awsOnce.Do(func() {
		m.awsClients, m.awsErr = awsclient.New(ctx, m.awsCfg)
	})
	return m.awsClients, m.awsErr
}

// Kube returns the Kubernetes client, building it on first use.
func (m *meta) Kube() (*kube.Client, error) {
	if m.kubeUnknown {
		return nil, errUnknownConfig
	}
	m.kubeOnce.Do(func() {
		m.kubeClient, m.kubeErr = kube.New(m.kubeCfg)
	})
	return m.kubeClient, m.kubeErr
}

// anyUnknown reports whether any value, or any element of a list, set, map
// or object value, is unknown. A list that is known but holds one unknown
// element (["eks", "get-token", "--cluster-name", module.eks.cluster_name]
// while the cluster is planned) must count as unknown: converting it to Go
// values fails.
func anyUnknown(vs ...attr.Value) bool {
	for _, v := range vs {
		if v == nil {
			continue
		}
		if v.IsUnknown() {
			return true
		}
		if v.IsNull() {
			continue
		}
		switch c := v.(type) {
		case basetypes.ListValue:
			if anyUnknown(c.Elements()...) {
				return true
			}
		case basetypes.SetValue:
			if anyUnknown(c.Elements()...) {
				return true
			}
		case basetypes.TupleValue:
			if anyUnknown(c.Elements()...) {
				return true
			}
		case basetypes.MapValue:
			for _, e := range c.Elements() {
				if anyUnknown(e) {
					return true
				}
			}
		case basetypes.ObjectValue:
			for _, e := range c.Attributes() {
				if anyUnknown(e) {
					return true
				}
			}
		}
	}
	return false
}
