# A snapshot is imported as namespace/name.
terraform import flinkstate_snapshot.adhoc data-processing/orders-adhoc-x7k2p
