# The least-privilege policy for a role managed elsewhere.
data "flinkstate_policy_document" "orders" {
  state_store_ids = [flinkstate_state_store.orders.id]
}

resource "aws_iam_role_policy" "flink_state" {
  role   = aws_iam_role.existing.name
  policy = data.flinkstate_policy_document.orders.json
}
