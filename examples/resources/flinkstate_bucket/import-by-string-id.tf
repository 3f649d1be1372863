# A bucket is imported by its name.
import {
  to = flinkstate_bucket.state
  id = "acme-flink-state"
}
