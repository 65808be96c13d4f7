#!/bin/sh
# Measures the JSON-file account store and shows its syscall order.
#   Scripts/store-bench.sh            # 1,000 vs 100,000 accounts: start-up, put and get cost
#   Scripts/store-bench.sh strace     # the syscalls of one put (catalogue item 42)
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

for n in 1000 100000; do
    echo "== $n accounts"
    "$work/bench" seed "$work/d$n" "$n"
    sync
    "$work/bench" open "$work/d$n"
    "$work/bench" put "$work/d$n" 1000
    "$work/bench" get "$work/d$n" 1000000
done
