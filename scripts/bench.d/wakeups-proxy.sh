#!/usr/bin/env bash
# Thread switches and CPU per proxied call: GET /proxy/echo on a release broker against the release fake OAuth 2.0
# provider, with the calls of `scripts/bench-broker proxy` (wrk -t2, the API key and Broker-Account, the audit file on,
# the access log off, the background refresher off) over CONNECTIONS (64), DURATION (5s) each: the provider answering
# at once, then after DELAY_MS (20) ms. Before and after each run it sums the broker's threads' context switches
# (/proc/PID/task/*/status: voluntary, a thread that went to sleep and was woken, and nonvoluntary, one the scheduler
# took the core from) and its CPU ticks. A voluntary switch per call is a thread hop the design costs whatever the
# load; nonvoluntary ones and the CPU grow with what else runs on the machine, so those are reported, not compared.
# Usage: scripts/bench.d/wakeups-proxy.sh TOKEN_BROKER FAKE_PROVIDER OUT_DIR
# Prints one line per run: "PATH requests=N voluntary/request=V nonvoluntary/request=W cpu_us/request=C threads=T".
set -euo pipefail
bin=$1 fake=$2 out=$3 connections=${CONNECTIONS:-64} duration=${DURATION:-5s} delay=${DELAY_MS:-20}
mkdir -p "$out"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
key=bench-api-key-0123456789abcdef secret=bench-acme-secret-0123456789
"$fake" --kind oauth2 --client-secret "$secret" --secret-variable FAKE_ACME_SECRET --token-lifetime 86400 \
  --providers-file "$out/providers.fake.json" >"$out/fake.port" 2>"$out/fake.err" &
fake_pid=$! pid=
trap 'kill $fake_pid $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do grep -q . "$out/fake.port" 2>/dev/null && break; sleep 0.05; done
fake_port=$(head -1 "$out/fake.port")
python3 - "$out/providers.fake.json" "$out/providers.json" "$fake_port" <<'PY'
import json, sys
providers = json.load(open(sys.argv[1]))
providers["providers"]["acme"].update({"api_base_url": "http://127.0.0.1:%s/_api" % sys.argv[3], "api_allow_private": True})
json.dump(providers, open(sys.argv[2], "w"))
PY
port=$(free_port)
rm -rf "$out/data"
env BROKER_PORT="$port" BROKER_DATA_DIR="$out/data" BROKER_API_KEY="$key" BROKER_PROVIDERS_FILE="$out/providers.json" \
  FAKE_ACME_SECRET="$secret" BROKER_PUBLIC_URL="http://127.0.0.1:$port" BROKER_ACCESS_LOG=off BROKER_MAX_CONNECTIONS=20000 \
  BROKER_REFRESH_INTERVAL=0 BROKER_AUDIT_LOG="$out/audit.jsonl" "$bin" >"$out/broker.out" 2>"$out/broker.err" &
pid=$!
for _ in $(seq 1 120); do curl -fs -m 2 "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.5; done
account=$(curl -fsS -L -c "$out/cookies" -b "$out/cookies" -H 'Accept: application/json' \
  "http://127.0.0.1:$port/authorize?provider=acme" | python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')
headers=(-H "Authorization: Bearer $key" -H "Broker-Account: $account")
# "voluntary nonvoluntary" summed over the broker's threads now.
switches() {
  cat /proc/"$pid"/task/*/status 2>/dev/null | awk '/^voluntary_ctxt_switches/ {v += $2} /^nonvoluntary_ctxt_switches/ {n += $2} END {print v, n}'
}
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
wrk -t2 -c"$connections" -d2s "${headers[@]}" "http://127.0.0.1:$port/proxy/echo" >/dev/null
for path in /proxy/echo "/proxy/echo?delay_ms=$delay"; do
  read -r v0 n0 <<<"$(switches)"; t0=$(ticks)
  wrk -t2 -c"$connections" -d"$duration" "${headers[@]}" "http://127.0.0.1:$port$path" >"$out/wrk.txt"
  read -r v1 n1 <<<"$(switches)"; t1=$(ticks)
  n=$(awk '/requests in/ {print $1}' "$out/wrk.txt")
  awk -v p="$path" -v n="$n" -v v=$((v1 - v0)) -v w=$((n1 - n0)) -v t=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" \
    -v threads="$(ls /proc/"$pid"/task | wc -l)" \
    'BEGIN {printf "%s requests=%d voluntary/request=%.2f nonvoluntary/request=%.2f cpu_us/request=%.1f threads=%d\n",
      p, n, v / n, w / n, t * 1e6 / hz / n, threads}'
done
kill "$pid"; wait "$pid" 2>/dev/null || true
