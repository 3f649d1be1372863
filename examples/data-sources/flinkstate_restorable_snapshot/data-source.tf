# Read in the region that is left, through a provider alias for it: the
# replica of the state bucket, not the Kubernetes cluster of the lost region.
data "flinkstate_restorable_snapshot" "orders" {
  provider      = flinkstate.dr
  savepoint_dir = "s3://acme-flink-state-dr/flink/orders/savepoints"
  require       = true
}
