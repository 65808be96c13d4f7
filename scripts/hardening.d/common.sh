# shellcheck shell=bash disable=SC2034,SC2154  # sourced: `name` comes from the script, results go back to it
# Shared by scripts/hostile-clients, scripts/crash-safety and scripts/disk-full (sourced, not run).
# Provides: tool installation, the broker and fake-provider binaries, a work directory cleaned up on exit,
# the fake provider, starting/stopping the broker, and the pass/fail tally.
# The sourcing script sets `name` (for messages) before sourcing.

here=scripts/hardening.d
passed=0; failed=0
pids=(); mounts=()
work=$(mktemp -d "${TMPDIR:-/tmp}/${name}.XXXXXX")
api_key="hardening-api-key-0123456789abcdef"
client_secret="WEIBO-CLIENT-SECRET-SENTINEL-hardening"

say() { echo "$name: $*" >&2; }
die() { echo "$name: $*" >&2; exit 1; }
pass() { passed=$((passed + 1)); echo "ok   - $*"; }
fail() { failed=$((failed + 1)); echo "FAIL - $*"; }
# check DESCRIPTION COMMAND...: passes when the command succeeds.
check() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }
tally() {
  echo "$passed passed, $failed failed"
  [ "$failed" = 0 ]
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
trap cleanup EXIT
trap 'exit 130' INT TERM

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

# The broker under test: BROKER_BIN, else the debug build (built when missing).
broker_binary() {
  if [ -n "${BROKER_BIN:-}" ]; then
    [ -x "$BROKER_BIN" ] || die "BROKER_BIN=$BROKER_BIN is not an executable"
    bin=$BROKER_BIN; return
  fi
  bin=.build/debug/token-broker
  if [ ! -x "$bin" ]; then
    command -v swift >/dev/null || die "swift is not on PATH and $bin does not exist (set BROKER_BIN)"
    say "building token-broker (debug)..."
    swift build --product token-broker >&2 || die "swift build failed"
  fi
}

# The fake provider: FAKE_PROVIDER_BIN, else the debug build (built when missing).
provider_binary() {
  if [ -n "${FAKE_PROVIDER_BIN:-}" ]; then
    [ -x "$FAKE_PROVIDER_BIN" ] || die "FAKE_PROVIDER_BIN=$FAKE_PROVIDER_BIN is not an executable"
    provider_bin=$FAKE_PROVIDER_BIN; return
  fi
  provider_bin=.build/debug/fake-provider
  if [ ! -x "$provider_bin" ]; then
    command -v swift >/dev/null || die "swift is not on PATH and $provider_bin does not exist (set FAKE_PROVIDER_BIN)"
    say "building fake-provider (debug)..."
    swift build --product fake-provider >&2 || die "swift build failed"
  fi
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Resident memory of a process in KiB (VmRSS), or its peak (VmHWM).
rss_kb() { awk '$1 == "VmRSS:" {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
hwm_kb() { awk '$1 == "VmHWM:" {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
mib() { awk -v kb="$1" 'BEGIN {printf "%.1f", kb / 1024}'; }

# Starts the fake Weibo (fake-provider: every sign-in a new user, /_fake/stats and /_fake/control on);
# sets provider_port and writes $work/providers.json pointing the weibo preset at it.
start_provider() {
  provider_binary
  "$provider_bin" --kind weibo --users counting --control --client-secret "$client_secret" \
    --secret-variable FAKE_WEIBO_SECRET --providers-file "$work/providers.json" \
    >"$work/provider.port" 2>>"$work/provider.log" &
  pids+=($!)
  for _ in {1..100}; do grep -q . "$work/provider.port" 2>/dev/null && break; sleep 0.05; done
  provider_port=$(head -1 "$work/provider.port")
  [ -n "$provider_port" ] || die "the fake provider did not start (see $work/provider.log)"
}

# spawn_broker DATA_DIR [VAR=VALUE...]: starts the broker on $broker_port (chosen once) without waiting;
# sets broker_pid. stdout and stderr are appended to $work/broker.out and $work/broker.err.
spawn_broker() {
  local data=$1; shift
  : "${broker_port:=$(free_port)}"
  local providers=()
  [ -f "$work/providers.json" ] && providers=(BROKER_PROVIDERS_FILE="$work/providers.json")
  env BROKER_PORT="$broker_port" BROKER_DATA_DIR="$data" ${providers[@]+"${providers[@]}"} \
    BROKER_API_KEY="$api_key" BROKER_PUBLIC_URL="http://127.0.0.1:$broker_port" BROKER_LOG_FORMAT=json \
    BROKER_UPSTREAM_TIMEOUT=5 FAKE_WEIBO_SECRET="$client_secret" "$@" \
    "$bin" >>"$work/broker.out" 2>>"$work/broker.err" &
  broker_pid=$!
  pids+=("$broker_pid")
}

# wait_healthy: until /healthz answers 200; false when the broker exits or 10 s pass.
wait_healthy() {
  for _ in {1..200}; do
    kill -0 "$broker_pid" 2>/dev/null || return 1
    [ "$(healthz_status)" = 200 ] && return 0
    sleep 0.05
  done
  return 1
}

# start_broker DATA_DIR [VAR=VALUE...]: spawn_broker, then wait for /healthz or die.
start_broker() {
  spawn_broker "$@"
  wait_healthy && return 0
  tail -5 "$work/broker.err" >&2
  die "the broker did not start (see $work/broker.err)"
}

# Stops the broker with SIGTERM and waits; sets broker_status to its exit status.
stop_broker() {
  kill -TERM "$broker_pid" 2>/dev/null || true
  broker_status=0
  wait "$broker_pid" 2>/dev/null || broker_status=$?
}

# Status code of GET /healthz, or of GET PATH [with API KEY], on the broker; 000 when it cannot be had.
healthz_status() { http_status /healthz; }
http_status() {
  python3 - "$broker_port" "$1" "${2:-}" <<'PY' 2>/dev/null || echo 000
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=5)
c.request("GET", sys.argv[2], headers={"Authorization": "Bearer " + sys.argv[3]} if sys.argv[3] else {})
print(c.getresponse().status)
PY
}

flows() { python3 "$here/flows.py" "$@" --broker "$broker_port"; }
# json_field JSON KEY: one top-level field of a JSON line.
json_field() { python3 -c 'import json,sys; v=json.loads(sys.argv[1]).get(sys.argv[2]); print("" if v is None else (json.dumps(v) if isinstance(v,(dict,list)) else v))' "$1" "$2"; }
