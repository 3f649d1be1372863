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

resource "flinkstate_service_account" "orders" {
  namespace     = var.namespace
  name          = "flink-orders"
  irsa_role_arn = "arn:aws:iam::000000000000:role/flink-orders"
  role_binding {
    role_name = "flink"
  }
}

output "bucket_arn" {
  value = flinkstate_bucket.state.arn
}

output "service_account" {
  value = flinkstate_service_account.orders.id
}
