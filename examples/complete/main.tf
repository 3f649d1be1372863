# The whole stack for one Flink application's state, as DESIGN.md describes
# it. `make demo` applies it against the local test bed (the provider blocks
# are empty: AWS_ENDPOINT_URL, AWS_REGION and KUBECONFIG come from
# .testbed/env). Against a real account and cluster, set the aws and
# kubernetes blocks instead (see docs/index.md).

terraform {
  required_providers {
    flinkstate = {
      source = "flinkstate/flinkstate"
    }
  }
}

provider "flinkstate" {}

variable "namespace" {
  description = "Namespace the Flink job runs in (created by the operator's Helm chart on a real cluster)."
  type        = string
  default     = "data-processing"
}

resource "flinkstate_bucket" "state" {
  bucket        = "acme-flink-state"
  force_destroy = true # demo only: lets `make demo-destroy` remove the test bed's objects
  tags = {
    app = "flink"
  }
}

resource "flinkstate_state_store" "orders" {
  bucket        = flinkstate_bucket.state.bucket
  prefix        = "flink/orders"
  force_destroy = true # demo only
}

# On EKS this is the cluster's aws_iam_openid_connect_provider; the test bed's
# AWS emulator has one made by `make demo` (tools/demo.sh).
variable "oidc_provider_arn" {
  description = "ARN of the cluster's IAM OIDC provider."
  type        = string
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

output "bucket_arn" {
  value = flinkstate_bucket.state.arn
}

output "checkpoint_dir" {
  value = flinkstate_state_store.orders.checkpoint_dir
}

output "role_arn" {
  value = flinkstate_iam_role.orders.arn
}

output "service_account" {
  value = flinkstate_service_account.orders.id
}
