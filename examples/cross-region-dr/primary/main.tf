# Disaster recovery across regions: the job runs in us-east-1 and takes a
# savepoint every 10 minutes; S3 replication copies its state prefix to a
# versioned bucket in us-west-2. When us-east-1 is lost, set
# failover = true and apply: the standby deployment in us-west-2 starts from
# the newest savepoint that has fully arrived in the replica
# (data.flinkstate_restorable_snapshot), and writes its own state beside it.
# See docs/guides/disaster-recovery-across-regions.md.

terraform {
  required_providers {
    flinkstate = {
      source = "flinkstate/flinkstate"
    }
  }
}

variable "oidc_provider_arn_primary" {
  description = "ARN of the us-east-1 cluster's IAM OIDC provider."
  type        = string
}

variable "oidc_provider_arn_dr" {
  description = "ARN of the us-west-2 cluster's IAM OIDC provider."
  type        = string
}

variable "failover" {
  description = "true once us-east-1 is lost: the standby deployment is created in us-west-2 from the replica."
  type        = bool
  default     = false
}

provider "flinkstate" {
  aws {
    region = "us-east-1"
  }
  kubernetes {
    config_context = "flink-us-east-1"
  }
}

provider "flinkstate" {
  alias = "dr"
  aws {
    region = "us-west-2"
  }
  kubernetes {
    config_context = "flink-us-west-2"
  }
}

locals {
  namespace = "data-processing"
  prefix    = "flink/orders"
}

# Region A: the state bucket, versioned (S3 replication needs versioning on
# both buckets), and the job.

resource "flinkstate_bucket" "state" {
  bucket     = "acme-flink-state"
  versioning = true
}

resource "flinkstate_state_store" "orders" {
  bucket = flinkstate_bucket.state.bucket
  prefix = local.prefix
}

resource "flinkstate_iam_role" "orders" {
  name = "flink-orders"
  irsa {
    oidc_provider_arn = var.oidc_provider_arn_primary
    namespace         = local.namespace
    service_account   = "flink-orders"
  }
  state_store_ids = [flinkstate_state_store.orders.id]
}

resource "flinkstate_service_account" "orders" {
  namespace     = local.namespace
  name          = "flink-orders"
  irsa_role_arn = flinkstate_iam_role.orders.arn
  role_binding {
    role_name = "flink"
  }
}

resource "flinkstate_deployment" "orders" {
  namespace       = local.namespace
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
    jar_uri      = "local:///opt/flink/examples/streaming/StateMachineExample.jar"
    parallelism  = 2
    upgrade_mode = "savepoint"
  }
  state {
    store_id            = flinkstate_state_store.orders.id
    backend             = "rocksdb"
    incremental         = true
    checkpoint_interval = "60s"
    num_retained        = 3
  }
  # The operator takes a savepoint every 10 minutes into the store's
  # savepoint dir: what a replica can restore from (a copied checkpoint
  # cannot: it names its files in this bucket).
  flink_configuration = {
    "kubernetes.operator.periodic.savepoint.interval" = "10m"
  }
  wait_for = "running"
}

# Region B: the replica bucket, versioned too. Replication writes
# acme-flink-state's flink/orders/ objects under the same keys here.

resource "flinkstate_bucket" "replica" {
  provider   = flinkstate.dr
  bucket     = "acme-flink-state-dr"
  versioning = true
}

# The replication of the job's state prefix (checkpoints and savepoints),
# with its least-privilege role. Objects written from now on replicate,
# asynchronously and in no guaranteed order; deletes do not (no
# delete-marker replication), so the replica keeps what region A discards.
resource "flinkstate_bucket_replication" "state" {
  bucket             = flinkstate_bucket.state.bucket
  destination_bucket = flinkstate_bucket.replica.bucket
  prefixes           = [flinkstate_state_store.orders.prefix]
  role_name          = "flink-orders-replication"
}

# The standby's own state goes beside the replicated prefix, never into it:
# replication keeps writing there until the source is gone, and the
# replicated prefix carries the source store's ownership marker.
resource "flinkstate_state_store" "orders_dr" {
  provider = flinkstate.dr
  bucket   = flinkstate_bucket.replica.bucket
  prefix   = "flink/orders-dr"
}

resource "flinkstate_iam_role" "orders_dr" {
  provider = flinkstate.dr
  name     = "flink-orders-dr"
  irsa {
    oidc_provider_arn = var.oidc_provider_arn_dr
    namespace         = local.namespace
    service_account   = "flink-orders"
  }
  # Its own store, and the replicated prefix it restores from.
  state_store_ids = [flinkstate_state_store.orders_dr.id, "${flinkstate_bucket.replica.bucket}/${local.prefix}"]
}

resource "flinkstate_service_account" "orders_dr" {
  provider      = flinkstate.dr
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
  provider      = flinkstate.dr
  savepoint_dir = "s3://${flinkstate_bucket.replica.bucket}/${local.prefix}/savepoints"
  require       = true
}

resource "flinkstate_deployment" "orders_dr" {
  count           = var.failover ? 1 : 0
  provider        = flinkstate.dr
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
