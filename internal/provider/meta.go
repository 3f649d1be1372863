package provider

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

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

	regionUnknown      bool
	partitionOnce      sync.Once
	partition          string
	defaultTags        map[string]string
	defaultTagsUnknown bool
	awsOnce            sync.Once
	awsClients         *awsclient.Clients
	awsErr             error

	kubeCfg     kube.Config
	kubeUnknown bool
	kubeOnce    sync.Once
	kubeClient  *kube.Client
	kubeErr     error

	// plans: what this provider instance planned so far in this run, for
	// the plan checks that relate two resources (plan_registry.go).
	plansOnce sync.Once
	plans     *planned

	// run identifies this configured provider instance: Terraform starts
	// one for each plan and apply. A FlinkStateSnapshot whose create mark
	// names another run was made by a create that is no longer waiting for
	// it (kube.PendingSnapshotCreate).
	run string
	// snapshotClaims: the interrupted creates' FlinkStateSnapshots this
	// run's creates took over (kube.PendingSnapshotCreate).
	snapshotClaims kube.SnapshotClaims
}

var errUnknownConfig = errors.New("the provider configuration is not known yet (it depends on values computed during apply); " +
	"this operation cannot run during plan")

func newMeta(version string) *meta {
	return &meta{version: version, run: newRunToken()}
}

// newRunToken is 16 random hex digits (a time-based one if the system's
// random source fails, which still differs between runs).
func newRunToken() string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return fmt.Sprintf("t%015x", time.Now().UnixNano())
	}
	return hex.EncodeToString(b)
}

func (m *meta) userAgent() string { return "terraform-provider-flinkstate/" + m.version }

func (m *meta) setAWS(ctx context.Context, a *awsModel) diag.Diagnostics {
	var diags diag.Diagnostics
	m.awsCfg.UserAgent = m.userAgent()
	m.awsCfg.ConfigHooks = []func(*aws.Config){awsLogging}
	if a == nil {
		return diags
	}
	vals := []attr.Value{a.Region, a.Profile, a.Endpoint, a.S3UsePathStyle, a.SkipCredentialsValidation,
		a.SharedConfigFiles, a.SharedCredentialsFiles, a.MaxRetries, a.RetryMode, a.AllowedAccountIDs, a.ForbiddenAccountIDs}
	if r := a.AssumeRole; r != nil {
		vals = append(vals, r.RoleARN, r.SessionName, r.ExternalID, r.Duration, r.Tags, r.Policy)
	}
	if w := a.AssumeRoleWithWebIdentity; w != nil {
		vals = append(vals, w.RoleARN, w.WebIdentityTokenFile, w.SessionName)
	}
	if e := a.Endpoints; e != nil {
		vals = append(vals, e.S3, e.IAM, e.STS, e.EKS, e.KMS)
	}
	m.awsUnknown = anyUnknown(vals...)
	// The region (and so the partition) may be known while other settings
	// are not.
	m.regionUnknown = anyUnknown(a.Region, a.Profile, a.SharedConfigFiles)
	if t := a.DefaultTags; t != nil {
		if anyUnknown(t.Tags) {
			m.defaultTagsUnknown = true
		} else if !t.Tags.IsNull() {
			m.defaultTags = map[string]string{}
			diags.Append(t.Tags.ElementsAs(ctx, &m.defaultTags, false)...)
		}
	}
	c := &m.awsCfg
	c.Region = a.Region.ValueString()
	c.Profile = a.Profile.ValueString()
	c.Endpoint = a.Endpoint.ValueString()
	if !a.S3UsePathStyle.IsNull() && !a.S3UsePathStyle.IsUnknown() {
		v := a.S3UsePathStyle.ValueBool()
		c.S3UsePathStyle = &v
	}
	c.SkipCredentialsValidation = a.SkipCredentialsValidation.ValueBool()
	c.MaxRetries = int(a.MaxRetries.ValueInt64())
	c.RetryMode = a.RetryMode.ValueString()
	elems := func(v interface {
		attr.Value
		ElementsAs(context.Context, any, bool) diag.Diagnostics
	}, target any) {
		if !v.IsNull() && !anyUnknown(v) {
			diags.Append(v.ElementsAs(ctx, target, false)...)
		}
	}
	elems(a.SharedConfigFiles, &c.SharedConfigFiles)
	elems(a.SharedCredentialsFiles, &c.SharedCredentialsFiles)
	elems(a.AllowedAccountIDs, &c.AllowedAccountIDs)
	elems(a.ForbiddenAccountIDs, &c.ForbiddenAccountIDs)
	if r := a.AssumeRole; r != nil && !r.RoleARN.IsNull() {
		ar := &awsclient.AssumeRole{
			RoleARN:     r.RoleARN.ValueString(),
			SessionName: r.SessionName.ValueString(),
			ExternalID:  r.ExternalID.ValueString(),
			Policy:      r.Policy.ValueString(),
		}
		if d := r.Duration.ValueString(); d != "" {
			ar.Duration, _ = time.ParseDuration(d) // validated by the schema
		}
		elems(r.Tags, &ar.Tags)
		c.AssumeRole = ar
	}
	if w := a.AssumeRoleWithWebIdentity; w != nil && !w.RoleARN.IsNull() {
		c.AssumeRoleWithWebIdentity = &awsclient.WebIdentity{
			RoleARN:     w.RoleARN.ValueString(),
			TokenFile:   w.WebIdentityTokenFile.ValueString(),
			SessionName: w.SessionName.ValueString(),
		}
	}
	if e := a.Endpoints; e != nil {
		c.Endpoints = map[string]string{}
		for k, v := range map[string]types.String{"s3": e.S3, "iam": e.IAM, "sts": e.STS, "eks": e.EKS, "kms": e.KMS} {
			if v.ValueString() != "" {
				c.Endpoints[k] = v.ValueString()
			}
		}
	}
	if !m.awsUnknown {
		if err := c.Validate(); err != nil {
			addProblem(&diags, "Configuring", "the provider's aws block", err.Error(), "")
		}
		// The roles to assume are in the region's partition: STS of one
		// partition cannot assume a role of another (iampolicy.InPartition).
		var arns []arnAt
		if r := a.AssumeRole; r != nil {
			arns = append(arns, arnAt{path.Root("aws").AtName("assume_role").AtName("role_arn"), "aws.assume_role.role_arn", r.RoleARN})
		}
		if w := a.AssumeRoleWithWebIdentity; w != nil {
			arns = append(arns, arnAt{path.Root("aws").AtName("assume_role_with_web_identity").AtName("role_arn"),
				"aws.assume_role_with_web_identity.role_arn", w.RoleARN})
		}
		m.checkARNPartitions(ctx, arns, &diags)
	}
	return diags
}

func (m *meta) setKube(ctx context.Context, k *kubeModel) diag.Diagnostics {
	var diags diag.Diagnostics
	m.kubeCfg.UserAgent = m.userAgent()
	m.kubeCfg.WrapTransport = kubeLogging(os.Getenv("KUBE_TOKEN"), os.Getenv("KUBE_CLIENT_KEY_DATA"))
	if k == nil {
		return diags
	}
	m.kubeCfg.WrapTransport = kubeLogging(k.Token.ValueString(), k.ClientKey.ValueString(),
		os.Getenv("KUBE_TOKEN"), os.Getenv("KUBE_CLIENT_KEY_DATA"))
	m.kubeUnknown = anyUnknown(k.ConfigPath, k.ConfigPaths, k.ConfigContext, k.Host, k.Token, k.ClusterCACertificate,
		k.ClientCertificate, k.ClientKey, k.ProxyURL, k.Insecure)
	m.kubeCfg.ConfigPath = k.ConfigPath.ValueString()
	if !k.ConfigPaths.IsNull() && !anyUnknown(k.ConfigPaths) {
		diags.Append(k.ConfigPaths.ElementsAs(ctx, &m.kubeCfg.ConfigPaths, false)...)
	}
	m.kubeCfg.ConfigContext = k.ConfigContext.ValueString()
	m.kubeCfg.Host = k.Host.ValueString()
	m.kubeCfg.Token = k.Token.ValueString()
	m.kubeCfg.ClusterCACertificate = k.ClusterCACertificate.ValueString()
	m.kubeCfg.ClientCertificate = k.ClientCertificate.ValueString()
	m.kubeCfg.ClientKey = k.ClientKey.ValueString()
	m.kubeCfg.ProxyURL = k.ProxyURL.ValueString()
	if !k.Insecure.IsNull() && !k.Insecure.IsUnknown() {
		v := k.Insecure.ValueBool()
		m.kubeCfg.Insecure = &v
	}
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

// Partition is the AWS partition of the configured region, derived once
// without any API call; known is false while the region is not known yet.
func (m *meta) Partition(ctx context.Context) (partition string, known bool) {
	if m == nil {
		return awsclient.Partition(os.Getenv("AWS_REGION")), true
	}
	if m.regionUnknown {
		return "", false
	}
	m.partitionOnce.Do(func() {
		region, err := m.awsCfg.ResolveRegion(ctx)
		if err != nil {
			region = ""
		}
		m.partition = awsclient.Partition(region)
	})
	return m.partition, true
}

// DefaultTags are the aws.default_tags; known is false while they are not
// known yet.
func (m *meta) DefaultTags() (tags map[string]string, known bool) {
	if m == nil {
		return nil, true
	}
	if m.defaultTagsUnknown {
		return nil, false
	}
	return m.defaultTags, true
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

// providerRegion is the region the provider's AWS clients use when it is
// known without any API call (the provider block, the environment or the
// shared config, as the partition is derived); "" when unknown.
func (m *meta) providerRegion(ctx context.Context) string {
	if m == nil || m.regionUnknown {
		return ""
	}
	region, err := m.awsCfg.ResolveRegion(ctx)
	if err != nil {
		return ""
	}
	return region
}
