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
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/awsclient"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// resourceBase gives a resource the provider's meta and client helpers.
type resourceBase struct{ meta *meta }

func (b *resourceBase) Configure(_ context.Context, req resource.ConfigureRequest, _ *resource.ConfigureResponse) {
	if m, ok := req.ProviderData.(*meta); ok {
		b.meta = m
	}
}

// dataSourceBase is resourceBase for data sources.
type dataSourceBase struct{ meta *meta }

func (b *dataSourceBase) Configure(_ context.Context, req datasource.ConfigureRequest, _ *datasource.ConfigureResponse) {
	if m, ok := req.ProviderData.(*meta); ok {
		b.meta = m
	}
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
