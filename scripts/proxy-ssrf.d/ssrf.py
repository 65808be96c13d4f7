#!/usr/bin/env python3
"""Helpers of scripts/proxy-ssrf, run inside the network namespace the script made.

  listen    --ready F ADDRESS...     one TCP listener per address (IPv6 as fd00::5, link-local as fe80::5%lo), all on
                                     one port, plus the wildcards 0.0.0.0 and [::]; writes "PORT CONTROL_PORT" to F.
                                     Every accepted connection is counted under its listener's address and closed.
  counts    --control Q              the count of every listener, as one JSON object, after accepting every
                                     connection already queued (a connection the broker made before its answer is
                                     in a listener's queue by then, so asking after the answer misses none)
  providers --fake F --out O --port P [--allow-private] NAME=HOST...
                                     O: the fake's providers file with `acme` (and a copy of it per NAME) given
                                     the API base https://HOST:P
  call      --broker B --api-key K --account A [--path /proxy/x]
                                     one GET; prints {status, error, message}
"""
import argparse
import http.client
import json
import selectors
import socket
import sys


def listener(address, port):
    """A listening socket on address:port; SO_REUSEPORT lets a wildcard share the port with the specific ones, and
    the kernel hands a connection to the most specific listener that matches its destination."""
    host, _, scope = address.partition("%")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(family, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    if family == socket.AF_INET6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        s.bind((host, port, 0, socket.if_nametoindex(scope) if scope else 0))
    else:
        s.bind((host, port))
    s.listen(64)
    s.setblocking(False)
    return s


def listen(args):
    first = listener("0.0.0.0", 0)
    port = first.getsockname()[1]
    sockets = {"0.0.0.0": first, "::": listener("::", port)}
    for address in args.addresses:
        sockets[address] = listener(address, port)
    control = socket.socket()
    control.bind(("127.0.0.1", 0))
    control.listen(8)
    counts = {address: 0 for address in sockets}

    def drain():
        for address, s in sockets.items():
            while True:
                try:
                    connection, _ = s.accept()
                except BlockingIOError:
                    break
                counts[address] += 1
                connection.close()

    selector = selectors.DefaultSelector()
    for s in sockets.values():
        selector.register(s, selectors.EVENT_READ)
    selector.register(control, selectors.EVENT_READ)
    with open(args.ready, "w") as f:
        f.write("%d %d\n" % (port, control.getsockname()[1]))
    while True:
        for key, _ in selector.select():
            if key.fileobj is control:
                asker, _ = control.accept()
                drain()
                asker.sendall(json.dumps(counts).encode() + b"\n")
                asker.close()
            else:
                drain()


def counts(args):
    with socket.create_connection(("127.0.0.1", args.control), timeout=30) as s:
        data = b""
        while not data.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    print(data.decode().strip())


def providers(args):
    with open(args.fake) as f:
        fake = json.load(f)["providers"]
    acme = fake["acme"]
    out = {}
    for pair in ["acme=api.ssrf.test"] + args.bases:
        name, _, host = pair.partition("=")
        base = "https://%s:%d" % ("[%s]" % host if ":" in host else host, args.port)
        entry = dict(acme, api_base_url=base)
        if args.allow_private:
            entry["api_allow_private"] = True
        out[name] = entry
    with open(args.out, "w") as f:
        json.dump({"providers": out}, f)


def call(args):
    connection = http.client.HTTPConnection("127.0.0.1", args.broker, timeout=60)
    connection.request("GET", args.path, headers={
        "Authorization": "Bearer " + args.api_key, "Broker-Account": args.account, "Connection": "close"})
    reply = connection.getresponse()
    body = reply.read().decode("utf-8", "replace")
    error = message = ""
    try:
        document = json.loads(body)
        inner = document.get("error", document)
        if isinstance(inner, dict):
            error, message = inner.get("code", inner.get("error", "")), inner.get("message", "")
        else:
            error, message = inner, document.get("message", "")
    except ValueError:
        message = body[:200]
    print(json.dumps({"status": reply.status, "error": error, "message": message}))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["listen", "counts", "providers", "call"])
    parser.add_argument("--ready")
    parser.add_argument("--control", type=int)
    parser.add_argument("--fake")
    parser.add_argument("--out")
    parser.add_argument("--port", type=int)
    parser.add_argument("--allow-private", action="store_true")
    parser.add_argument("--broker", type=int)
    parser.add_argument("--api-key")
    parser.add_argument("--account")
    parser.add_argument("--path", default="/proxy/x")
    parser.add_argument("rest", nargs="*")
    args = parser.parse_intermixed_args()
    args.addresses = args.bases = args.rest
    {"listen": listen, "counts": counts, "providers": providers, "call": call}[args.command](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
