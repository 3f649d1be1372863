# A role is imported by its name; its identity block and stores are read from its policies.
terraform import flinkstate_iam_role.orders flink-orders
