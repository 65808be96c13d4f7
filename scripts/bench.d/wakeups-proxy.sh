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
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
. "$here/proxy-common.sh"
env "${broker_env[@]}" "$bin" >"$out/broker.out" 2>"$out/broker.err" &
pid=$!
for _ in $(seq 1 120); do curl -fs -m 2 "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.5; done
connect_account
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
