# The configuration flinkstate_deployment would write, for a Helm chart or kubernetes_manifest.
data "flinkstate_flink_configuration" "orders" {
  flink_version = "2.2.1"
  identity      = "pod_identity"
  upgrade_mode  = "last-state"
  task_slots    = 2
  state {
    store_id            = flinkstate_state_store.orders.id
    checkpoint_interval = "60s"
  }
}

output "flink_configuration" {
  value = data.flinkstate_flink_configuration.orders.configuration
}
