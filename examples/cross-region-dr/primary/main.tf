# Disaster recovery across regions, region A's half: the job runs in
# us-east-1 and takes a savepoint every 10 minutes; S3 replication copies its
# state prefix to a versioned bucket in us-west-2. Apply it as usual. The
# failover is ../dr, a root module of its own that needs nothing of this one
# (pass it this module's outputs replica_bucket and replica_prefix).
# See docs/guides/disaster-recovery-across-regions.md.
#
# Assumes: in us-east-1, an EKS cluster (kubeconfig context flink-us-east-1)
# running the Flink Kubernetes Operator, its CRDs installed, the namespace
# data-processing created and watched, with the Role "flink" its Helm chart
# creates there; that cluster's IAM OIDC provider (var.oidc_provider_arn);
# AWS credentials that may manage S3 in both regions and IAM.

terraform {
  required_providers {
    flinkstate = {
      source  = "flinkstate/flinkstate"
      version = "~> 0.1"
    }
  }
}

variable "bucket_name" {
  description = "Name of region A's state bucket (created here). S3 bucket names are global: pick one of your own."
  type        = string
}

variable "replica_bucket_name" {
  description = "Name of the replica bucket in us-west-2 (created here; ../dr takes it as replica_bucket)."
  type        = string
}

variable "oidc_provider_arn" {
  description = "ARN of the us-east-1 cluster's IAM OIDC provider."
  type        = string
}

provider "flinkstate" {
  aws {
    region = "us-east-1"
  }
  kubernetes {
    config_context = "flink-us-east-1"
  }
}

# Region B's S3, for the replica bucket only.
provider "flinkstate" {
  alias = "replica"
  aws {
    region = "us-west-2"
  }
}

locals {
  namespace = "data-processing"
  prefix    = "flink/orders"
}

# The state bucket, versioned (S3 replication needs versioning on both
# buckets), and the job.

resource "flinkstate_bucket" "state" {
  bucket     = var.bucket_name
  versioning = true
}

resource "flinkstate_state_store" "orders" {
  bucket = flinkstate_bucket.state.bucket
  prefix = local.prefix
}

resource "flinkstate_iam_role" "orders" {
  name = "flink-orders"
  irsa {
    oidc_provider_arn = var.oidc_provider_arn
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

# The replica bucket in us-west-2, versioned too. Replication writes the
# state bucket's flink/orders/ objects under the same keys there.
resource "flinkstate_bucket" "replica" {
  provider   = flinkstate.replica
  bucket     = var.replica_bucket_name
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

# What ../dr needs, as its variables replica_bucket and replica_prefix.
output "replica_bucket" {
  value = flinkstate_bucket.replica.bucket
}

output "replica_prefix" {
  value = flinkstate_state_store.orders.prefix
}
