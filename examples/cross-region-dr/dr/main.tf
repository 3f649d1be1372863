# Disaster recovery across regions, region B's half: the standby in
# us-west-2. It names nothing of region A (no resource, data source or
# provider there), so it plans and applies when us-east-1 does not answer.
# Apply it in peace time with failover = false (the standby's state store,
# IRSA role and ServiceAccount, and no deployment); when us-east-1 is lost,
# apply it with -var failover=true: the standby deployment starts from the
# newest savepoint that has fully arrived in the replica
# (data.flinkstate_restorable_snapshot), and writes its own state beside it.
# Keep its Terraform state out of us-east-1. See
# docs/guides/disaster-recovery-across-regions.md.
#
# Assumes: the replica bucket in us-west-2 and the replication of region A's
# state prefix into it (../primary creates both: its outputs replica_bucket
# and replica_prefix); in us-west-2, an EKS cluster (kubeconfig context
# flink-us-west-2) running the Flink Kubernetes Operator, the namespace
# data-processing created and watched, with the Role "flink" its Helm chart
# creates there; that cluster's IAM OIDC provider (var.oidc_provider_arn).
# IAM is global, its control plane in us-east-1: create the role in peace
# time (above), and at failover add -refresh=false if IAM does not answer.

terraform {
  required_providers {
    flinkstate = {
      source  = "flinkstate/flinkstate"
      version = "~> 0.1"
    }
  }
}

variable "replica_bucket" {
  description = "The replica bucket in us-west-2 (../primary's output replica_bucket)."
  type        = string
}

variable "replica_prefix" {
  description = "The replicated state prefix, region A's state store's (../primary's output replica_prefix)."
  type        = string
  default     = "flink/orders"
}

variable "oidc_provider_arn" {
  description = "ARN of the us-west-2 cluster's IAM OIDC provider."
  type        = string
}

variable "failover" {
  description = "true once us-east-1 is lost: the standby deployment is created from the replica."
  type        = bool
  default     = false
}

provider "flinkstate" {
  aws {
    region = "us-west-2"
  }
  kubernetes {
    config_context = "flink-us-west-2"
  }
}

locals {
  namespace = "data-processing"
}

# The standby's own state goes beside the replicated prefix, never into it:
# replication keeps writing there until the source is gone, and the
# replicated prefix carries the source store's ownership marker.
resource "flinkstate_state_store" "orders_dr" {
  bucket = var.replica_bucket
  prefix = "flink/orders-dr"
}

resource "flinkstate_iam_role" "orders_dr" {
  name = "flink-orders-dr"
  irsa {
    oidc_provider_arn = var.oidc_provider_arn
    namespace         = local.namespace
    service_account   = "flink-orders"
  }
  # Its own store, and the replicated prefix it restores from.
  state_store_ids = [flinkstate_state_store.orders_dr.id, "${var.replica_bucket}/${var.replica_prefix}"]
}

resource "flinkstate_service_account" "orders_dr" {
  namespace     = local.namespace
  name          = "flink-orders"
  irsa_role_arn = flinkstate_iam_role.orders_dr.arn
  role_binding {
    role_name = "flink"
  }
}

# Read in us-west-2, from S3 alone: the newest savepoint (or checkpoint)
# that is relocatable and whose every file has arrived.
data "flinkstate_restorable_snapshot" "orders" {
  count         = var.failover ? 1 : 0
  savepoint_dir = "s3://${var.replica_bucket}/${var.replica_prefix}/savepoints"
  require       = true
}

resource "flinkstate_deployment" "orders" {
  count           = var.failover ? 1 : 0
  namespace       = local.namespace
  name            = "orders"
  image           = "flink:2.2.1-java17"
  flink_version   = "2.2.1"
  service_account = flinkstate_service_account.orders_dr.name
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
    upgrade_mode           = "savepoint"
    initial_savepoint_path = data.flinkstate_restorable_snapshot.orders[0].path
  }
  state {
    store_id            = flinkstate_state_store.orders_dr.id
    backend             = "rocksdb"
    incremental         = true
    checkpoint_interval = "60s"
    num_retained        = 3
  }
  flink_configuration = {
    "kubernetes.operator.periodic.savepoint.interval" = "10m"
  }
  wait_for = "running"
  lifecycle {
    # Newer savepoints keep arriving: do not redeploy for them.
    ignore_changes = [job.initial_savepoint_path]
  }
}

output "restored_from" {
  value = var.failover ? data.flinkstate_restorable_snapshot.orders[0].path : null
}

output "passed_over" {
  value = var.failover ? data.flinkstate_restorable_snapshot.orders[0].skipped : []
}
