# A job upgraded without stopping it: each change that restarts the job
# starts the other child (orders-blue, orders-green) from a savepoint of the
# running one, and deletes the old child once the new one runs.
resource "flinkstate_blue_green_deployment" "orders" {
  namespace       = "data-processing"
  name            = "orders"
  image           = "flink:2.2.1-java17"
  flink_version   = "2.2.1"
  service_account = flinkstate_service_account.orders.name
  identity        = "irsa"

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
    jar_uri      = "local:///opt/flink/usrlib/orders.jar"
    parallelism  = 2
    upgrade_mode = "savepoint"
  }
  # A transition's savepoint goes to the store's savepoints/ directory.
  state {
    store_id = flinkstate_state_store.orders.id
    backend  = "rocksdb"
  }
  # flink_configuration is copied to both children as it is. What must differ
  # per child (an exactly-once Kafka sink's transactional id prefix) the job
  # derives from kubernetes.cluster-id, which the operator sets to the child's
  # name: see the guide "Zero-downtime upgrades with blue/green deployments".
  blue_green {
    abort_grace_period = "10 min"
    deletion_delay     = "30 s"
  }
}
