package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/client-go/dynamic"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/awsclient"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/deployop"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// resourceBase gives a resource the provider's meta and client helpers.
type resourceBase struct{ meta *meta }

// Configure takes the provider's meta. ProviderData is nil until the
// provider is configured (validation; a plan whose provider configuration
// is unknown); anything else than *meta is a bug of this provider, reported
// rather than left to fail later as a nil meta.
func (b *resourceBase) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	b.meta = providerMeta(req.ProviderData, &resp.Diagnostics)
}

// dataSourceBase is resourceBase for data sources.
type dataSourceBase struct{ meta *meta }

// Configure is resourceBase.Configure for data sources.
func (b *dataSourceBase) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	b.meta = providerMeta(req.ProviderData, &resp.Diagnostics)
}

// providerMeta is the provider data as *meta: nil while the provider is not
// configured, and nil with an error diagnostic when it is of another type.
func providerMeta(data any, diags *diag.Diagnostics) *meta {
	if data == nil {
		return nil
	}
	m, ok := data.(*meta)
	if !ok {
		addProblem(diags, "Configuring", "the provider's clients",
			fmt.Sprintf("expected provider data of type *provider.meta, got %T", data),
			"This is a bug in the provider: please report it to the provider's developers.")
		return nil
	}
	return m
}

// awsOrDiag returns the AWS clients, or nil with an error diagnostic.
func (m *meta) awsOrDiag(ctx context.Context, diags *diag.Diagnostics) *awsclient.Clients {
	c, err := m.AWS(ctx)
	if err != nil {
		addProblem(diags, "Setting up", "the AWS clients", err.Error(), "")
		return nil
	}
	return c
}

// kubeOrDiag returns the Kubernetes client, or nil with an error diagnostic.
func (m *meta) kubeOrDiag(diags *diag.Diagnostics) *kube.Client {
	c, err := m.Kube()
	if err != nil {
		addProblem(diags, "Setting up", "the Kubernetes client", err.Error(), "")
		return nil
	}
	return c
}

// importNamespaceName imports an ID of the form namespace/name into the
// id, namespace and name attributes; ok is false after an error.
func importNamespaceName(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) bool {
	ns, name, ok := strings.Cut(req.ID, "/")
	if !ok || ns == "" || name == "" {
		addProblem(&resp.Diagnostics, "Importing", fmt.Sprintf("ID %q", req.ID), "the ID is not of the form namespace/name", "Give the object's namespace and name, e.g. data-processing/flink-orders.")
		return false
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("namespace"), ns)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), name)...)
	return !resp.Diagnostics.HasError()
}

// privateImported marks, in private state, the first Read after an import:
// nothing is owned by this provider's field manager yet, so that Read
// reports everything it finds.
const privateImported = "imported"

func markImported(ctx context.Context, resp *resource.ImportStateResponse) {
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateImported, []byte(`true`))...)
}

// takeImported tells whether this Read follows an import, and clears the mark.
func takeImported(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) bool {
	flag, d := req.Private.GetKey(ctx, privateImported)
	resp.Diagnostics.Append(d...)
	if string(flag) != "true" {
		return false
	}
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateImported, nil)...)
	return true
}

// knownTimeouts replaces an absent timeouts block (after import) by a typed null.
func knownTimeouts(ctx context.Context, t timeouts.Value) timeouts.Value {
	if t.IsNull() {
		return timeouts.Value{Object: types.ObjectNull(t.AttributeTypes(ctx))}
	}
	return t
}

// timeoutsBlock is timeouts.Block with descriptions for the generated docs.
func timeoutsBlock(ctx context.Context, opts timeouts.Opts, what string) rschema.Block {
	b, ok := timeouts.Block(ctx, opts).(rschema.SingleNestedBlock)
	if !ok {
		return timeouts.Block(ctx, opts)
	}
	b.Description = "How long to wait: " + what + ". Durations such as \"30s\", \"10m\" or \"1h\"."
	attrs := map[string]rschema.Attribute{}
	for name, a := range b.Attributes {
		if s, ok := a.(rschema.StringAttribute); ok {
			s.Description = "Time limit for " + name + "."
			a = s
		}
		attrs[name] = a
	}
	b.Attributes = attrs
	return b
}

// env is what the deployment operations (internal/deployop) call: this
// provider's clients, its AWS bounds and its wording of AWS errors.
func (m *meta) env() deployop.Env {
	return deployop.Env{
		Kube: func() (dynamic.Interface, error) {
			c, err := m.Kube()
			if err != nil {
				return nil, err
			}
			return c.Dynamic, nil
		},
		S3: func(ctx context.Context) (checkpoint.S3Reader, error) {
			a, err := m.AWS(ctx)
			if err != nil {
				return nil, err
			}
			return a.S3, nil
		},
		Bound: m.boundAWS,
		Words: awsErr,
	}
}
