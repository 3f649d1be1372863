# A role is imported by its name; its identity block and stores are read from its policies.
import {
  to = flinkstate_iam_role.orders
  id = "flink-orders"
}
