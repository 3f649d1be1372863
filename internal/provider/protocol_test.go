package provider

import (
	"context"
	"fmt"
	"math/big"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The provider's protocol server as terraform talks to it, without the
// CLI: the plan-safety table (plan_safety_harness_test.go) and the plan
// benchmark (plan_bench_test.go) both call it.

// protocolServer is a provider server and the schemas it returned.
type protocolServer struct {
	tfprotov6.ProviderServer
	schemas *tfprotov6.GetProviderSchemaResponse
}

// newProtocolServer starts the provider's protocol server and reads its
// schemas.
func newProtocolServer(tb testing.TB) *protocolServer {
	tb.Helper()
	srv, err := providerserver.NewProtocol6WithError(New("test")())()
	if err != nil {
		tb.Fatal(err)
	}
	schemas, err := srv.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil || hasError(schemas.Diagnostics) {
		tb.Fatal(err, schemas.Diagnostics)
	}
	return &protocolServer{ProviderServer: srv, schemas: schemas}
}

// configuredProtocolServer is newProtocolServer configured with the
// provider block cfg (attributes and blocks as nested maps).
func configuredProtocolServer(tb testing.TB, cfg map[string]any) *protocolServer {
	tb.Helper()
	p := newProtocolServer(tb)
	pcfg := mustDynamic(tb, p.schemas.Provider.ValueType(), cfg)
	resp, err := p.ConfigureProvider(context.Background(), &tfprotov6.ConfigureProviderRequest{TerraformVersion: "1.11.4", Config: pcfg})
	if err != nil || hasError(resp.Diagnostics) {
		tb.Fatal(err, resp.Diagnostics)
	}
	return p
}

func (p *protocolServer) resourceType(name string) tftypes.Type {
	return p.schemas.ResourceSchemas[name].ValueType()
}

func (p *protocolServer) dataSourceType(name string) tftypes.Type {
	return p.schemas.DataSourceSchemas[name].ValueType()
}

// planCreateRequest plans creating a resource: no prior state, the
// proposed state is the configuration.
func planCreateRequest(tb testing.TB, name string, typ tftypes.Type, cfg *tfprotov6.DynamicValue) *tfprotov6.PlanResourceChangeRequest {
	tb.Helper()
	return &tfprotov6.PlanResourceChangeRequest{TypeName: name, Config: cfg, ProposedNewState: cfg, PriorState: nullDynamic(tb, typ)}
}

func hasError(ds []*tfprotov6.Diagnostic) bool {
	for _, d := range ds {
		if d.Severity == tfprotov6.DiagnosticSeverityError {
			return true
		}
	}
	return false
}

func nullDynamic(tb testing.TB, typ tftypes.Type) *tfprotov6.DynamicValue {
	tb.Helper()
	dv, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, nil))
	if err != nil {
		tb.Fatal(err)
	}
	return &dv
}

// mustDynamic encodes vals as a value of typ; attributes missing from vals
// are null.
func mustDynamic(tb testing.TB, typ tftypes.Type, vals map[string]any) *tfprotov6.DynamicValue {
	tb.Helper()
	v, err := toTF(typ, vals)
	if err != nil {
		tb.Fatal(err)
	}
	dv, err := tfprotov6.NewDynamicValue(typ, v)
	if err != nil {
		tb.Fatal(err)
	}
	return &dv
}

// toTF encodes a Go value (maps, lists, strings, numbers, bools) as a value
// of typ; attributes missing from a map are null.
func toTF(typ tftypes.Type, v any) (tftypes.Value, error) {
	if v == nil {
		return tftypes.NewValue(typ, nil), nil
	}
	switch t := typ.(type) {
	case tftypes.Object:
		m, ok := v.(map[string]any)
		if !ok {
			return tftypes.Value{}, fmt.Errorf("want an object, got %T", v)
		}
		for k := range m {
			if _, ok := t.AttributeTypes[k]; !ok {
				return tftypes.Value{}, fmt.Errorf("no attribute %q", k)
			}
		}
		out := map[string]tftypes.Value{}
		for name, at := range t.AttributeTypes {
			av, err := toTF(at, m[name])
			if err != nil {
				return tftypes.Value{}, fmt.Errorf("%s: %w", name, err)
			}
			out[name] = av
		}
		return tftypes.NewValue(t, out), nil
	case tftypes.Map:
		m, ok := v.(map[string]any)
		if !ok {
			if ms, ok2 := v.(map[string]string); ok2 {
				m = map[string]any{}
				for k, s := range ms {
					m[k] = s
				}
			} else {
				return tftypes.Value{}, fmt.Errorf("want a map, got %T", v)
			}
		}
		out := map[string]tftypes.Value{}
		for k, e := range m {
			ev, err := toTF(t.ElementType, e)
			if err != nil {
				return tftypes.Value{}, err
			}
			out[k] = ev
		}
		return tftypes.NewValue(t, out), nil
	case tftypes.List, tftypes.Set:
		var elem tftypes.Type
		if l, ok := t.(tftypes.List); ok {
			elem = l.ElementType
		} else {
			elem = t.(tftypes.Set).ElementType
		}
		var items []any
		switch x := v.(type) {
		case []any:
			items = x
		case []string:
			for _, s := range x {
				items = append(items, s)
			}
		default:
			items = []any{v}
		}
		out := make([]tftypes.Value, 0, len(items))
		for _, e := range items {
			ev, err := toTF(elem, e)
			if err != nil {
				return tftypes.Value{}, err
			}
			out = append(out, ev)
		}
		return tftypes.NewValue(typ, out), nil
	}
	switch {
	case typ.Is(tftypes.String), typ.Is(tftypes.Bool):
		return tftypes.NewValue(typ, v), nil
	case typ.Is(tftypes.Number):
		switch n := v.(type) {
		case int:
			return tftypes.NewValue(typ, big.NewFloat(float64(n))), nil
		case float64:
			return tftypes.NewValue(typ, big.NewFloat(n)), nil
		}
	}
	return tftypes.Value{}, fmt.Errorf("unsupported %s value %T", typ, v)
}
