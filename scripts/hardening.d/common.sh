# shellcheck shell=bash disable=SC2034,SC2154  # sourced: `name` comes from the script, results go back to it
# Shared by the hardening scripts (hostile-clients, hostile-providers, crash-safety, disk-full, migration-check,
# webhook-delivery, redis-sentinel, redis-tls, proxy-ssrf), sourced, not run: scripts/lib.sh, a work directory cleaned
# up on exit, the broker and fake-provider binaries, the fake provider, and the broker's settings for these checks.
# The sourcing script sets `name` (for messages) before sourcing.

# shellcheck source=lib.sh
. scripts/lib.sh
here=scripts/hardening.d
start_work
api_key="hardening-api-key-0123456789abcdef"
client_secret="WEIBO-CLIENT-SECRET-SENTINEL-hardening"
# The broker's port, chosen once: restarts keep it, so clients find the broker where it was.
broker_port=$(free_port)
# Every broker these scripts start: a generous upstream timeout (a local fake provider on a loaded machine answers
# late, and none of these checks is about the timeout); start_provider adds the providers file.
broker_env=(
  BROKER_API_KEY="$api_key" BROKER_PUBLIC_URL="http://127.0.0.1:$broker_port" BROKER_LOG_FORMAT=json
  BROKER_UPSTREAM_TIMEOUT=30 FAKE_WEIBO_SECRET="$client_secret"
)

# The broker under test: BROKER_BIN, else the debug build (built when missing).
broker_binary() {
  if [ -n "${BROKER_BIN:-}" ]; then
    [ -x "$BROKER_BIN" ] || die "BROKER_BIN=$BROKER_BIN is not an executable"
    bin=$BROKER_BIN; broker_bin=$bin; return
  fi
  bin=.build/debug/token-broker; broker_bin=$bin
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

# Starts the fake Weibo (fake-provider: every sign-in a new user, /_fake/stats and /_fake/control on);
# sets provider_port and writes $work/providers.json pointing the weibo preset at it.
start_provider() {
  provider_binary
  "$provider_bin" --kind weibo --users counting --control --client-secret "$client_secret" \
    --secret-variable FAKE_WEIBO_SECRET --providers-file "$work/providers.json" \
    >"$work/provider.port" 2>>"$work/provider.log" &
  pids+=($!)
  # 30 s: a loaded machine starts it late.
  for _ in {1..600}; do grep -q . "$work/provider.port" 2>/dev/null && break; sleep 0.05; done
  provider_port=$(head -1 "$work/provider.port")
  [ -n "$provider_port" ] || die "the fake provider did not start (see $work/provider.log)"
  broker_env+=(BROKER_PROVIDERS_FILE="$work/providers.json")
}

flows() { python3 "$here/flows.py" "$@" --broker "$broker_port"; }
# json_field JSON KEY: one top-level field of a JSON line.
json_field() { python3 -c 'import json,sys; v=json.loads(sys.argv[1]).get(sys.argv[2]); print("" if v is None else (json.dumps(v) if isinstance(v,(dict,list)) else v))' "$1" "$2"; }
