# Disaster recovery: the FlinkDeployment is gone (deleted, or a new cluster),
# its checkpoints are not. A new deployment starts from the newest complete
# checkpoint (a chk-N directory whose _metadata references only files that
# exist) in the store's checkpoint dir. The provider checks that again before
# creating the deployment.
#
# Assumes: the lost job's state store acme-flink-state/flink/orders (its
# bucket and prefix) with retained checkpoints; the namespace
# data-processing watched by the Flink Kubernetes Operator; the
# ServiceAccount flink-orders with its IRSA role (as examples/complete
# creates them); no FlinkDeployment "orders" there.

terraform {
  required_providers {
    flinkstate = {
      source  = "flinkstate/flinkstate"
      version = "~> 0.1"
    }
  }
}

provider "flinkstate" {}

data "flinkstate_latest_checkpoint" "orders" {
  store_id = "acme-flink-state/flink/orders"
  # Read each candidate's _metadata and pass over checkpoints with missing files.
  complete = true
}

resource "flinkstate_deployment" "orders" {
  namespace       = "data-processing"
  name            = "orders"
  image           = "flink:2.2.1-java17"
  flink_version   = "2.2.1"
  service_account = "flink-orders"
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
    jar_uri      = "local:///opt/flink/examples/streaming/StateMachineExample.jar"
    parallelism  = 2
    upgrade_mode = "last-state"
    # Where the job starts from. Changed later on a running deployment, this
    # redeploys the job from the new path (savepoint_redeploy_nonce).
    initial_savepoint_path = data.flinkstate_latest_checkpoint.orders.path
    # NO_CLAIM (Flink's default): the restored checkpoint stays yours; the job
    # writes a full checkpoint of its own first.
    claim_mode = "NO_CLAIM"
  }
  state {
    store_id            = "acme-flink-state/flink/orders"
    checkpoint_interval = "2s" # what StateMachineExample sets in code, which wins
    num_retained        = 3
  }

  wait_for = "running"

  lifecycle {
    precondition {
      condition     = data.flinkstate_latest_checkpoint.orders.found
      error_message = "No complete checkpoint under the store's checkpoint dir: nothing to restore from (see the data source's skipped)."
    }
    # Later checkpoints change the data source's path: do not redeploy for them.
    ignore_changes = [job.initial_savepoint_path]
  }
}

output "restored_from" {
  value = flinkstate_deployment.orders.job.initial_savepoint_path
}
