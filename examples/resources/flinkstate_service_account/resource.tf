resource "flinkstate_service_account" "orders" {
  namespace     = "data-processing"
  name          = "flink-orders"
  irsa_role_arn = "arn:aws:iam::123456789012:role/flink-orders"

  # Binds the account to the Role "flink" that the operator's Helm chart creates.
  role_binding {
    role_name = "flink"
  }
}
