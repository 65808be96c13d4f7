#!/usr/bin/env bash
# GET /healthz on two release brokers up side by side, runs interleaved so both see the same load: wrk -t2 -c64 -d5s
# --latency against A, then B, RUNS (5) times after a 2 s warm-up of each; access log and background refresher off.
# Prints per run "run R SIDE load=L req/s=N p99=P cpu_us/req=C" (C from the broker's utime + stime in /proc/PID/stat,
# the figure the machine's load changes least).
# Usage: scripts/bench.d/healthz-ab.sh TOKEN_BROKER_A TOKEN_BROKER_B
set -euo pipefail
a=$1 b=$2 runs=${RUNS:-5}
out=$(mktemp -d)
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
start() {
  BROKER_PORT=$2 BROKER_DATA_DIR=$out/$3 BROKER_ACCESS_LOG=off BROKER_REFRESH_INTERVAL=0 BROKER_MAX_CONNECTIONS=20000 \
    "$1" >"$out/$3.log" 2>&1 &
}
pa=$(free_port) pb=$(free_port)
start "$a" "$pa" a; ia=$!
start "$b" "$pb" b; ib=$!
trap 'kill $ia $ib 2>/dev/null || true; rm -rf "$out"' EXIT
for p in $pa $pb; do for _ in $(seq 1 120); do curl -fs -m 2 "http://127.0.0.1:$p/healthz" >/dev/null && break; sleep 0.5; done; done
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
for p in $pa $pb; do wrk -t2 -c64 -d2s "http://127.0.0.1:$p/healthz" >/dev/null; done
for r in $(seq 1 "$runs"); do
  for side in A B; do
    if [ $side = A ]; then p=$pa i=$ia; else p=$pb i=$ib; fi
    t0=$(ticks $i) load=$(cut -d' ' -f1 /proc/loadavg)
    wrk -t2 -c64 -d5s --latency "http://127.0.0.1:$p/healthz" >"$out/wrk.txt"
    t1=$(ticks $i)
    awk -v r="$r" -v s="$side" -v l="$load" -v t=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" '
      /requests in/ {n = $1} /Requests\/sec/ {rps = $2} $1 == "99%" {p99 = $2}
      END {printf "run %s %s load=%s req/s=%s p99=%s cpu_us/req=%.1f\n", r, s, l, rps, p99, t * 1e6 / hz / n}' "$out/wrk.txt"
  done
done
