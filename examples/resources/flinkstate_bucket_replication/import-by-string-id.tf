# Replication is imported by the source bucket's name; its role is the one the configuration names.
import {
  to = flinkstate_bucket_replication.state
  id = "acme-flink-state"
}
