# A state store is imported as bucket/prefix.
import {
  to = flinkstate_state_store.orders
  id = "acme-flink-state/flink/orders"
}
