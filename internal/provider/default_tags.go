package provider

import (
	"context"
	"maps"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// aws.default_tags follows hashicorp/aws ("Default Tags in the Terraform AWS
// Provider", HashiCorp blog, v3.38.0; the provider's tags_all attributes):
// default tags are added to every taggable resource, a resource's own tags
// win over a default with the same key, `tags` holds only the resource's
// own tags and the computed `tags_all` the merged set that is written to
// AWS.

// tagsAllAttribute is the computed tags_all of a taggable resource.
func tagsAllAttribute() schema.MapAttribute {
	return schema.MapAttribute{
		Computed:    true,
		ElementType: types.StringType,
		Description: "All tags of the resource: the provider's aws.default_tags merged with tags (tags win on the same key).",
	}
}

// planTagsAll is tags_all for a plan: unknown until both the default tags
// and the resource's tags are known.
func (m *meta) planTagsAll(ctx context.Context, own types.Map, diags *diag.Diagnostics) types.Map {
	defaults, known := m.DefaultTags()
	if !known || own.IsUnknown() || anyUnknown(own) {
		return types.MapUnknown(types.StringType)
	}
	all := maps.Clone(defaults)
	if all == nil {
		all = map[string]string{}
	}
	maps.Copy(all, stringMap(ctx, own, diags))
	v, d := types.MapValueFrom(ctx, types.StringType, all)
	diags.Append(d...)
	return v
}

// readTags splits the tags read from AWS into tags_all (all of them) and
// tags (the resource's own): a tag equal to a default tag is the default's,
// unless the resource's prior tags named it.
func (m *meta) readTags(ctx context.Context, remote map[string]string, prior types.Map, diags *diag.Diagnostics) (own, all types.Map) {
	defaults, _ := m.DefaultTags()
	priorOwn := stringMap(ctx, prior, diags)
	mine := map[string]string{}
	for k, v := range remote {
		if _, named := priorOwn[k]; named {
			mine[k] = v
			continue
		}
		if dv, isDefault := defaults[k]; isDefault && dv == v {
			continue
		}
		mine[k] = v
	}
	if remote == nil {
		remote = map[string]string{}
	}
	all, d := types.MapValueFrom(ctx, types.StringType, remote)
	diags.Append(d...)
	switch {
	case len(mine) > 0:
		own, d = types.MapValueFrom(ctx, types.StringType, mine)
		diags.Append(d...)
	case !prior.IsNull() && !prior.IsUnknown() && len(prior.Elements()) == 0:
		own = prior // an empty map in the configuration stays as it is
	default:
		own = types.MapNull(types.StringType)
	}
	return own, all
}
