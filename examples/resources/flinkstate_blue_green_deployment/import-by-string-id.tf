# A blue/green deployment is imported as namespace/name.
import {
  to = flinkstate_blue_green_deployment.orders
  id = "data-processing/orders"
}
