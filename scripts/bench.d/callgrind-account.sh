#!/usr/bin/env bash
# Instructions per request of GET /account against /healthz, the broker under callgrind with the load of
# `scripts/bench-broker account` (wrk -t2 -c64, the API key, the audit file on, the access log off; the background
# refresher off so a sweep does not land in the counts). Counting starts after a warm-up; each path gets 10 s of
# load, and the counters are dumped between the two. Instruction counts are repeatable on a busy machine; the
# requests served under valgrind are fewer, so the figure that matters is the count per request.
# Usage: scripts/bench.d/callgrind-account.sh TOKEN_BROKER DATA_DIR OUT_DIR   (DATA_DIR from `broker-bench seed`)
# WARMUP=S reads /account for S seconds before counting (default 3): under valgrind 3 s reach only part of 10,000
# accounts, so a count after it includes first reads, which fill the broker's per-account caches.
# Prints "<path> requests=N Ir=I Ir/request=I/N"; OUT_DIR keeps callgrind.out.* for callgrind_annotate.
# Memory misses too: VALGRIND_OPTS="--cache-sim=yes --LL=2097152,16,64" counts the lines each request misses; with
# SEED=N (account.lua) the warm-up reads exactly the accounts the counted run reads, so ACCOUNTS=10000 WARMUP=15 counts
# warm reads of 10,000 accounts.
set -euo pipefail
bin=$1 data=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
cc -shared -fPIC -O2 -o "$out/valgrind-sigsuspend.so" "$here/valgrind-sigsuspend.c"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export BROKER_API_KEY=bench-api-key-0123456789abcdef ACCOUNTS=${ACCOUNTS:-10000}
env BROKER_PORT="$port" BROKER_DATA_DIR="$data" BROKER_ACCESS_LOG=off BROKER_MAX_CONNECTIONS=20000 \
  BROKER_REFRESH_INTERVAL=0 BROKER_AUDIT_LOG="$out/audit.jsonl" LD_PRELOAD="$out/valgrind-sigsuspend.so" \
  valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.out" --instr-atstart=no "$bin" \
  >"$out/broker.out" 2>"$out/broker.err" &
pid=$!
trap 'kill "$pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do curl -fs -m 2 "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 1; done
wrk -t2 -c64 -d3s "http://127.0.0.1:$port/healthz" >/dev/null
wrk -t2 -c64 -d"${WARMUP:-3}s" -s "$here/account.lua" "http://127.0.0.1:$port/account" >/dev/null
callgrind_control -i on "$pid" >/dev/null 2>&1
wrk -t2 -c64 -d10s "http://127.0.0.1:$port/healthz" >"$out/wrk-healthz.txt"
callgrind_control -d healthz "$pid" >/dev/null 2>&1
wrk -t2 -c64 -d10s -s "$here/account.lua" "http://127.0.0.1:$port/account" >"$out/wrk-account.txt"
callgrind_control -d account "$pid" >/dev/null 2>&1
kill "$pid"; wait "$pid" 2>/dev/null || true
for path in healthz account; do
  n=$(awk '/requests in/ {print $1}' "$out/wrk-$path.txt")
  ir=$(awk '/^summary:/ {print $2}' "$(grep -l "Trigger: dump $path" "$out"/callgrind.out.*)")
  echo "/$path requests=$n Ir=$ir Ir/request=$((ir / n))"
done
