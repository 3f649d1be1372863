package provider

import (
	"context"
	"testing"

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
	srv := configuredProtocolServer(b, map[string]any{
		"kubernetes": map[string]any{"host": "https://127.0.0.1:1", "token": "bench"},
	})
	typ := srv.resourceType("flinkstate_deployment")
	cfg := mustDynamic(b, typ, benchDeploymentConfig)
	plan := planCreateRequest(b, "flinkstate_deployment", typ, cfg)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v, err := srv.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: "flinkstate_deployment", Config: cfg})
		if err != nil || hasError(v.Diagnostics) {
			b.Fatal(err, v.Diagnostics)
		}
		p, err := srv.PlanResourceChange(ctx, plan)
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
