# An association is imported as cluster_name,association_id.
terraform import flinkstate_pod_identity_association.payments prod,a-0123456789abcdef0
