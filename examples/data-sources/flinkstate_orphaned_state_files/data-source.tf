# Which files of the job's shared/ and taskowned/ checkpoint directories no
# retained checkpoint references. A report only: it deletes nothing, and what
# it lists may still be needed by a job restored from these checkpoints in
# CLAIM mode, or by a checkpoint in progress (see the description).
data "flinkstate_orphaned_state_files" "orders" {
  store_id = "acme-flink-state/flink/orders"
  job_id   = flinkstate_deployment.orders.job_id
}

output "orphaned_state" {
  value = {
    files     = data.flinkstate_orphaned_state_files.orders.orphan_count
    bytes     = data.flinkstate_orphaned_state_files.orders.total_bytes
    read_from = data.flinkstate_orphaned_state_files.orders.retained_checkpoints
  }
}
