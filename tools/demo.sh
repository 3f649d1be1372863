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
# The example takes the bucket's name and keeps force_destroy off; on the
# test bed names are not global, and make demo-destroy removes what the
# real job wrote. Set for apply and destroy alike, so that a destroy after
# any make demo plans against the same values.
export TF_VAR_bucket_name="${FLINKSTATE_DEMO_BUCKET:-acme-flink-state}"
export TF_VAR_force_destroy=true

# No Flink operator runs on the test bed: a model of the operator 1.15's rules
# plays its part while terraform runs, and each deployment's job runs as real
# Flink 2.2.1 (the test bed's own job, with the configuration the provider
# wrote; FLINKSTATE_DEMO_FLINK=model keeps the model's placeholder files).
# See internal/testbed/opmodel. With the operator's jars
# (FLINKSTATE_OPERATOR_DIR, TESTBED.md "The real operator"), the real operator
# 1.15.0 runs instead, its JobManager pods run as real Flink 2.2.1 on the
# node stand-in (internal/testbed/flinkrun/node.go), and kube-controller-manager's
# garbage collector finishes its deletions.
(cd "$root" && go build -o "$state/testbed" ./internal/testbed/cmd/testbed)
"$state/testbed" operator > "$state/logs/demo-operator.log" 2>&1 &
operator_pid=$!
trap 'kill $operator_pid 2>/dev/null; wait $operator_pid 2>/dev/null' EXIT

# With the real operator: the operator and the node stopped when the last
# make demo ended, and with them the job's processes; the node has just
# started the pod again and the job resumes from Kubernetes HA. A savepoint
# (before an upgrade, or the destroy's final one) needs a running job, and
# until the new operator has observed the restarted JobManager its status
# still says READY/RUNNING from before. So wait until Flink's REST API
# answers with a RUNNING job (the node logs where it answers), then until
# the operator reports READY/RUNNING, as on a cluster where nothing
# stopped. Nothing to wait for on a first run.
wait_jobs_running() {
  [ -n "${FLINKSTATE_OPERATOR_DIR:-}" ] || return 0
  kubectl="${FLINKSTATE_TESTBED_KUBECTL:-kubectl}"
  "$kubectl" -n data-processing get flinkdeployment orders >/dev/null 2>&1 || return 0
  echo "demo: waiting for the restarted job and the real operator to report it running"
  for _ in $(seq 1 90); do
    rest="$(grep -o 'Flink of [^ ]*/orders: REST API [^,]*' "$state/logs/demo-operator.log" 2>/dev/null | tail -1 | sed 's/.*REST API //' || true)"
    [ -n "$rest" ] && curl -fs "$rest/jobs/overview" 2>/dev/null | grep -q RUNNING && break
    sleep 2
  done
  for _ in $(seq 1 60); do
    st="$("$kubectl" -n data-processing get flinkdeployment orders -o jsonpath='{.status.jobManagerDeploymentStatus}/{.status.jobStatus.state}' 2>/dev/null || true)"
    [ "$st" = READY/RUNNING ] && return 0
    sleep 2
  done
}

cd "$root/examples/complete"
case "$action" in
apply)
  wait_jobs_running
  terraform apply -auto-approve -input=false -compact-warnings
  # The job runs as real Flink (unless FLINKSTATE_DEMO_FLINK=model) and
  # checkpoints every 60 s (state.checkpoint_interval): wait for the first
  # checkpoint Flink completes, then read the data source again.
  rest=""
  if [ "${FLINKSTATE_DEMO_FLINK:-}" != model ]; then
    echo "demo: waiting for the real job's first checkpoint (about a minute)"
    for _ in $(seq 1 90); do
      [ -n "$rest" ] || rest="$(grep -o 'Flink of [^ ]*/orders: REST API [^,]*' "$state/logs/demo-operator.log" | tail -1 | sed 's/.*REST API //' || true)"
      job="$( [ -z "$rest" ] || curl -fs "$rest/jobs/overview" | grep RUNNING | sed 's/.*"jid":"\([0-9a-f]*\)".*/\1/' || true)"
      if [ -n "$job" ] && curl -fs "$rest/jobs/$job/checkpoints" | grep -q '"completed":[1-9]'; then
        terraform apply -refresh-only -auto-approve -input=false -compact-warnings >/dev/null
        break
      fi
      sleep 2
    done
  fi
  echo
  echo "== What a platform engineer wants to see =="
  printf '  checkpoint dir:     %s\n' "$(terraform output -raw checkpoint_dir)"
  printf '  IAM role:           %s\n' "$(terraform output -raw role_arn)"
  printf '  savepoint (before upgrade): %s\n' "$(terraform output -raw snapshot_path)"
  printf '  latest checkpoint:  %s\n' "$(terraform output -raw latest_checkpoint)"
  [ -z "${rest:-}" ] || printf '  Flink REST API:     %s (while make demo runs)\n' "$rest"
  if [ -n "${FLINKSTATE_OPERATOR_DIR:-}" ]; then
    # The real operator's admission webhook refuses what its validator
    # refuses before anything is stored (a forbidden key here).
    kubectl="${FLINKSTATE_TESTBED_KUBECTL:-kubectl}"
    echo
    echo "== The operator's admission webhook: kubectl apply of an invalid FlinkDeployment =="
    if out="$("$kubectl" apply -f - 2>&1 <<'YAML'
apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata:
  name: invalid-demo
  namespace: data-processing
spec:
  image: flink:2.2.1-java17
  flinkVersion: v2_2
  serviceAccount: flink-orders
  flinkConfiguration:
    kubernetes.cluster-id: other
  jobManager: {resource: {memory: 2048m, cpu: 1}}
  taskManager: {resource: {memory: 2048m, cpu: 1}}
  job: {jarURI: "local:///opt/flink/examples/streaming/StateMachineExample.jar", upgradeMode: stateless}
YAML
)"; then
      echo "  accepted (no webhook runs: see the demo's operator log)"; "$kubectl" -n data-processing delete flinkdeployment invalid-demo --wait=false >/dev/null 2>&1 || true
    else
      printf '  refused: %s\n' "$out"
    fi
    echo
    echo "Upgrade the image (a real savepoint first, path in snapshot_path): TF_VAR_image=flink:2.2.1-java17-next make demo"
  fi
  echo
  echo "Destroy it:        make demo-destroy"
  echo "Stop the test bed: make testbed-down"
  ;;
destroy)
  wait_jobs_running
  terraform destroy -auto-approve -input=false -compact-warnings
  ;;
*)
  echo "usage: demo.sh apply|destroy"; exit 2 ;;
esac
