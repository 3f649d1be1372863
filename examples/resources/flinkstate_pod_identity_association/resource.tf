resource "flinkstate_pod_identity_association" "payments" {
  cluster_name    = "prod"
  namespace       = "data-processing"
  service_account = "flink-payments"
  role_arn        = flinkstate_iam_role.payments.arn
}
