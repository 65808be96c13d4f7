#!/usr/bin/env bash
# System calls per proxied call: GET /proxy/echo?delay_ms=DELAY_MS (20) on a release broker against the release fake
# OAuth 2.0 provider, with the calls of `scripts/bench-broker proxy` (wrk -t2, the API key and Broker-Account, the audit
# file on, the access log off, the background refresher off), CONNECTIONS (64): `strace -c -f -p BROKER` over 4 s of
# wrk after a 2 s warm-up. Calls are counted by wrk; strace slows every system call, so fewer are served than without.
# Usage: scripts/bench.d/strace-proxy.sh TOKEN_BROKER FAKE_PROVIDER OUT_DIR
# Prints "requests=N", then per system call "NAME COUNT PER/call" and the total; OUT_DIR keeps strace's table.
set -euo pipefail
bin=$1 fake=$2 out=$3 connections=${CONNECTIONS:-64} delay=${DELAY_MS:-20}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
. "$here/proxy-common.sh"
env "${broker_env[@]}" "$bin" >"$out/broker.out" 2>"$out/broker.err" &
pid=$!
for _ in $(seq 1 120); do curl -fs -m 2 "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.5; done
connect_account
wrk -t2 -c"$connections" -d2s "${headers[@]}" "http://127.0.0.1:$port/proxy/echo?delay_ms=$delay" >/dev/null
strace -c -f -p "$pid" -o "$out/strace.txt" 2>/dev/null &
tracer=$!
sleep 0.5
wrk -t2 -c"$connections" -d4s "${headers[@]}" "http://127.0.0.1:$port/proxy/echo?delay_ms=$delay" >"$out/wrk.txt"
kill -INT "$tracer"; wait "$tracer" 2>/dev/null || true
n=$(awk '/requests in/ {print $1}' "$out/wrk.txt")
echo "requests=$n"
# strace's rows: % time, seconds, usecs/call, calls, [errors,] name; the last row's name is "total".
awk -v n="$n" '$NF ~ /^[a-z_0-9]+$/ && $4 ~ /^[0-9]+$/ {printf "%-16s %8d %6.2f/call\n", $NF, $4, $4 / n}' "$out/strace.txt"
kill "$pid"; wait "$pid" 2>/dev/null || true
