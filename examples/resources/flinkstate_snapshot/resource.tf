# An ad-hoc savepoint, e.g. to keep before a risky change made elsewhere.
# For a savepoint before every upgrade, use savepoint_before_upgrade on
# flinkstate_deployment instead: a snapshot that references the deployment is
# taken after the deployment's update, not before it.
resource "flinkstate_snapshot" "adhoc" {
  namespace       = "data-processing"
  deployment_name = "orders"
  type            = "savepoint"
  name_prefix     = "orders-adhoc-"

  # false (default): the savepoint's files stay when this resource is destroyed.
  dispose_on_delete = false

  timeouts {
    create = "15m"
  }
}

output "savepoint_path" {
  value = flinkstate_snapshot.adhoc.path
}
