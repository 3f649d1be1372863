# A service account is imported as namespace/name (its RoleBinding, if any, has the same name).
import {
  to = flinkstate_service_account.orders
  id = "data-processing/flink-orders"
}
