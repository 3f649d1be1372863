# A deployment is imported as namespace/name.
terraform import flinkstate_deployment.orders data-processing/orders
