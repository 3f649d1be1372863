# The provider of the other region, for the replica bucket.
provider "flinkstate" {
  alias = "dr"
  aws {
    region = "us-west-2"
  }
}

resource "flinkstate_bucket" "state" {
  bucket     = "acme-flink-state"
  versioning = true # S3 replication needs versioning on the source
}

resource "flinkstate_state_store" "orders" {
  bucket = flinkstate_bucket.state.bucket
  prefix = "flink/orders"
}

# The replica: a state bucket like any other (hardened), in the other region.
resource "flinkstate_bucket" "replica" {
  provider   = flinkstate.dr
  bucket     = "acme-flink-state-dr"
  versioning = true # and on the destination
}

resource "flinkstate_bucket_replication" "state" {
  bucket             = flinkstate_bucket.state.bucket
  destination_bucket = flinkstate_bucket.replica.bucket
  prefixes           = [flinkstate_state_store.orders.prefix]
  role_name          = "flink-state-replication"
}
