package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	pschema "github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
)

// Every attribute and block of every schema has a description: the docs
// are generated from them.
func TestSchemas_everythingDescribed(t *testing.T) {
	ctx := context.Background()
	p := New("test")()
	var ps provider.SchemaResponse
	p.Schema(ctx, provider.SchemaRequest{}, &ps)
	checkProviderBlocks(t, "provider", ps.Schema.Blocks)

	for _, f := range p.Resources(ctx) {
		r := f()
		var md resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "flinkstate"}, &md)
		var sr resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &sr)
		if sr.Schema.Description == "" {
			t.Errorf("%s has no description", md.TypeName)
		}
		checkResource(t, md.TypeName, sr.Schema.Attributes, sr.Schema.Blocks)
	}
	for _, f := range p.DataSources(ctx) {
		d := f()
		var md datasource.MetadataResponse
		d.Metadata(ctx, datasource.MetadataRequest{ProviderTypeName: "flinkstate"}, &md)
		var sr datasource.SchemaResponse
		d.Schema(ctx, datasource.SchemaRequest{}, &sr)
		if sr.Schema.Description == "" {
			t.Errorf("%s has no description", md.TypeName)
		}
		for name, a := range sr.Schema.Attributes {
			if a.GetDescription() == "" {
				t.Errorf("%s.%s has no description", md.TypeName, name)
			}
		}
		for name, b := range sr.Schema.Blocks {
			sb := b.(dschema.SingleNestedBlock)
			if sb.Description == "" {
				t.Errorf("%s.%s has no description", md.TypeName, name)
			}
			for an, a := range sb.Attributes {
				if a.GetDescription() == "" {
					t.Errorf("%s.%s.%s has no description", md.TypeName, name, an)
				}
			}
		}
	}
}

func checkResource(t *testing.T, prefix string, attrs map[string]rschema.Attribute, blocks map[string]rschema.Block) {
	for name, a := range attrs {
		if a.GetDescription() == "" {
			t.Errorf("%s.%s has no description", prefix, name)
		}
	}
	for name, b := range blocks {
		if b.GetDescription() == "" {
			t.Errorf("%s.%s has no description", prefix, name)
		}
		if sb, ok := b.(rschema.SingleNestedBlock); ok {
			checkResource(t, prefix+"."+name, sb.Attributes, sb.Blocks)
		}
	}
}

func checkProviderBlocks(t *testing.T, prefix string, blocks map[string]pschema.Block) {
	for name, b := range blocks {
		sb := b.(pschema.SingleNestedBlock)
		if sb.Description == "" {
			t.Errorf("%s.%s has no description", prefix, name)
		}
		for an, a := range sb.Attributes {
			if a.GetDescription() == "" {
				t.Errorf("%s.%s.%s has no description", prefix, name, an)
			}
		}
		checkProviderBlocks(t, prefix+"."+name, sb.Blocks)
	}
}
