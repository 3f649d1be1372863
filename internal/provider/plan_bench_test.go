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

// BenchmarkPlanDeployment measures what one flinkstate_deployment costs the
// provider in a `terraform plan` that creates it: the ValidateResourceConfig
// and PlanResourceChange calls terraform makes, through the same protocol
// server terraform talks to (no process launch, no API server: planning a
// create makes no API call). tools/bench/plan.sh measures the whole CLI run.
//
//	go test -run '^$' -bench PlanDeployment -benchmem ./internal/provider/
func BenchmarkPlanDeployment(b *testing.B) {
	ctx := context.Background()
	srv, err := providerserver.NewProtocol6WithError(New("bench")())()
	if err != nil {
		b.Fatal(err)
	}
	schemas, err := srv.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil || len(schemas.Diagnostics) > 0 {
		b.Fatal(err, schemas.Diagnostics)
	}
	pcfg := dynamicValue(b, schemas.Provider.ValueType(), map[string]any{
		"kubernetes": map[string]any{"host": "https://127.0.0.1:1", "token": "bench"},
	})
	if resp, err := srv.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{TerraformVersion: "1.11.4", Config: pcfg}); err != nil || hasError(resp.Diagnostics) {
		b.Fatal(err, resp.Diagnostics)
	}
	typ := schemas.ResourceSchemas["flinkstate_deployment"].ValueType()
	cfg := dynamicValue(b, typ, benchDeploymentConfig)
	prior := nullDynamicValue(b, typ)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v, err := srv.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: "flinkstate_deployment", Config: cfg})
		if err != nil || hasError(v.Diagnostics) {
			b.Fatal(err, v.Diagnostics)
		}
		p, err := srv.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{
			TypeName: "flinkstate_deployment", Config: cfg, ProposedNewState: cfg, PriorState: prior,
		})
		if err != nil || hasError(p.Diagnostics) {
			b.Fatal(err, p.Diagnostics)
		}
		if i == 0 {
			checkPlannedConfig(b, typ, p.PlannedState)
		}
	}
}

// benchDeploymentConfig is the deployment of tools/bench/plan.sh.
var benchDeploymentConfig = map[string]any{
	"namespace":       "data-processing",
	"name":            "orders-1",
	"image":           "flink:2.2.1-java17",
	"flink_version":   "2.2.1",
	"service_account": "flink-orders",
	"identity":        "irsa",
	"job_manager":     map[string]any{"memory": "2048m", "cpu": 1.0},
	"task_manager":    map[string]any{"memory": "2048m", "cpu": 1.0, "task_slots": 2},
	"job": map[string]any{
		"jar_uri":      "local:///opt/flink/examples/streaming/StateMachineExample.jar",
		"parallelism":  2,
		"upgrade_mode": "last-state",
	},
	"state": map[string]any{"store_id": "acme-flink-state/flink/orders-1", "checkpoint_interval": "60s"},
}

// checkPlannedConfig makes sure the benchmark measures a real plan: the
// derived configuration is in the planned state.
func checkPlannedConfig(b *testing.B, typ tftypes.Type, dv *tfprotov6.DynamicValue) {
	b.Helper()
	v, err := dv.Unmarshal(typ)
	if err != nil {
		b.Fatal(err)
	}
	var obj map[string]tftypes.Value
	if err := v.As(&obj); err != nil {
		b.Fatal(err)
	}
	var cfg map[string]tftypes.Value
	if err := obj["effective_flink_configuration"].As(&cfg); err != nil {
		b.Fatal(err)
	}
	var dir string
	if err := cfg["execution.checkpointing.dir"].As(&dir); err != nil || dir != "s3://acme-flink-state/flink/orders-1/checkpoints" {
		b.Fatalf("planned execution.checkpointing.dir = %q (%v)", dir, err)
	}
}

func hasError(ds []*tfprotov6.Diagnostic) bool {
	for _, d := range ds {
		if d.Severity == tfprotov6.DiagnosticSeverityError {
			return true
		}
	}
	return false
}

func nullDynamicValue(b *testing.B, typ tftypes.Type) *tfprotov6.DynamicValue {
	b.Helper()
	dv, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, nil))
	if err != nil {
		b.Fatal(err)
	}
	return &dv
}

// dynamicValue encodes vals as a value of typ, attributes not in vals null.
func dynamicValue(b *testing.B, typ tftypes.Type, vals map[string]any) *tfprotov6.DynamicValue {
	b.Helper()
	v, err := tfValue(typ, vals)
	if err != nil {
		b.Fatal(err)
	}
	dv, err := tfprotov6.NewDynamicValue(typ, v)
	if err != nil {
		b.Fatal(err)
	}
	return &dv
}

func tfValue(typ tftypes.Type, v any) (tftypes.Value, error) {
	if v == nil {
		return tftypes.NewValue(typ, nil), nil
	}
	switch t := typ.(type) {
	case tftypes.Object:
		m, ok := v.(map[string]any)
		if !ok {
			return tftypes.Value{}, fmt.Errorf("want an object, got %T", v)
		}
		out := map[string]tftypes.Value{}
		for name, at := range t.AttributeTypes {
			av, err := tfValue(at, m[name])
			if err != nil {
				return tftypes.Value{}, fmt.Errorf("%s: %w", name, err)
			}
			out[name] = av
		}
		return tftypes.NewValue(t, out), nil
	}
	switch {
	case typ.Is(tftypes.String):
		return tftypes.NewValue(typ, v), nil
	case typ.Is(tftypes.Number):
		switch n := v.(type) {
		case int:
			return tftypes.NewValue(typ, big.NewFloat(float64(n))), nil
		case float64:
			return tftypes.NewValue(typ, big.NewFloat(n)), nil
		}
	case typ.Is(tftypes.Bool):
		return tftypes.NewValue(typ, v), nil
	}
	return tftypes.Value{}, fmt.Errorf("unsupported %s value %T", typ, v)
}
