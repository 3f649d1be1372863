# A savepoint taken whenever the image changes, before the upgrade rolls out.
resource "flinkstate_snapshot" "before_upgrade" {
  namespace       = "data-processing"
  deployment_name = "orders"
  type            = "savepoint"
  name_prefix     = "orders-before-upgrade-"
  triggers = {
    image = var.image
  }

  # false (default): the savepoint's files stay when this resource is destroyed.
  dispose_on_delete = false

  timeouts {
    create = "15m"
  }
}

output "savepoint_path" {
  value = flinkstate_snapshot.before_upgrade.path
}
