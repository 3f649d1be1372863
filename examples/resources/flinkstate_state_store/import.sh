# A state store is imported as bucket/prefix.
terraform import flinkstate_state_store.orders acme-flink-state/flink/orders
