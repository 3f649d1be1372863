package provider

import (
	"context"
	"reflect"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
)

// The job block's pass-through attributes are built from
// flinkdeploy.JobFields: schema, description, validators and the
// conversion both ways. Each is a field of jobModel, found by its tfsdk
// tag (the framework fills the model by the same tag), so a field added to
// the table needs only its jobModel field here.

// jobFieldAttribute is a job field's attribute in the job block.
func jobFieldAttribute(f flinkdeploy.JobField) schema.Attribute {
	switch f.Kind {
	case flinkdeploy.JobInt:
		return schema.Int64Attribute{Optional: true, Description: f.Description, Validators: []validator.Int64{int64validator.AtLeast(f.MinInt)}}
	case flinkdeploy.JobBool:
		return schema.BoolAttribute{Optional: true, Description: f.Description}
	case flinkdeploy.JobStrings:
		return schema.ListAttribute{Optional: true, ElementType: types.StringType, Description: f.Description}
	}
	var vs []validator.String
	if f.NotBlank {
		vs = []validator.String{notBlankCheck}
	}
	return schema.StringAttribute{Optional: true, Description: f.Description, Validators: vs}
}

// jobBlockAttributes adds the table's attributes to the job block's own.
func jobBlockAttributes(own map[string]schema.Attribute) map[string]schema.Attribute {
	for _, f := range flinkdeploy.JobFields {
		own[f.Attr] = jobFieldAttribute(f)
	}
	return own
}

// field is the jobModel field of a job block attribute (its tfsdk tag).
func (j *jobModel) field(attrName string) reflect.Value {
	v := reflect.ValueOf(j).Elem()
	for i := 0; i < v.NumField(); i++ {
		if v.Type().Field(i).Tag.Get("tfsdk") == attrName {
			return v.Field(i)
		}
	}
	panic("jobModel has no field for job." + attrName)
}

// value is the attribute's value.
func (j *jobModel) value(attrName string) attr.Value {
	v, ok := j.field(attrName).Interface().(attr.Value)
	if !ok {
		panic("jobModel field of job." + attrName + " is not an attr.Value")
	}
	return v
}

// jobFieldsUnknown tells whether any table attribute is still unknown.
func (j *jobModel) jobFieldsUnknown() bool {
	for _, f := range flinkdeploy.JobFields {
		if j.value(f.Attr).IsUnknown() {
			return true
		}
	}
	return false
}

// jobFieldsTo puts the table attributes into job.Fields; false while a
// list still holds unknown elements.
func (j *jobModel) jobFieldsTo(ctx context.Context, job *flinkdeploy.Job, diags *diag.Diagnostics) bool {
	for _, f := range flinkdeploy.JobFields {
		var v any
		switch x := j.value(f.Attr).(type) {
		case types.String:
			v = x.ValueString()
		case types.Int64:
			if p := x.ValueInt64Pointer(); p != nil {
				v = *p
			}
		case types.Bool:
			if p := x.ValueBoolPointer(); p != nil {
				v = *p
			}
		case types.List:
			l, ok := knownStrings(ctx, x, diags)
			if !ok {
				return false
			}
			v = l
		}
		job.SetField(f, v)
	}
	return true
}

// jobFieldsFrom sets the table attributes from a live job. prior is the
// model before (nil on import): a list it held empty stays empty, as
// spec.job does not carry an empty list (flinkdeploy.JobStrings).
func (j *jobModel) jobFieldsFrom(ctx context.Context, job flinkdeploy.Job, prior *jobModel, diags *diag.Diagnostics) {
	for _, f := range flinkdeploy.JobFields {
		v := job.Fields[f.Key]
		var out attr.Value
		switch f.Kind {
		case flinkdeploy.JobInt:
			out = types.Int64Null()
			if n, ok := v.(int64); ok {
				out = types.Int64Value(n)
			}
		case flinkdeploy.JobBool:
			out = types.BoolNull()
			if b, ok := v.(bool); ok {
				out = types.BoolValue(b)
			}
		case flinkdeploy.JobStrings:
			out = types.ListNull(types.StringType)
			if l, _ := v.([]string); len(l) > 0 {
				lv, d := types.ListValueFrom(ctx, types.StringType, l)
				diags.Append(d...)
				out = lv
			} else if prior != nil {
				if p, ok := prior.value(f.Attr).(types.List); ok && !p.IsNull() && len(p.Elements()) == 0 {
					out = p
				}
			}
		default:
			s, _ := v.(string)
			out = optionalString(s)
		}
		j.field(f.Attr).Set(reflect.ValueOf(out))
	}
}
