# Replication is imported by the source bucket's name; its role is the one the configuration names.
terraform import flinkstate_bucket_replication.state acme-flink-state
