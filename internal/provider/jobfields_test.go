package provider

import (
	"context"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
)

// jobFieldSamples are values of each kind of job field (nil: unset).
func jobFieldSamples(f flinkdeploy.JobField) []any {
	switch f.Kind {
	case flinkdeploy.JobInt:
		return []any{nil, int64(1), int64(12)}
	case flinkdeploy.JobBool:
		return []any{nil, true, false}
	case flinkdeploy.JobStrings:
		return []any{nil, []string{"--a"}, []string{"--input", "s3://acme/in"}}
	}
	return []any{nil, "org.example.Main"}
}

// Every job table field has its attribute in the job block, described by
// the table, of the type of its jobModel field; and its value survives the
// provider's side of an import and a plan (jobFieldsFrom, jobFieldsTo).
func TestJobFieldsThroughTheModel(t *testing.T) {
	ctx := context.Background()
	var sr resource.SchemaResponse
	(&deploymentResource{}).Schema(ctx, resource.SchemaRequest{}, &sr)
	block := sr.Schema.Blocks["job"].(schema.SingleNestedBlock)
	for _, f := range flinkdeploy.JobFields {
		a, ok := block.Attributes[f.Attr]
		if !ok || (a.GetDescription() != f.Description && a.GetMarkdownDescription() != f.Description) {
			t.Errorf("%s: attribute missing or not described by the table", f.Attr)
			continue
		}
		if got, want := reflect.TypeOf((&jobModel{}).value(f.Attr)), reflect.TypeOf(a.GetType().ValueType(ctx)); got != want {
			t.Errorf("%s: jobModel field is a %s, the attribute's value a %s", f.Attr, got, want)
		}
		for _, v := range jobFieldSamples(f) {
			var diags diag.Diagnostics
			live := flinkdeploy.Job{}
			live.SetField(f, v)
			var m jobModel
			m.jobFieldsFrom(ctx, live, nil, &diags)
			if m.jobFieldsUnknown() {
				t.Fatalf("%s = %v: unknown after a read", f.Attr, v)
			}
			var back flinkdeploy.Job
			if !m.jobFieldsTo(ctx, &back, &diags) || diags.HasError() {
				t.Fatalf("%s = %v: %v", f.Attr, v, diags)
			}
			if !reflect.DeepEqual(back.Fields, live.Fields) {
				t.Errorf("%s = %v came back as %#v", f.Attr, v, back.Fields)
			}
			if m.value(f.Attr).IsNull() != (v == nil) {
				t.Errorf("%s = %v: attribute %v", f.Attr, v, m.value(f.Attr))
			}
		}
	}
}

// A list configured empty stays empty after a read: spec.job carries no
// empty list, and null would show as a change.
func TestJobFieldsKeepEmptyList(t *testing.T) {
	ctx := context.Background()
	empty, _ := types.ListValue(types.StringType, nil)
	for _, f := range flinkdeploy.JobFields {
		if f.Kind != flinkdeploy.JobStrings {
			continue
		}
		prior := &jobModel{}
		prior.field(f.Attr).Set(reflect.ValueOf(empty))
		var m jobModel
		var diags diag.Diagnostics
		m.jobFieldsFrom(ctx, flinkdeploy.Job{}, prior, &diags)
		if got := m.value(f.Attr); !got.Equal(empty) {
			t.Errorf("%s: read back as %v", f.Attr, got)
		}
		m.jobFieldsFrom(ctx, flinkdeploy.Job{}, nil, &diags)
		if got := m.value(f.Attr); !got.IsNull() {
			t.Errorf("%s: imported as %v, want null", f.Attr, got)
		}
	}
}
