package provider

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// The template of a blue/green deployment is refused at `terraform
// validate` (no cluster, no provider configuration) by the checks of
// flinkstate_deployment's spec, with the same errors: one declaration of
// the checks (specChecks), run by both resources.
func TestBlueGreen_specRefusedAtValidateAsTheDeployments(t *testing.T) {
	srv := newProtocolServer(t)
	ctx := context.Background()
	validate := func(t *testing.T, typ string, attrs map[string]any) []string {
		v, err := srv.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: typ, Config: mustDynamic(t, srv.resourceType(typ), attrs)})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range v.Diagnostics {
			if d.Severity == tfprotov6.DiagnosticSeverityError {
				out = append(out, fmt.Sprintf("%q %s: %s", dottedPath(d.Attribute), d.Summary, d.Detail))
			}
		}
		sort.Strings(out)
		return out
	}
	for _, c := range []struct {
		name, summary string
		kv            []any
	}{
		{"a key in both maps", "Key set twice", []any{"sensitive_flink_configuration", map[string]any{"pipeline.max-parallelism": "128"}}},
		{"parallelism above the max", "Parallelism above the max parallelism", []any{"job.parallelism", 12,
			"flink_configuration", map[string]any{"pipeline.max-parallelism": "8"}}},
		{"JobManager memory too small", "JobManager memory too small", []any{"job_manager.memory", "256m"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			attrs := with(depBase, c.kv...)
			want := validate(t, "flinkstate_deployment", attrs)
			if !strings.Contains(strings.Join(want, "\n"), c.summary) {
				t.Fatalf("flinkstate_deployment: want an error %q, got %q", c.summary, want)
			}
			if got := validate(t, "flinkstate_blue_green_deployment", attrs); !reflect.DeepEqual(got, want) {
				t.Errorf("flinkstate_blue_green_deployment's errors differ from flinkstate_deployment's:\n got  %q\n want %q", got, want)
			}
		})
	}
}

// Standby JobManagers without high availability are refused at plan on a
// blue/green template as on flinkstate_deployment (planSpecChecks).
func TestAccBlueGreen_standbyJobManagersNeedHA(t *testing.T) {
	cfg := strings.Replace(blueGreenConfig("default", "flink:2.2.1-java17", "  high_availability = false"),
		"    memory = \"2048m\"\n    cpu    = 1\n  }", "    memory = \"2048m\"\n    cpu    = 1\n    replicas = 2\n  }", 1)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config:      cfg,
			PlanOnly:    true,
			ExpectError: errorRE("Standby JobManagers need high availability", "more than one JobManager replica needs high_availability"),
		}},
	})
}

// A blue/green deployment created suspended is refused at plan: the
// operator would deploy no child (InitializingBlueStateHandler).
func TestAccBlueGreen_createSuspendedRefused(t *testing.T) {
	cfg := strings.Replace(blueGreenConfig("default", "flink:2.2.1-java17", ""), `upgrade_mode = "savepoint"`,
		`upgrade_mode = "savepoint"`+"\n    state        = \"suspended\"", 1)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config:      cfg,
			PlanOnly:    true,
			ExpectError: errorRE("A blue/green deployment starts running", "deploys no child until job.state is running"),
		}},
	})
}
