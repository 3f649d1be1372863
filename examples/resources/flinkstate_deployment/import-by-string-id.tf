# A deployment is imported as namespace/name.
import {
  to = flinkstate_deployment.orders
  id = "data-processing/orders"
}
