resource "flinkstate_deployment" "orders" {
  namespace       = "data-processing"
  name            = "orders"
  image           = "flink:2.2.1-java17"
  flink_version   = "2.2.1" # -> flinkVersion v2_2, plugin flink-s3-fs-hadoop-2.2.1.jar
  service_account = flinkstate_service_account.orders.name
  identity        = "irsa" # -> WebIdentityTokenCredentialsProvider

  job_manager {
    memory = "2048m"
    cpu    = 1
  }
  task_manager {
    memory     = "2048m"
    cpu        = 1
    task_slots = 2
  }
  job {
    jar_uri      = "local:///opt/flink/examples/streaming/StateMachineExample.jar"
    parallelism  = 2
    upgrade_mode = "last-state" # needs HA (on by default) and retained checkpoints
  }
  state {
    store_id            = flinkstate_state_store.orders.id
    backend             = "rocksdb"
    incremental         = true
    checkpoint_interval = "60s"
    num_retained        = 3
  }

  wait_for = "running"
}
