# A snapshot is imported as namespace/name.
import {
  to = flinkstate_snapshot.adhoc
  id = "data-processing/orders-adhoc-x7k2p"
}
