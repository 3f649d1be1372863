# An association is imported as cluster_name,association_id.
import {
  to = flinkstate_pod_identity_association.payments
  id = "prod,a-0123456789abcdef0"
}
