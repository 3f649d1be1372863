#!/usr/bin/env bash
# make demo: apply examples/complete against the local test bed with the
# provider just built, installed through a dev_overrides CLI configuration.
# The test bed must be up (make testbed-up) and the provider built (make build).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
action="${1:-apply}"
state="${FLINKSTATE_TESTBED_DIR:-$root/.testbed}"
[ -f "$state/env" ] || { echo "demo: no test bed running; run make testbed-up (make demo does)"; exit 1; }
# shellcheck disable=SC1091
. "$state/env"

# A CLI configuration that makes terraform use bin/terraform-provider-flinkstate.
rc="$state/terraformrc"
cat > "$rc" <<RC
provider_installation {
  dev_overrides {
    "flinkstate/flinkstate" = "$root/bin"
  }
  direct {}
}
RC
export TF_CLI_CONFIG_FILE="$rc"
export TF_IN_AUTOMATION=1

# What a real EKS cluster with the operator would already have: the
# namespace, and the cluster's IAM OIDC provider (in the AWS emulator).
oidc_arn="$(cd "$root" && go run ./internal/testbed/cmd/testbed prereqs)"
export TF_VAR_oidc_provider_arn="$oidc_arn"

# No Flink operator runs on the test bed: a model of the operator 1.15's rules
# plays its part while terraform runs (deployments are reconciled and their
# jobs write checkpoints to S3 as Flink would; snapshots complete into the
# savepoint dir). See internal/testbed/operator.go.
(cd "$root" && go build -o "$state/testbed" ./internal/testbed/cmd/testbed)
"$state/testbed" operator > "$state/logs/demo-operator.log" 2>&1 &
operator_pid=$!
trap 'kill $operator_pid 2>/dev/null; wait $operator_pid 2>/dev/null' EXIT

cd "$root/examples/complete"
case "$action" in
apply)
  terraform apply -auto-approve -input=false -compact-warnings
  echo
  echo "== What a platform engineer wants to see =="
  printf '  checkpoint dir:     %s\n' "$(terraform output -raw checkpoint_dir)"
  printf '  IAM role:           %s\n' "$(terraform output -raw role_arn)"
  printf '  savepoint (before upgrade): %s\n' "$(terraform output -raw snapshot_path)"
  printf '  latest checkpoint:  %s\n' "$(terraform output -raw latest_checkpoint)"
  echo
  echo "Destroy it:        make demo-destroy"
  echo "Stop the test bed: make testbed-down"
  ;;
destroy)
  terraform destroy -auto-approve -input=false -compact-warnings
  ;;
*)
  echo "usage: demo.sh apply|destroy"; exit 2 ;;
esac
