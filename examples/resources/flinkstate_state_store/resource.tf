resource "flinkstate_bucket" "state" {
  bucket = "acme-flink-state"
}

# One application's checkpoints, savepoints and HA metadata under s3://acme-flink-state/flink/orders/.
resource "flinkstate_state_store" "orders" {
  bucket = flinkstate_bucket.state.bucket
  prefix = "flink/orders"
}

output "checkpoint_dir" {
  value = flinkstate_state_store.orders.checkpoint_dir # s3://acme-flink-state/flink/orders/checkpoints
}
