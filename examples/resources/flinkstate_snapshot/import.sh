# A snapshot is imported as namespace/name.
terraform import flinkstate_snapshot.before_upgrade data-processing/orders-before-upgrade-x7k2p
