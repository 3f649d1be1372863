# IRSA: the cluster's OIDC provider vouches for exactly one ServiceAccount.
resource "flinkstate_iam_role" "orders" {
  name = "flink-orders"
  irsa {
    oidc_provider_arn = aws_iam_openid_connect_provider.eks.arn
    namespace         = "data-processing"
    service_account   = "flink-orders"
  }
  state_store_ids = [flinkstate_state_store.orders.id]
}

# EKS Pod Identity: pods.eks.amazonaws.com assumes the role for this namespace,
# ServiceAccount and cluster only. Pair it with flinkstate_pod_identity_association.
resource "flinkstate_iam_role" "payments" {
  name = "flink-payments"
  pod_identity {
    namespace       = "data-processing"
    service_account = "flink-payments"
    cluster_name    = "prod"
  }
  state_store_ids = [flinkstate_state_store.payments.id]
  kms_key_arns    = [aws_kms_key.flink_state.arn] # only for SSE-KMS buckets
}
