#!/usr/bin/env python3
"""Drives token-broker's browser flow (authorize -> fake provider -> callback) for the hardening scripts.

  connect --broker P --provider Q              one whole dance; prints one JSON line {status, account, body}
  begin   --broker P --provider Q --save F     authorize and visit the provider; saves the callback and cookies
  finish  --broker P --load F                  sends the saved callback with its cookies; prints one JSON line
  get     --broker P --path PATH [--api-key K] one GET; prints one JSON line {status, body}
  stream  --broker P --provider Q --acked F --stop F [--workers N]
          dances until the stop file exists; appends every account id whose callback answered 200 to F;
          prints {ok, failed, answers: {"callback answered 200": n, "authorize answered 503": n, ...}}
  verify  --broker P --api-key K --acked F     every acknowledged account reads back 200 with a token
  read    --broker P --api-key K --acked F[,F…] --stop F [--workers N]
          reads accounts already acknowledged (ids taken from the acked files as they grow) on keep-alive
          connections until the stop file exists; prints {reads, seconds, answers: {"200": n, "503": n, ...}}
  refresh --broker P[,P…] --provider Q --name N --api-key K --acked F --stop F [--workers N] [--timeout S]
          sign-ins at provider N and forced refreshes (POST /account/refresh) of the accounts they made, each
          account at most every 10.5 s, round robin over the brokers, until the stop file exists; appends the
          acknowledged accounts to F; prints {sign_ins, refreshes, seconds, answers: {"refresh 200": n, ...}}.
          --timeout: seconds a forced refresh may take (default 10): one that finds another's refresh lock waits
          for it, up to twice the lock's TTL (BROKER_UPSTREAM_TIMEOUT + 10 s) when its holder died with it
  live    --broker P --provider Q --api-key K --acked F
          every account in F reads back 200 with an access token the provider's /user still takes (a refresh token
          rotation the broker lost would leave it a revoked one); prints {accounts, live, examples}
"""
import argparse
import http.client
import json
import os
import random
import sys
import threading
import time
from urllib.parse import urlsplit, quote

TIMEOUT = 10


def request(port, method, target, headers=None, body=None, timeout=None):
    """One request on a fresh connection; returns (status, headers as list, body text)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout or TIMEOUT)
    try:
        hdrs = {"Connection": "close"}
        hdrs.update(headers or {})
        conn.request(method, target, body=body, headers=hdrs)
        resp = conn.getresponse()
        return resp.status, resp.getheaders(), resp.read().decode("utf-8", "replace")
    finally:
        conn.close()


def header(headers, name):
    for key, value in headers:
        if key.lower() == name.lower():
            return value
    return None


def set_cookies(headers, jar):
    for key, value in headers:
        if key.lower() != "set-cookie":
            continue
        pair = value.split(";", 1)[0]
        name, _, val = pair.partition("=")
        if val:
            jar[name] = val
        else:
            jar.pop(name, None)


def cookie_header(jar):
    return {"Cookie": "; ".join(f"{k}={v}" for k, v in jar.items())} if jar else {}


def begin(broker, provider, jar, name="weibo"):
    """Authorize at the broker and approve at the provider; returns the callback target on the broker."""
    status, headers, body = request(broker, "GET", "/authorize?provider=" + name, cookie_header(jar))
    set_cookies(headers, jar)
    if status != 302:
        raise RuntimeError(f"authorize answered {status}: {body[:200]}")
    location = urlsplit(header(headers, "Location"))
    status, headers, body = request(provider, "GET", location.path + "?" + location.query)
    if status != 302:
        raise RuntimeError(f"provider answered {status}: {body[:200]}")
    back = urlsplit(header(headers, "Location"))
    return back.path + "?" + back.query


def finish(broker, target, jar):
    status, headers, body = request(broker, "GET", target, cookie_header(jar))
    set_cookies(headers, jar)
    account = None
    if status == 200:
        account = json.loads(body).get("id")
    return {"status": status, "account": account, "body": body,
            "cache_control": header(headers, "Cache-Control"), "referrer_policy": header(headers, "Referrer-Policy")}


def stream(args):
    """Dances in parallel until the stop file appears; records acknowledged account ids (flushed at once)."""
    lock = threading.Lock()
    counts = {"ok": 0, "failed": 0, "answers": {}}

    def tally(what):
        counts["answers"][what] = counts["answers"].get(what, 0) + 1
    acked = open(args.acked, "a", buffering=1)

    def worker():
        while not os.path.exists(args.stop):
            jar = {}
            try:
                target = begin(args.broker, args.provider, jar)
                result = finish(args.broker, target, jar)
            except (OSError, RuntimeError, http.client.HTTPException, ValueError) as error:
                with lock:
                    counts["failed"] += 1
                    tally(str(error).split(":")[0] if isinstance(error, RuntimeError) else type(error).__name__)
                time.sleep(0.02)
                continue
            with lock:
                tally("callback answered %d" % result["status"])
                if result["status"] == 200 and result["account"]:
                    acked.write(result["account"] + "\n")
                    acked.flush()
                    counts["ok"] += 1
                else:
                    counts["failed"] += 1

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(args.workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    acked.close()
    print(json.dumps(counts))


def verify(args):
    with open(args.acked) as f:
        ids = [line.strip() for line in f if line.strip()]
    missing = []
    conn = None
    for account in ids:
        for attempt in range(3):
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", args.broker, timeout=TIMEOUT)
                conn.request("GET", "/account?id=" + quote(account, safe=""),
                             headers={"Authorization": "Bearer " + args.api_key})
                resp = conn.getresponse()
                body = resp.read().decode()
                if resp.getheader("Connection", "").lower() == "close":
                    conn.close()
                    conn = None
                break
            except (OSError, http.client.HTTPException):
                if conn:
                    conn.close()
                conn = None
                if attempt == 2:
                    raise
        if resp.status != 200 or '"access_token":"2.00WEIBO-TOKEN-SENTINEL-' not in body:
            missing.append((account, resp.status))
    print(json.dumps({"acknowledged": len(ids), "unique": len(set(ids)), "missing": len(missing),
                      "examples": missing[:5]}))
    return 1 if missing else 0


def read(args):
    """GET /account of acknowledged accounts in parallel until the stop file appears; counts answers by status."""
    lock = threading.Lock()
    counts = {"reads": 0, "answers": {}}
    files = args.acked.split(",")

    def acked_ids():
        ids = []
        for name in files:
            try:
                with open(name) as f:
                    ids.extend(line.strip() for line in f if line.strip())
            except OSError:
                pass
        return ids

    def worker(seed):
        rng = random.Random(seed)
        conn = None
        ids, refreshed = [], 0.0
        while not os.path.exists(args.stop):
            if time.monotonic() - refreshed > 0.5:
                ids, refreshed = acked_ids(), time.monotonic()
            if not ids:
                time.sleep(0.02)
                continue
            account = ids[rng.randrange(len(ids))]
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", args.broker, timeout=TIMEOUT)
                conn.request("GET", "/account?id=" + quote(account, safe=""),
                             headers={"Authorization": "Bearer " + args.api_key})
                resp = conn.getresponse()
                resp.read()
                key = str(resp.status)
                if resp.getheader("Connection", "").lower() == "close":
                    conn.close()
                    conn = None
            except (OSError, http.client.HTTPException) as error:
                key = type(error).__name__
                if conn:
                    conn.close()
                conn = None
                time.sleep(0.02)
            with lock:
                counts["reads"] += 1
                counts["answers"][key] = counts["answers"].get(key, 0) + 1

    started = time.monotonic()
    threads = [threading.Thread(target=worker, args=(n,), daemon=True) for n in range(args.workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    counts["seconds"] = round(time.monotonic() - started, 1)
    print(json.dumps(counts))


def refresh(args):
    """Sign-ins at provider --name and forced refreshes of the accounts they made, spread over the brokers, until the
    stop file appears. Each worker refreshes its own accounts one at a time, each at most every REUSE seconds (a
    forced refresh sooner after the last one gets its token without a provider call), and signs in a new account
    whenever none is due, up to --accounts of its own (then it waits for the next one due; 0: no limit, so the
    workers never rest). Appends the acknowledged accounts to --acked; prints {sign_ins, refreshes,
    slowest_refresh_seconds, answers}."""
    reuse = 10.5
    lock = threading.Lock()
    counts = {"sign_ins": 0, "refreshes": 0, "slowest_refresh_seconds": 0.0, "answers": {}}
    brokers = [int(port) for port in args.brokers.split(",")]
    acked = open(args.acked, "a", buffering=1)

    def tally(key):
        counts["answers"][key] = counts["answers"].get(key, 0) + 1

    def worker(n):
        mine, step = [], n  # [account id, monotonic time of its last acknowledged token]
        while not os.path.exists(args.stop):
            step += 1
            broker = brokers[step % len(brokers)]
            due = next((entry for entry in mine if time.monotonic() - entry[1] >= reuse), None)
            if due is None and args.accounts and len(mine) >= args.accounts:
                time.sleep(0.05)
                continue
            try:
                if due is None:
                    jar = {}
                    result = finish(broker, begin(broker, args.provider, jar, args.name), jar)
                    with lock:
                        tally("sign-in %d" % result["status"])
                        if result["status"] == 200 and result["account"]:
                            counts["sign_ins"] += 1
                            acked.write(result["account"] + "\n")
                            acked.flush()
                            mine.append([result["account"], time.monotonic() - reuse])
                    continue
                asked = time.monotonic()
                status, _, _ = request(broker, "POST", "/account/refresh?id=" + quote(due[0], safe=""),
                                       {"Authorization": "Bearer " + args.api_key}, timeout=args.timeout)
                with lock:
                    tally("refresh %d" % status)
                    if status == 200:
                        counts["refreshes"] += 1
                        due[1] = time.monotonic()
                        # The longest a forced refresh took to answer 200: a refresh lock left held waits its TTL.
                        slowest = max(counts["slowest_refresh_seconds"], due[1] - asked)
                        counts["slowest_refresh_seconds"] = round(slowest, 2)
            except (OSError, RuntimeError, http.client.HTTPException, ValueError) as error:
                with lock:
                    tally(str(error).split(":")[0] if isinstance(error, RuntimeError) else type(error).__name__)
                time.sleep(0.02)

    started = time.monotonic()
    threads = [threading.Thread(target=worker, args=(n,), daemon=True) for n in range(args.workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    acked.close()
    counts["seconds"] = round(time.monotonic() - started, 1)
    print(json.dumps(counts))


def live(args):
    """Every account reads back with an access token the provider still takes."""
    with open(args.acked) as f:
        ids = [line.strip() for line in f if line.strip()]
    dead = []
    for account in ids:
        status, _, body = request(args.broker, "GET", "/account?id=" + quote(account, safe=""),
                                  {"Authorization": "Bearer " + args.api_key})
        if status != 200:
            dead.append((account, "account answered %d" % status))
            continue
        token = json.loads(body)["access_token"]
        status, _, _ = request(args.provider, "GET", "/user", {"Authorization": "Bearer " + token})
        if status != 200:
            dead.append((account, "the provider's /user answered %d" % status))
    print(json.dumps({"accounts": len(ids), "live": len(ids) - len(dead), "examples": dead[:5]}))
    return 1 if dead else 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("command", choices=["connect", "begin", "finish", "get", "stream", "verify", "read", "refresh", "live"])
    p.add_argument("--broker", required=True)
    p.add_argument("--provider", type=int)
    p.add_argument("--name", default="weibo")
    p.add_argument("--save")
    p.add_argument("--load")
    p.add_argument("--path")
    p.add_argument("--api-key")
    p.add_argument("--acked")
    p.add_argument("--stop")
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--accounts", type=int, default=0, help="refresh: accounts each worker signs in at most (0: no limit)")
    p.add_argument("--timeout", type=float, default=TIMEOUT)
    args = p.parse_args()
    args.brokers, args.broker = args.broker, int(args.broker.split(",")[0])
    if args.command == "connect":
        jar = {}
        print(json.dumps(finish(args.broker, begin(args.broker, args.provider, jar, args.name), jar)))
    elif args.command == "begin":
        jar = {}
        target = begin(args.broker, args.provider, jar, args.name)
        with open(args.save, "w") as f:
            json.dump({"callback": target, "cookies": jar}, f)
    elif args.command == "finish":
        with open(args.load) as f:
            saved = json.load(f)
        print(json.dumps(finish(args.broker, saved["callback"], saved["cookies"])))
    elif args.command == "get":
        headers = {"Authorization": "Bearer " + args.api_key} if args.api_key else {}
        status, _, body = request(args.broker, "GET", args.path, headers)
        print(json.dumps({"status": status, "body": body}))
    elif args.command == "stream":
        stream(args)
    elif args.command == "verify":
        return verify(args)
    elif args.command == "read":
        read(args)
    elif args.command == "refresh":
        refresh(args)
    elif args.command == "live":
        return live(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
