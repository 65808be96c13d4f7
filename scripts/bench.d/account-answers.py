#!/usr/bin/env python3
"""What a broker answers and audits for a fixed list of GET /account reads, for diffing two binaries byte for byte.

Usage: scripts/bench.d/account-answers.py TOKEN_BROKER DATA_DIR OUT_DIR   (DATA_DIR from `broker-bench seed`)
Runs the broker on a copy of DATA_DIR (API key, audit file on, access log off) and writes OUT_DIR/answers.txt
(status, headers but Date and X-Request-Id, body), OUT_DIR/audit.txt (the audit file, ts and request_id blanked)
and OUT_DIR/log.txt (the audit log lines, time and request_id blanked); `cmp` each with another binary's.
Reads: 200 ids, 100 of them twice; by provider and uid; a wrong, missing or upper-case-scheme key; ids empty,
unknown, without a colon or percent-encoded; `id=` with `+`, a trailing `=`, a second pair or an unknown name.
"""
import http.client, json, os, re, shutil, socket, subprocess, sys, time
bin, data, out = sys.argv[1:4]
shutil.rmtree(out, ignore_errors=True); os.makedirs(out)
shutil.copytree(data, out + "/data")
s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
key = "bench-api-key-0123456789abcdef"
env = dict(os.environ, BROKER_PORT=str(port), BROKER_DATA_DIR=out + "/data", BROKER_API_KEY=key, BROKER_ACCESS_LOG="off",
           BROKER_REFRESH_INTERVAL="0", BROKER_AUDIT_LOG=out + "/audit.jsonl")
p = subprocess.Popen([bin], env=env, stdout=open(out + "/broker.out", "w"), stderr=subprocess.STDOUT)
try:
    for _ in range(200):
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2); c.request("GET", "/healthz"); c.getresponse().read(); break
        except Exception: time.sleep(0.2)
    paths = []
    for n in range(0, 10000, 50): paths.append(("/account?id=weibo:%d" % n, key))
    for n in range(0, 10000, 100): paths.append(("/account?id=weibo:%d" % n, key))  # again: from kept parts
    paths += [("/account?provider=weibo&uid=7", key), ("/account?id=weibo:7", "wrong"), ("/account?id=weibo:7", None),
              ("/account?id=", key), ("/account?id=weibo:999999", key), ("/account?id=weibo", key),
              ("/account?id=weibo%3A8", key), ("/account?id=weibo:8", "BEARER"),
              ("/account?id=weibo:7&provider=weibo", key), ("/account?id=weibo:7&x=1", key), ("/account?id=weibo+7", key),
              ("/account?id=weibo:7=", key), ("/account?ID=weibo:7", key), ("/account?id=weibo:%E2%82%AC", key),
              ("/account?x=1&id=weibo:7", key), ("/account?id=weibo:7&id=weibo:8", key)]
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    with open(out + "/answers.txt", "w") as f:
        for path, k in paths:
            h = {}
            if k == "BEARER": h["authorization"] = "BEARER " + key
            elif k: h["Authorization"] = "Bearer " + k
            c.request("GET", path, headers=h); r = c.getresponse(); body = r.read()
            hs = [(a, b) for a, b in r.getheaders() if a.lower() not in ("date", "x-request-id")]
            f.write("%s %d %s\n%s\n" % (path, r.status, hs, body.decode()))
    time.sleep(1.5)
finally:
    p.terminate(); p.wait()
with open(out + "/audit.txt", "w") as f:
    for line in open(out + "/audit.jsonl"):
        f.write(re.sub(r'"request_id":"[^"]*"', '"request_id":_', re.sub(r'^\{"ts":"[^"]*"', '{"ts":_', line)))
with open(out + "/log.txt", "w") as f:
    for line in open(out + "/broker.out"):
        if " audit " in line: f.write(re.sub(r'request_id=\S+', 'request_id=_', line.split(" ", 1)[1]))
print(len(paths), "requests;", sum(1 for _ in open(out + "/audit.txt")), "audit lines")
