package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
)

// The data source gives what the deployment resource writes, from the same code.
func TestFlinkConfiguration_dataSource(t *testing.T) {
	ds := "data.flinkstate_flink_configuration.c"
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
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr(ds, "operator_flink_version", "v2_2"),
				resource.TestCheckResourceAttr(ds, "s3_plugin_jar", "flink-s3-fs-hadoop-2.2.1.jar"),
				resource.TestCheckResourceAttr(ds, "credentials_provider", flinkconf.PodIdentityCredentialsProvider),
				resource.TestCheckResourceAttr(ds, "configuration.execution.checkpointing.dir", "s3://acme-flink-state/flink/orders/checkpoints"),
				resource.TestCheckResourceAttr(ds, "configuration.high-availability.storageDir", "s3://acme-flink-state/flink/orders/ha"),
				resource.TestCheckResourceAttr(ds, "configuration.high-availability.type", flinkconf.KubernetesHAFactory),
				resource.TestCheckResourceAttr(ds, "configuration.taskmanager.numberOfTaskSlots", "2"),
				resource.TestCheckResourceAttr(ds, "configuration.metrics.reporters", "prom"),
				resource.TestMatchResourceAttr(ds, "pod_template_yaml", regexpMust(`fsGroup: 9999`)),
				resource.TestMatchResourceAttr(ds, "pod_template_yaml", regexpMust(`value: flink-s3-fs-hadoop-2\.2\.1\.jar`)),
				resource.TestMatchResourceAttr(ds, "pod_template_yaml", regexpMust(`mountPath: /opt/flink/state`)),
			),
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
