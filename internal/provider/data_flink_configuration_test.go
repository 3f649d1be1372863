package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
)

// The data source gives what the deployment resource writes, from the same code.
func TestFlinkConfiguration_dataSource(t *testing.T) {
	t.Parallel()
	ds := "data.flinkstate_flink_configuration.c"
	conf := func(key string) tfjsonpath.Path { return tfjsonPath("configuration").AtMapKey(key) }
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
data "flinkstate_flink_configuration" "c" {
  flink_version = "2.2.1"
  identity      = "pod_identity"
  upgrade_mode  = "last-state"
  task_slots    = 2
  state {
    store_id            = "acme-flink-state/flink/orders"
    checkpoint_interval = "60s"
  }
  flink_configuration = { "metrics.reporters" = "prom" }
}`,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(ds, tfjsonPath("operator_flink_version"), knownvalue.StringExact("v2_2")),
				statecheck.ExpectKnownValue(ds, tfjsonPath("s3_plugin_jar"), knownvalue.StringExact("flink-s3-fs-hadoop-2.2.1.jar")),
				statecheck.ExpectKnownValue(ds, tfjsonPath("credentials_provider"), knownvalue.StringExact(flinkconf.PodIdentityCredentialsProvider)),
				statecheck.ExpectKnownValue(ds, conf("execution.checkpointing.dir"), knownvalue.StringExact("s3://acme-flink-state/flink/orders/checkpoints")),
				statecheck.ExpectKnownValue(ds, conf("high-availability.storageDir"), knownvalue.StringExact("s3://acme-flink-state/flink/orders/ha")),
				statecheck.ExpectKnownValue(ds, conf("high-availability.type"), knownvalue.StringExact(flinkconf.KubernetesHAFactory)),
				statecheck.ExpectKnownValue(ds, conf("taskmanager.numberOfTaskSlots"), knownvalue.StringExact("2")),
				statecheck.ExpectKnownValue(ds, conf("metrics.reporters"), knownvalue.StringExact("prom")),
				statecheck.ExpectKnownValue(ds, tfjsonPath("pod_template_yaml"), knownvalue.StringRegexp(regexpMust(`fsGroup: 9999`))),
				statecheck.ExpectKnownValue(ds, tfjsonPath("pod_template_yaml"), knownvalue.StringRegexp(regexpMust(`value: flink-s3-fs-hadoop-2\.2\.1\.jar`))),
				statecheck.ExpectKnownValue(ds, tfjsonPath("pod_template_yaml"), knownvalue.StringRegexp(regexpMust(`mountPath: /opt/flink/state`))),
			},
		}},
	})
	// Without identity, as flinkstate_deployment: no credentials class.
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
data "flinkstate_flink_configuration" "c" {
  flink_version = "2.2.1"
  state {
    store_id = "acme-flink-state/flink/orders"
  }
}`,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(ds, tfjsonPath("credentials_provider"), knownvalue.Null()),
				statecheck.ExpectKnownValue(ds, conf("execution.checkpointing.dir"), knownvalue.StringExact("s3://acme-flink-state/flink/orders/checkpoints")),
				noCredentialsKey{ds},
			},
		}},
	})
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
data "flinkstate_flink_configuration" "c" {
  flink_version = "2.2.1"
  identity      = "irsa"
  upgrade_mode  = "savepoint"
  state {
    checkpoint_dir = "s3://acme-flink-state/cp"
  }
}`,
			ExpectError: errorRE("savepoint upgrades need a savepoint directory", "state.savepoint_dir"),
		}},
	})
}

// noCredentialsKey: the data source's configuration has no credentials class.
type noCredentialsKey struct{ addr string }

func (c noCredentialsKey) CheckState(_ context.Context, req statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	for _, r := range req.State.Values.RootModule.Resources {
		if r.Address != c.addr {
			continue
		}
		cfg, _ := r.AttributeValues["configuration"].(map[string]any)
		if v, ok := cfg[flinkconf.CredentialsProviderKey]; ok || cfg == nil {
			resp.Error = fmt.Errorf("%s: configuration %v, want no %s (got %v)", c.addr, cfg, flinkconf.CredentialsProviderKey, v)
		}
		return
	}
	resp.Error = fmt.Errorf("no %s in state", c.addr)
}
