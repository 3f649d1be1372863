# The whole stack for one Flink application's state, as a platform engineer
# writes it: bucket, state store, IRSA role, ServiceAccount, FlinkDeployment
# and the latest checkpoint.
#
# Assumes: an EKS cluster running the Flink Kubernetes Operator (its CRDs
# installed, the namespace created and watched, and the Role "flink" its Helm
# chart creates there), the cluster's IAM OIDC provider (var.oidc_provider_arn),
# and AWS and Kubernetes credentials in the environment (the provider block
# is empty: see docs/index.md for its aws and kubernetes blocks).
#
# `make demo` applies it against the local test bed (AWS_ENDPOINT_URL,
# AWS_REGION, the AWS keys and KUBECONFIG come from .testbed/env; the demo
# sets bucket_name and force_destroy itself).

terraform {
  required_providers {
    flinkstate = {
      source  = "flinkstate/flinkstate"
      version = "~> 0.1"
    }
  }
}

provider "flinkstate" {}

variable "bucket_name" {
  description = "Name of the S3 bucket for checkpoints, savepoints and HA metadata. S3 bucket names are global: pick one of your own."
  type        = string
}

variable "force_destroy" {
  description = "Let terraform destroy delete the bucket's objects and the store's checkpoints and savepoints. Keep false for real jobs."
  type        = bool
  default     = false
}

variable "namespace" {
  description = "Namespace the Flink job runs in (created with the operator's Helm chart on a real cluster)."
  type        = string
  default     = "data-processing"
}

variable "oidc_provider_arn" {
  description = "ARN of the cluster's IAM OIDC provider (aws_iam_openid_connect_provider on EKS; make demo creates one in the emulator)."
  type        = string
}

variable "image" {
  description = "Flink image; changing it takes a savepoint first (savepoint_before_upgrade, path in upgrade_savepoint_path)."
  type        = string
  default     = "flink:2.2.1-java17"
}

resource "flinkstate_bucket" "state" {
  bucket        = var.bucket_name
  force_destroy = var.force_destroy
  tags = {
    app = "flink"
  }
}

resource "flinkstate_state_store" "orders" {
  bucket        = flinkstate_bucket.state.bucket
  prefix        = "flink/orders"
  force_destroy = var.force_destroy
}

resource "flinkstate_iam_role" "orders" {
  name = "flink-orders"
  irsa {
    oidc_provider_arn = var.oidc_provider_arn
    namespace         = var.namespace
    service_account   = "flink-orders"
  }
  state_store_ids = [flinkstate_state_store.orders.id]
}

resource "flinkstate_service_account" "orders" {
  namespace     = var.namespace
  name          = "flink-orders"
  irsa_role_arn = flinkstate_iam_role.orders.arn
  role_binding {
    role_name = "flink"
  }
}

resource "flinkstate_deployment" "orders" {
  namespace       = var.namespace
  name            = "orders"
  image           = var.image
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
    upgrade_mode = "last-state"
  }
  state {
    store_id            = flinkstate_state_store.orders.id
    backend             = "rocksdb"
    incremental         = true
    checkpoint_interval = "2s" # what StateMachineExample sets in code, which wins
    num_retained        = 3
  }
  # The most the job will ever scale to, set before its first start: its keyed
  # state is split into this many key groups, and Flink cannot raise it later
  # without losing that state (unset, Flink would choose 128 for parallelism 2).
  flink_configuration = {
    "pipeline.max-parallelism" = "128"
  }
  # An update that changes the job (here: a new var.image) first takes a
  # savepoint and waits for COMPLETED; only then is the new spec applied.
  savepoint_before_upgrade {
    timeout = "10m"
  }
  # Not only RUNNING: create and update end once Flink has completed a
  # checkpoint of the new spec (read from the checkpoint directory).
  wait_for = "checkpoint"
}

data "flinkstate_latest_checkpoint" "orders" {
  checkpoint_dir = flinkstate_state_store.orders.checkpoint_dir
  depends_on     = [flinkstate_deployment.orders]
}

output "checkpoint_dir" {
  value = flinkstate_state_store.orders.checkpoint_dir
}

output "role_arn" {
  value = flinkstate_iam_role.orders.arn
}

output "effective_flink_configuration" {
  value = flinkstate_deployment.orders.effective_flink_configuration
}

output "snapshot_path" {
  value = coalesce(flinkstate_deployment.orders.upgrade_savepoint_path, "none yet (taken before the next upgrade)")
}

output "latest_checkpoint" {
  value = data.flinkstate_latest_checkpoint.orders.found ? data.flinkstate_latest_checkpoint.orders.path : "none yet"
}
