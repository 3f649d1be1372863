data "flinkstate_latest_savepoint" "orders" {
  namespace       = "data-processing"
  deployment_name = "orders"
  type            = "savepoint"
}
