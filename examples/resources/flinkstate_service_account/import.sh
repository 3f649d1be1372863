# A service account is imported as namespace/name (its RoleBinding, if any, has the same name).
terraform import flinkstate_service_account.orders data-processing/flink-orders
