#!/usr/bin/env python3
"""Drives scripts/hostile-providers: flows against scripts/hardening.d/hostile_provider.py through a live broker.

  attack  --broker P --provider Q --api-key K --pid N --state F   every hostile answer, /healthz probed meanwhile
  reread  --broker P --api-key K --state F                         after a restart: what was stored is still there

Prints "ok   - ..." or "FAIL - ..." per check and one "figures: ..." line; exits 0 either way (the script tallies).
"""
import argparse
import http.client
import json
import sys
import threading
import time
from urllib.parse import quote

from flows import begin, cookie_header, finish, request

COMPOSED, DECOMPOSED = "caf\u00e9", "cafe\u0301"
LONG_UID = "/" * 128


def say(ok, what):
    print(("ok   - " if ok else "FAIL - ") + what, flush=True)


def control(provider, **switches):
    status, _, _ = request(provider, "GET", "/control?" + "&".join(f"{k}={quote(str(v), safe='')}" for k, v in switches.items()))
    assert status == 200


def stats(provider):
    return json.loads(request(provider, "GET", "/stats")[2])


def connect(broker, provider, jar=None):
    jar = {} if jar is None else jar
    return finish(broker, begin(broker, provider, jar, name="hostile"), jar)


def read(broker, api_key, account_id):
    status, headers, body = request(broker, "GET", "/account?id=" + quote(account_id, safe=""),
                                    {"Authorization": "Bearer " + api_key})
    return status, dict((k.lower(), v) for k, v in headers), body


def hwm_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


class Prober(threading.Thread):
    """GET /healthz every 100 ms on a new connection; counts answers that are not 200 within 2 s."""

    def __init__(self, broker):
        super().__init__(daemon=True)
        self.broker, self.stop, self.probes, self.bad = broker, False, 0, 0

    def run(self):
        while not self.stop:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.broker, timeout=2)
                conn.request("GET", "/healthz")
                ok = conn.getresponse().status == 200
                conn.close()
            except (OSError, http.client.HTTPException):
                ok = False
            self.probes += 1
            self.bad += 0 if ok else 1
            time.sleep(0.1)


def attack(args):
    b, p, key = args.broker, args.provider, args.api_key
    prober = Prober(b)
    prober.start()
    # A good account first: nothing below may change it.
    control(p, token_mode="ok", uid="ada", expires_in=3600)
    first = connect(b, p)
    say(first["status"] == 200, f"a well-behaved provider connects hostile:ada ({first['status']})")
    _, _, before = read(b, key, "hostile:ada")
    baseline = hwm_kib(args.pid)

    refused = {
        "negative_expires": "expires_in is negative",
        "unparsable_expires": "expires_in is not a whole number of seconds",
        "big_body": "larger than 1048576 bytes",
        "big_chunked": "larger than 1048576 bytes",
        # URLSession inflates and counts ("larger than …"); the native client refuses any coding but identity.
        "gzip_bomb": ("larger than 1048576 bytes", "content-encoded answer refused"),
        "malformed_status": "malformed HTTP response",
    }
    for mode, words in refused.items():
        control(p, token_mode=mode, uid="ada")
        started = time.monotonic()
        result = connect(b, p)
        seconds = time.monotonic() - started
        body = result["body"]
        named = any(w in body for w in words) if isinstance(words, tuple) else words in body
        say(result["status"] == 502 and '"upstream_error"' in body and named and "SENTINEL" not in body,
            f"{mode}: 502 upstream_error naming \"{words}\" in {seconds:.1f} s ({result['status']})")
    time.sleep(1)  # libcurl may still be inflating the bomb it was told to drop
    peak = hwm_kib(args.pid)
    _, _, after = read(b, key, "hostile:ada")
    say(after == before, "the stored account hostile:ada is unchanged after every refused answer")

    control(p, token_mode="huge_expires", uid="bob")
    huge = connect(b, p)
    status, _, body = read(b, key, "hostile:bob")
    year = json.loads(body).get("expires_at", "")[:4] if status == 200 else ""
    say(huge["status"] == 200 and status == 200 and year.isdigit() and int(year) <= 9999,
        f"expires_in 2^63-1 is clamped to ten years, the account reads back (expires {year})")

    # Two spellings Swift calls equal are two users; each browser reads only its own.
    control(p, token_mode="ok", uid=COMPOSED)
    alice = {}
    one = connect(b, p, alice)
    control(p, uid=DECOMPOSED)
    mallory = {}
    two = connect(b, p, mallory)
    status, _, _ = request(b, "GET", "/account?id=" + quote("hostile:" + COMPOSED, safe=""), cookie_header(mallory))
    say(one["status"] == 200 and two["status"] == 200 and status == 401,
        f"composed and decomposed uids are two accounts; the other browser gets {status}")
    status, _, _ = request(b, "DELETE", "/account?id=" + quote("hostile:" + DECOMPOSED, safe=""), {"Authorization": "Bearer " + key})
    say(status == 204, f"deleting the decomposed one answers {status}")

    control(p, uid=LONG_UID)
    long_connect = connect(b, p)
    status, _, _ = read(b, key, "hostile:" + LONG_UID)
    say(long_connect["status"] == 200 and status == 200, f"a uid of 128 '/' is stored and read ({long_connect['status']}, {status})")
    control(p, uid="\u202eevil")
    bidi = connect(b, p)
    say(bidi["status"] == 502 and "bidirectional" in bidi["body"], f"a uid with a bidi override is refused ({bidi['status']})")

    # A rate-limited refresh of an expired token: one provider call, then every read answers at once
    # with the last try's error and when to come back.
    control(p, uid="carol", expires_in=1, refresh_mode="rate_limited")
    connect(b, p)
    time.sleep(1.2)
    calls_before = stats(p)["refresh_calls"]
    statuses, retry_after = [], None
    for _ in range(24):
        status, headers, _ = read(b, key, "hostile:carol")
        statuses.append(status)
        retry_after = headers.get("retry-after", retry_after)
    calls = stats(p)["refresh_calls"] - calls_before
    say(calls == 1 and set(statuses) == {502} and retry_after is not None,
        f"429 Retry-After: 120 on refresh of an expired token: 24 reads, {calls} refresh call(s), "
        f"statuses {sorted(set(statuses))}, Retry-After {retry_after}")

    prober.stop = True
    prober.join()
    say(prober.bad == 0, f"/healthz answered 200 to all {prober.probes} probes meanwhile")
    growth = (peak - baseline) / 1024
    say(growth <= args.max_growth_mib,
        f"peak RSS grew {growth:.1f} MiB over the hostile answers (limit {args.max_growth_mib:g} MiB; cap 1 MiB)")
    print(f"figures: baseline_hwm_mib={baseline / 1024:.1f} peak_hwm_mib={peak / 1024:.1f} growth_mib={growth:.1f} "
          f"probes={prober.probes}", flush=True)
    with open(args.state, "w") as f:
        json.dump({"ada": before}, f)


def reread(args):
    b, key = args.broker, args.api_key
    with open(args.state) as f:
        saved = json.load(f)
    _, _, ada = read(b, key, "hostile:ada")
    say(ada == saved["ada"], "after a restart hostile:ada reads back unchanged")
    composed, _, _ = read(b, key, "hostile:" + COMPOSED)
    decomposed, _, _ = read(b, key, "hostile:" + DECOMPOSED)
    say(composed == 200 and decomposed == 404, f"after a restart the composed uid is there ({composed}), the deleted one is not ({decomposed})")
    status, _, _ = read(b, key, "hostile:" + LONG_UID)
    say(status == 200, f"after a restart the 128-'/' uid reads back ({status})")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["attack", "reread"])
    parser.add_argument("--broker", type=int, required=True)
    parser.add_argument("--provider", type=int)
    parser.add_argument("--api-key", required=True)
    parser.add_argument("--pid", type=int)
    parser.add_argument("--state", required=True)
    parser.add_argument("--max-growth-mib", type=float, default=32)
    args = parser.parse_args()
    attack(args) if args.command == "attack" else reread(args)


if __name__ == "__main__":
    sys.exit(main())
