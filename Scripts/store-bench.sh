#!/bin/sh
# Measures the JSON-file account store and shows its syscall order.
#   Scripts/store-bench.sh            # 1,000 vs 100,000 accounts: start-up, put and get cost
#   Scripts/store-bench.sh strace     # the syscalls of one put (catalogue item 42)
#   Scripts/store-bench.sh kill9 [N]  # kill -9 a writer N times (default 40); no acknowledged write lost (item 41)
# Builds a throwaway driver with swiftc -O from the store's sources; needs no package changes.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/store-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
sources=$(ls "$root"/Sources/BrokerCore/*.swift | grep -v -e '/OAuth1' -e '/PercentEncoding')
swiftc -O -module-name StoreBench -o "$work/bench" $sources "$root/Scripts/StoreBench/main.swift"

if [ "${1:-}" = strace ]; then
    "$work/bench" one "$work/data"            # create directories first
    strace -f -e trace=openat,write,fsync,fchmod,rename,close -o "$work/trace" "$work/bench" one "$work/data"
    # The writing thread, from creating the temporary file to syncing the directory.
    pid=$(grep -m1 '\.tmp\.' "$work/trace" | cut -d' ' -f1)
    grep "^$pid " "$work/trace" | sed -n '/\.tmp\./,$p' | grep -E 'openat|fchmod|write|fsync|close|rename'
    exit 0
fi

if [ "${1:-}" = kill9 ]; then
    rounds=${2:-40}
    lost=0
    for round in $(seq "$rounds"); do
        "$work/bench" loop "$work/k" > "$work/acks" &
        writer=$!
        sleep "0.$(shuf -i 20-90 -n 1)"
        kill -9 "$writer"
        wait "$writer" 2>/dev/null || true
        acked=$(tail -n 1 "$work/acks"); acked=${acked:-0}
        stored=$("$work/bench" check "$work/k") || { echo "round $round: start-up failed"; exit 1; }
        if [ "$stored" -lt "$acked" ]; then lost=$((lost + 1)); echo "round $round: acknowledged $acked, stored $stored"; fi
    done
    echo "kill -9 x $rounds: $lost rounds lost an acknowledged write; last stored counter $stored"
    [ "$lost" -eq 0 ]
    exit
fi

for n in 1000 100000; do
    echo "== $n accounts"
    "$work/bench" seed "$work/d$n" "$n"
    sync
    "$work/bench" open "$work/d$n"
    "$work/bench" put "$work/d$n" 1000
    "$work/bench" get "$work/d$n" 1000000
done
