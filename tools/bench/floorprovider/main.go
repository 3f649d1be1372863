// Command floorprovider is the smallest provider terraform-plugin-framework
// can serve: one resource with one attribute, like the built-in
// terraform_data. tools/bench/plan.sh plans it beside flinkstate_deployment
// to show what any plugin provider costs terraform (three plugin launches
// per plan) before its own schema and logic. Never released.
package main

import (
	"context"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	pschema "github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	tfaddr "github.com/hashicorp/terraform-registry-address"
)

type floorProvider struct{}

func (floorProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "floor"
}

func (floorProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = pschema.Schema{}
}

func (floorProvider) Configure(context.Context, provider.ConfigureRequest, *provider.ConfigureResponse) {
}

func (floorProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{func() resource.Resource { return dataResource{} }}
}

func (floorProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }

// dataResource keeps its input, as terraform_data does.
type dataResource struct{}

func (dataResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_data"
}

func (dataResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{Attributes: map[string]schema.Attribute{
		"input": schema.StringAttribute{Optional: true},
		"id":    schema.StringAttribute{Computed: true, PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
	}}
}

func (dataResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	resp.State.Raw = req.Plan.Raw
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), "floor")...)
}

func (dataResource) Read(context.Context, resource.ReadRequest, *resource.ReadResponse) {}

func (dataResource) Update(_ context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.State.Raw = req.Plan.Raw
}

func (dataResource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}

func main() {
	addr, err := tfaddr.ParseProviderSource("flinkstate/floor")
	if err != nil {
		log.Fatal(err)
	}
	if err := providerserver.Serve(context.Background(), func() provider.Provider { return floorProvider{} },
		providerserver.ServeOpts{Address: addr.String()}); err != nil {
		log.Fatal(err)
	}
}
