# Where a restore should start: the newest completed checkpoint of the store.
data "flinkstate_latest_checkpoint" "orders" {
  checkpoint_dir = flinkstate_state_store.orders.checkpoint_dir
}

output "restore_from" {
  value = data.flinkstate_latest_checkpoint.orders.found ? data.flinkstate_latest_checkpoint.orders.path : "no completed checkpoint yet"
}
