# A bucket is imported by its name.
terraform import flinkstate_bucket.state acme-flink-state
