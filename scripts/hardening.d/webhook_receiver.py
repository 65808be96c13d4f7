#!/usr/bin/env python3
"""A webhook receiver for the hardening scripts: checks each request's Broker-Signature and records it.

Every POST is appended to the records file as one JSON line, flushed at once:
  {"id": ..., "type": ..., "account": ..., "valid": true|false, "status": 200|500, "created_at": ..., "at": ...}
A request whose body ended early (its sender was killed mid-request) is recorded as {"truncated": true}.
valid: the v1 signature is the HMAC-SHA256 of "<t>.<body>" under the secret, t is at most 5 minutes
old, and Broker-Event-Id is the body's id. With --fail-rate P a request is answered 500 with
probability P (the broker retries it), else 200.

With --sample DIR the first request with a valid signature is also kept as DIR/body.json (raw body)
and DIR/signature (its Broker-Signature), for checking the README's shell verification against it.

Usage: webhook_receiver.py --secret S --records FILE (--port N | --port-file FILE) [--fail-rate P] [--sample DIR]
"""
import argparse
import hashlib
import hmac
import json
import os
import random
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def verify(header, body, secret, now=None):
    """The receiver's side of Broker-Signature: True when a v1 signature matches and t is fresh."""
    parts = dict(item.split("=", 1) for item in header.split(",") if "=" in item)
    t = parts.get("t", "")
    if not t.isdigit() or abs((now or time.time()) - int(t)) > 300:
        return False
    expected = hmac.new(secret, t.encode() + b"." + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, parts.get("v1", ""))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--secret", required=True)
    p.add_argument("--records", required=True)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--port-file")
    p.add_argument("--fail-rate", type=float, default=0.0)
    p.add_argument("--sample")
    args = p.parse_args()
    secret = args.secret.encode()
    lock = threading.Lock()
    records = open(args.records, "a", buffering=1)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            if len(body) < length:
                # The sender died mid-request (kill -9): nobody will read an answer. Noted, never judged.
                with lock:
                    records.write(json.dumps({"truncated": True, "at": time.time()}) + "\n")
                return
            try:
                event = json.loads(body)
            except ValueError:
                event = {}
            valid = verify(self.headers.get("Broker-Signature", ""), body, secret) \
                and self.headers.get("Broker-Event-Id") == event.get("id")
            status = 500 if random.random() < args.fail_rate else 200
            line = {"id": event.get("id"), "type": event.get("type"), "account": (event.get("data") or {}).get("account_id"),
                    "valid": valid, "status": status, "created_at": event.get("created_at"), "at": time.time()}
            with lock:
                records.write(json.dumps(line) + "\n")
                if valid and args.sample and not os.path.exists(os.path.join(args.sample, "signature")):
                    with open(os.path.join(args.sample, "body.json"), "wb") as f:
                        f.write(body)
                    with open(os.path.join(args.sample, "signature"), "w") as f:
                        f.write(self.headers.get("Broker-Signature", ""))
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *_):
            pass

    ThreadingHTTPServer.allow_reuse_address = True
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as f:
            f.write(str(server.server_address[1]))
        os.replace(args.port_file + ".tmp", args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
