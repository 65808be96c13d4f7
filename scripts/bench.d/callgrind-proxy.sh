#!/usr/bin/env bash
# Instructions per proxied call: GET /proxy/echo on a broker under callgrind, against the release fake OAuth 2.0
# provider (not instrumented) answering at once, with the calls of `scripts/bench-broker proxy` (wrk -t2, the API key and
# Broker-Account, the audit file on, the access log off, the background refresher off) over CONNECTIONS (16: at 64 most
# calls wait past wrk's 2 s timeout under valgrind). The account is
# connected through a real /authorize -> fake -> /callback flow first. Counting starts after a warm-up and covers 10 s
# of load. Instruction counts are repeatable on a busy machine; far fewer calls are served under valgrind, so the
# figure that matters is the count per call.
# Usage: scripts/bench.d/callgrind-proxy.sh TOKEN_BROKER FAKE_PROVIDER OUT_DIR
# Prints "/proxy/echo requests=N Ir=I Ir/request=I/N"; OUT_DIR keeps callgrind.out.* for callgrind_annotate.
set -euo pipefail
bin=$1 fake=$2 out=$3 connections=${CONNECTIONS:-16}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
cc -shared -fPIC -O2 -o "$out/valgrind-sigsuspend.so" "$here/valgrind-sigsuspend.c"
. "$here/proxy-common.sh"
env "${broker_env[@]}" LD_PRELOAD="$out/valgrind-sigsuspend.so" \
  valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.out" --instr-atstart=no "$bin" \
  >"$out/broker.out" 2>"$out/broker.err" &
pid=$!
for _ in $(seq 1 120); do curl -fs -m 2 "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 1; done
connect_account
wrk -t2 -c"$connections" -d3s "${headers[@]}" "http://127.0.0.1:$port/proxy/echo" >/dev/null
callgrind_control -i on "$pid" >/dev/null 2>&1
wrk -t2 -c"$connections" -d10s "${headers[@]}" "http://127.0.0.1:$port/proxy/echo" >"$out/wrk-proxy.txt"
callgrind_control -d proxy "$pid" >/dev/null 2>&1
kill "$pid"; wait "$pid" 2>/dev/null || true
n=$(awk '/requests in/ {print $1}' "$out/wrk-proxy.txt")
errors=$(awk '/Non-2xx|Socket errors/' "$out/wrk-proxy.txt")
ir=$(awk '/^summary:/ {print $2}' "$(grep -l "Trigger: dump proxy" "$out"/callgrind.out.*)")
echo "/proxy/echo requests=$n Ir=$ir Ir/request=$((ir / n))${errors:+ ($errors)}"
