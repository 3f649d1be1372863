#!/usr/bin/env bash
# Benchmark (not a test): `terraform plan` creating N flinkstate_deployment
# resources against a cluster endpoint that logs every request it gets,
# versus the same number of built-in terraform_data resources, and of
# floor_data from tools/bench/floorprovider: the smallest provider the
# plugin framework serves, i.e. what any plugin provider costs terraform
# (three plugin launches per plan) before its own schema and logic.
# Reports median wall time of RUNS plans, the provider process's peak RSS
# (VmHWM, sampled from /proc during one more plan) and the number of API
# requests.
# Usage: tools/bench/plan.sh [RUNS]   (make bench-plan)
# BENCH_SIZES sets the numbers of resources planned (default "1 20 200").
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
runs="${1:-5}"
work="$(mktemp -d)"
trap 'kill $srv_pid 2>/dev/null || true; rm -rf "$work"' EXIT

(cd "$root" && go build -trimpath -o "$work/bin/terraform-provider-flinkstate" .)
(cd "$root" && go build -trimpath -o "$work/floorbin/terraform-provider-floor" ./tools/bench/floorprovider)
cat > "$work/terraformrc" <<RC
provider_installation {
  dev_overrides {
    "flinkstate/flinkstate" = "$work/bin"
    "flinkstate/floor"      = "$work/floorbin"
  }
  direct {}
}
RC
export TF_CLI_CONFIG_FILE="$work/terraformrc" TF_IN_AUTOMATION=1 AWS_EC2_METADATA_DISABLED=true

# A loopback HTTP server that logs each request (it would be the API server).
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$work" 2> "$work/requests.log" >/dev/null &
srv_pid=$!
sleep 0.5

gen() { # kind n dir
  local kind=$1 n=$2 dir=$3
  mkdir -p "$dir"
  if [ "$kind" = data ]; then
    for i in $(seq 1 "$n"); do printf 'resource "terraform_data" "d%d" {\n  input = "orders-%d"\n}\n' "$i" "$i"; done > "$dir/main.tf"
    return
  fi
  if [ "$kind" = floor ]; then
    printf 'terraform {\n  required_providers {\n    floor = { source = "flinkstate/floor" }\n  }\n}\n' > "$dir/main.tf"
    for i in $(seq 1 "$n"); do printf 'resource "floor_data" "d%d" {\n  input = "orders-%d"\n}\n' "$i" "$i"; done >> "$dir/main.tf"
    return
  fi
  cat > "$dir/main.tf" <<HCL
terraform {
  required_providers {
    flinkstate = { source = "flinkstate/flinkstate" }
  }
}
provider "flinkstate" {
  kubernetes {
    host  = "http://127.0.0.1:$port"
    token = "bench"
  }
}
HCL
  for i in $(seq 1 "$n"); do cat >> "$dir/main.tf" <<HCL
resource "flinkstate_deployment" "d$i" {
  namespace       = "data-processing"
  name            = "orders-$i"
  image           = "flink:2.2.1-java17"
  flink_version   = "2.2.1"
  service_account = "flink-orders"
  identity        = "irsa"
  job_manager {
    memory = "2048m"
    cpu    = 1
  }
  task_manager {
    memory     = "2048m"
    cpu        = 1
    task_slots = 2
  }
  job {
    jar_uri      = "local:///opt/flink/examples/streaming/StateMachineExample.jar"
    parallelism  = 2
    upgrade_mode = "last-state"
  }
  state {
    store_id            = "acme-flink-state/flink/orders-$i"
    checkpoint_interval = "60s"
  }
}
HCL
  done
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# Samples the provider's peak RSS (VmHWM, kB) while a plan runs.
peak_rss() {
  local max=0 pid hwm
  while kill -0 "$1" 2>/dev/null; do
    for pid in $(pgrep -f "$work/(bin|floorbin)/terraform-provider-" || true); do
      hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
      [ "${hwm:-0}" -gt "$max" ] && max=$hwm
    done
    sleep 0.01
  done
  echo "$max"
}

printf '| resources | kind | median plan time (s) | provider peak RSS (MiB) | API requests |\n|---|---|---|---|---|\n'
for n in ${BENCH_SIZES:-1 20 200}; do
  for kind in data floor flinkstate; do
    dir="$work/$kind-$n"
    gen "$kind" "$n" "$dir"
    (cd "$dir" && terraform init -input=false >/dev/null 2>&1 || true)
    : > "$work/requests.log"
    # Floor: the SDK's logging off too, its best case (flinkstate turns it
    # off itself when terraform shows no provider logs).
    quiet=()
    [ "$kind" = floor ] && quiet=(TF_LOG_SDK=off TF_LOG_SDK_PROTO=off TF_LOG_SDK_FRAMEWORK=off)
    times=() peak=0
    # Timed runs without the memory sampler (it would compete for the CPUs).
    for r in $(seq 1 "$runs"); do
      start=$(date +%s.%N)
      (cd "$dir" && env "${quiet[@]}" terraform plan -input=false -refresh=false -no-color >/dev/null 2>"$work/plan.err") || { cat "$work/plan.err"; exit 1; }
      end=$(date +%s.%N)
      times+=("$(echo "$end - $start" | bc)")
    done
    # One more run, sampled, for the provider's peak memory.
    if [ "$kind" != data ]; then
      (cd "$dir" && env "${quiet[@]}" terraform plan -input=false -refresh=false -no-color >/dev/null 2>"$work/plan.err") &
      plan_pid=$!
      peak=$(peak_rss "$plan_pid")
      wait "$plan_pid" || { cat "$work/plan.err"; exit 1; }
    fi
    med=$(printf '%s\n' "${times[@]}" | median)
    reqs=$(grep -c '"' "$work/requests.log" || true)
    if [ "$kind" = data ]; then rss="n/a"; else rss=$(echo "scale=1; $peak / 1024" | bc); fi
    [ "$kind" = floor ] && reqs="n/a"
    printf '| %d | %s | %.3f | %s | %s |\n' "$n" "$kind" "$med" "$rss" "$reqs"
  done
done
