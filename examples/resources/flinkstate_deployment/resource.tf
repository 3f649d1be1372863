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
    checkpoint_interval = "2s" # what StateMachineExample sets in code, which wins
    num_retained        = 3
    # externalized_retention defaults to RETAIN_ON_CANCELLATION with last-state.
  }
  # Set before the first start: Flink cannot raise it later without losing
  # keyed state (unset, it would choose 128 for parallelism 2).
  flink_configuration = {
    "pipeline.max-parallelism" = "128"
  }

  # Before an update that changes the job (image, flink_version, jar, entry
  # class, args, parallelism, Flink configuration): a savepoint, COMPLETED
  # first; its path lands in upgrade_savepoint_path.
  savepoint_before_upgrade {}

  wait_for = "running"
}
