# Roll the running job "orders" back to a savepoint, e.g. the one
# savepoint_before_upgrade took before the last upgrade
# (upgrade_savepoint_path), with the image it ran then.
#
# Assumes: the FlinkDeployment data-processing/orders exists and runs (as the
# guide's steps 5 and 6, or examples/complete, create it, with the
# ServiceAccount flink-orders and the state store
# acme-flink-state/flink/orders), and var.savepoint_path names a completed
# savepoint of it. This is that deployment's configuration with one line
# added: job.initial_savepoint_path. In the root module that manages the
# deployment, add that line there. Applied on its own, the import block
# below first adopts the existing deployment (and fails, creating nothing,
# when there is none); where the deployment is already in state it does
# nothing.
#
# Setting or changing job.initial_savepoint_path on a deployment that exists
# makes the provider set a new savepoint_redeploy_nonce, so the operator
# redeploys the job from that savepoint, whatever the upgrade_mode (operator
# 1.15.0, AbstractJobReconciler: a SAVEPOINT_REDEPLOY diff is handled before
# the upgrade mode is looked at); the plan warns that the job's current
# state is replaced. Nothing else changes: upgrade_mode, the state block and
# with them Kubernetes HA stay as they were. The provider checks that the
# savepoint is complete before it touches the deployment.

terraform {
  required_providers {
    flinkstate = {
      source  = "flinkstate/flinkstate"
      version = "~> 0.1"
    }
  }
}

provider "flinkstate" {}

variable "savepoint_path" {
  description = "The savepoint to roll back to, e.g. s3://acme-flink-state/flink/orders/savepoints/savepoint-9f3c2a-0123456789ab (the deployment's upgrade_savepoint_path, or a flinkstate_snapshot's path)."
  type        = string
}

# The running deployment this configuration rolls back.
import {
  to = flinkstate_deployment.orders
  id = "data-processing/orders"
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
    jar_uri                = "local:///opt/flink/examples/streaming/StateMachineExample.jar"
    parallelism            = 2
    upgrade_mode           = "last-state"
    initial_savepoint_path = var.savepoint_path # the one line added
  }
  state {
    store_id            = "acme-flink-state/flink/orders"
    incremental         = true
    checkpoint_interval = "2s" # what StateMachineExample sets in code, which wins
    num_retained        = 3
  }

  # As in step 6: the next upgrade takes a savepoint first again.
  savepoint_before_upgrade {
    timeout = "10m"
  }

  wait_for = "running"
}

output "redeploy_nonce" {
  value = flinkstate_deployment.orders.savepoint_redeploy_nonce
}
