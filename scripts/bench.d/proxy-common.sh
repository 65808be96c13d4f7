# shellcheck shell=bash disable=SC2034  # sourced by callgrind-proxy.sh and wakeups-proxy.sh
# What both /proxy measurements set up, with the calls of `scripts/bench-broker proxy`: the release fake OAuth 2.0
# provider `acme` whose API base is the fake's own `/_api` (loopback allowed), and the broker's environment.
# Needs $fake and $out; sets key, fake_pid, fake_port, pid (empty), port, broker_env and the EXIT trap.

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
key=bench-api-key-0123456789abcdef
secret=bench-acme-secret-0123456789
"$fake" --kind oauth2 --client-secret "$secret" --secret-variable FAKE_ACME_SECRET --token-lifetime 86400 \
  --providers-file "$out/providers.fake.json" >"$out/fake.port" 2>"$out/fake.err" &
fake_pid=$! pid=
trap 'kill $fake_pid $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do grep -q . "$out/fake.port" 2>/dev/null && break; sleep 0.05; done
fake_port=$(head -1 "$out/fake.port")
python3 - "$out/providers.fake.json" "$out/providers.json" "$fake_port" <<'PY'
import json, sys
providers = json.load(open(sys.argv[1]))
providers["providers"]["acme"].update({"api_base_url": "http://127.0.0.1:%s/_api" % sys.argv[3], "api_allow_private": True})
json.dump(providers, open(sys.argv[2], "w"))
PY
port=$(free_port)
rm -rf "$out/data"
broker_env=(BROKER_PORT="$port" BROKER_DATA_DIR="$out/data" BROKER_API_KEY="$key" BROKER_PROVIDERS_FILE="$out/providers.json"
  FAKE_ACME_SECRET="$secret" BROKER_PUBLIC_URL="http://127.0.0.1:$port" BROKER_ACCESS_LOG=off BROKER_MAX_CONNECTIONS=20000
  BROKER_REFRESH_INTERVAL=0 BROKER_AUDIT_LOG="$out/audit.jsonl")

# connect_account: signs `acme` in through /authorize -> fake -> /callback; sets account and headers (API key, Broker-Account).
connect_account() {
  account=$(curl -fsS -L -c "$out/cookies" -b "$out/cookies" -H 'Accept: application/json' \
    "http://127.0.0.1:$port/authorize?provider=acme" | python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')
  headers=(-H "Authorization: Bearer $key" -H "Broker-Account: $account")
}
