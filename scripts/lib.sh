# shellcheck shell=bash disable=SC2034,SC2154  # sourced: `name` comes from the script, results go back to it
# The helpers every script under scripts/ shares (sourced, not run): messages and the pass/fail tally, Debian
# packages, free ports, memory figures, a work directory whose processes are stopped on exit, and a broker
# started on a free port and waited for. Defining them starts nothing; the script calls what it needs.
#
# The sourcing script sets `name` (its name, for messages) first. Waits are bounded generously: a loaded
# 2-core machine is slow, and the bound only ends a wait for something that is never going to happen.

: "${name:?set name before sourcing scripts/lib.sh}"
passed=${passed:-0}; failed=${failed:-0}

say() { echo "$name: $*" >&2; }
die() { echo "$name: $*" >&2; exit 1; }
pass() { passed=$((passed + 1)); echo "ok   - $*"; }
fail() { failed=$((failed + 1)); echo "FAIL - $*"; }
# check DESCRIPTION COMMAND...: passes when the command succeeds.
check() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }
# tally: prints "N passed, N failed"; false when anything failed.
tally() {
  echo "$passed passed, $failed failed"
  [ "$failed" = 0 ]
}

# apt_install PACKAGE...: installs Debian packages (through sudo unless root); dies when it cannot.
apt_install() {
  local sudo=(); [ "$(id -u)" = 0 ] || sudo=(sudo)
  say "installing $* (Debian packages)"
  "${sudo[@]}" apt-get update -qq || die "apt-get update failed"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null || die "cannot install $*"
}
# need TOOL [PACKAGE]: installs PACKAGE (default TOOL) when TOOL is missing; fails, never skips.
need() {
  command -v "$1" >/dev/null && return 0
  apt_install "${2:-$1}"
  command -v "$1" >/dev/null || die "$1 is still missing after installing ${2:-$1}"
}

# A TCP port on 127.0.0.1 nobody listens on now.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Resident memory of a process in KiB (VmRSS), or its peak (VmHWM); 0 when it is gone.
rss_kb() { awk '$1 == "VmRSS:" {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
hwm_kb() { awk '$1 == "VmHWM:" {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
# mib KIB: the figure in MiB, one decimal.
mib() { awk -v kb="$1" 'BEGIN {printf "%.1f", kb / 1024}'; }

# A random pause before the next kill: mostly 0.1-1.2 s, one in eight within 50 ms of the last.
pause() { python3 -c 'import random; print(round(random.uniform(0.0, 0.05) if random.random() < 0.125 else random.uniform(0.1, 1.2), 3))'; }

# start_work: makes $work (a temporary directory named after the script) and stops every process in `pids`
# (SIGTERM, then SIGKILL after 3 s) and unmounts `mounts` on exit; $work is removed after a success, kept after
# a failure. Calling `cleanup` by hand does the same at once.
start_work() {
  work=$(mktemp -d "${TMPDIR:-/tmp}/${name##*/}.XXXXXX")
  pids=(); mounts=()
  trap cleanup EXIT
  trap 'exit 130' INT TERM
}
cleanup() {
  local status=$? pid m
  for pid in ${pids[@]+"${pids[@]}"}; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in ${pids[@]+"${pids[@]}"}; do
    for _ in {1..30}; do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  for m in ${mounts[@]+"${mounts[@]}"}; do
    mountpoint -q "$m" && { umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; }
  done
  if [ "$status" = 0 ]; then rm -rf "$work"; else echo "$name: logs kept in $work" >&2; fi
}

# http_status PATH [API_KEY]: the status of GET PATH on the broker at $broker_port; 000 when none can be had.
http_status() {
  python3 - "$broker_port" "$1" "${2:-}" <<'PY' 2>/dev/null || echo 000
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=30)
c.request("GET", sys.argv[2], headers={"Authorization": "Bearer " + sys.argv[3]} if sys.argv[3] else {})
print(c.getresponse().status)
PY
}
healthz_status() { http_status /healthz; }

# metric NAME [PORT]: the value of the unlabelled sample NAME in /metrics of the broker on PORT (default $broker_port).
metric() {
  python3 - "${2:-$broker_port}" "$1" <<'PY' 2>/dev/null || echo ""
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=30)
c.request("GET", "/metrics")
body = c.getresponse().read().decode()
print(next((line.split()[1] for line in body.splitlines() if line.startswith(sys.argv[2] + " ")), ""))
PY
}

# wait_healthy [PORT] [PID]: until GET /healthz on PORT (default $broker_port) answers 200; false when PID
# (default $broker_pid, if set) exits first or a minute passes.
wait_healthy() {
  local port=${1:-$broker_port} pid=${2:-${broker_pid:-}} deadline=$((SECONDS + 60))
  while [ "$SECONDS" -lt "$deadline" ]; do
    if [ -n "$pid" ]; then kill -0 "$pid" 2>/dev/null || return 1; fi
    [ "$(broker_port=$port http_status /healthz)" = 200 ] && return 0
    sleep 0.05
  done
  return 1
}

# spawn_broker DATA_DIR [VAR=VALUE...]: starts the broker ($broker_exe, else $broker_bin, else $bin) on $broker_port with
# BROKER_DATA_DIR, the script's `broker_env` and VAR=VALUE..., without waiting; sets broker_pid and adds it to
# pids. The port is chosen once and kept across restarts, unless `fresh_ports=true` (several brokers at once).
# stdout and stderr are appended to $work/broker.out and $work/broker.err.
spawn_broker() {
  local data=$1; shift
  if [ "${fresh_ports:-false}" = true ] || [ -z "${broker_port:-}" ]; then broker_port=$(free_port); fi
  env BROKER_PORT="$broker_port" BROKER_DATA_DIR="$data" ${broker_env[@]+"${broker_env[@]}"} "$@" \
    "${broker_exe:-${broker_bin:-$bin}}" >>"$work/broker.out" 2>>"$work/broker.err" &
  broker_pid=$!
  pids+=("$broker_pid")
}

# start_broker DATA_DIR [VAR=VALUE...]: spawn_broker, then wait for /healthz or die.
start_broker() {
  spawn_broker "$@"
  wait_healthy "$broker_port" "$broker_pid" && return 0
  tail -5 "$work/broker.err" >&2
  die "the broker did not start on port $broker_port (see $work/broker.err)"
}

# Stops the broker with SIGTERM and waits; sets broker_status to its exit status.
stop_broker() {
  kill -TERM "$broker_pid" 2>/dev/null || true
  broker_status=0
  wait "$broker_pid" 2>/dev/null || broker_status=$?
}
