# A blue/green deployment is imported as namespace/name.
terraform import flinkstate_blue_green_deployment.orders data-processing/orders
