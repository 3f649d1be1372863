package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// Configure takes *meta, leaves an unconfigured provider's nil alone, and
// refuses provider data of any other type with an error instead of a nil
// meta that would fail later.
func TestConfigure_providerData(t *testing.T) {
	ctx := context.Background()
	m := newMeta("test")
	for name, tc := range map[string]struct {
		data     any
		want     *meta
		wantDiag string
	}{
		"meta":           {data: m, want: m},
		"not configured": {data: nil},
		"wrong type":     {data: "meta", wantDiag: "got string"},
	} {
		t.Run(name, func(t *testing.T) {
			var r resourceBase
			var rresp resource.ConfigureResponse
			r.Configure(ctx, resource.ConfigureRequest{ProviderData: tc.data}, &rresp)
			var d dataSourceBase
			var dresp datasource.ConfigureResponse
			d.Configure(ctx, datasource.ConfigureRequest{ProviderData: tc.data}, &dresp)
			if r.meta != tc.want || d.meta != tc.want {
				t.Errorf("meta = %p, %p; want %p", r.meta, d.meta, tc.want)
			}
			for _, diags := range [][]string{diagTexts(rresp.Diagnostics), diagTexts(dresp.Diagnostics)} {
				if tc.wantDiag == "" {
					if len(diags) != 0 {
						t.Errorf("unexpected diagnostics %v", diags)
					}
					continue
				}
				if len(diags) != 1 || !strings.Contains(diags[0], tc.wantDiag) || !strings.Contains(diags[0], "bug in the provider") {
					t.Errorf("diagnostics %v, want one error naming %q", diags, tc.wantDiag)
				}
			}
			if tc.wantDiag != "" && (!rresp.Diagnostics.HasError() || !dresp.Diagnostics.HasError()) {
				t.Error("the wrong type is not an error")
			}
		})
	}
}

func diagTexts(diags diag.Diagnostics) []string {
	out := make([]string, 0, len(diags))
	for _, d := range diags {
		out = append(out, d.Summary()+": "+d.Detail())
	}
	return out
}
