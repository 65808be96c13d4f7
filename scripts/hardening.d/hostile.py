#!/usr/bin/env python3
"""Hostile and measuring clients for scripts/hostile-clients. Each command prints one JSON line.

  probe --port P --seconds S [--interval I]   GET /healthz on a new connection every I s; latency figures
  drip  --port P [--interval I]               slowloris by hand: one header line every I s until the server
                                              answers or closes; how long it took and what it said
  hold  --port P --count N --seconds S [--partial]
        opens N connections (idle, or each with half a request head when --partial), holds them S s;
        reports how many the server refused at once (503), closed while held, and kept open
  open  --port P                              broker_http_open_connections from /metrics
"""
import argparse
import json
import os
import select
import socket
import sys
import time


def healthz(port, timeout=5.0):
    """(status or None, seconds) of one GET /healthz on a new connection."""
    start = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n")
            data = b""
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
        status = int(data[9:12]) if data.startswith(b"HTTP/1.1 ") else None
    except (OSError, ValueError):
        status = None
    return status, time.monotonic() - start


def probe(args):
    latencies, failures, statuses = [], 0, {}
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        status, seconds = healthz(args.port)
        latencies.append(seconds)
        statuses[str(status)] = statuses.get(str(status), 0) + 1
        if status != 200 or seconds >= 1.0:
            failures += 1
        time.sleep(args.interval)
    latencies.sort()
    pick = lambda q: round(latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000, 1)
    print(json.dumps({"probes": len(latencies), "failures": failures, "statuses": statuses,
                      "p50_ms": pick(0.5), "p99_ms": pick(0.99), "max_ms": round(latencies[-1] * 1000, 1)}))
    return 0


def drip(args):
    start = time.monotonic()
    s = socket.create_connection(("127.0.0.1", args.port), timeout=5)
    s.setblocking(False)
    lines = [b"GET /healthz HTTP/1.1\r\n"] + [b"X-Drip-%d: %d\r\n" % (i, i) for i in range(10_000)]
    answer, sent = b"", 0
    while time.monotonic() - start < args.limit:
        try:
            s.send(lines[sent])
            sent += 1
        except OSError:
            break
        ready = select.poll()
        ready.register(s, select.POLLIN | select.POLLHUP | select.POLLERR)
        if ready.poll(args.interval * 1000):
            try:
                chunk = s.recv(4096)
            except OSError:
                chunk = b""
            answer += chunk
            if not chunk or answer:
                # Drain the rest of a response, if any.
                try:
                    s.settimeout(1)
                    while chunk:
                        chunk = s.recv(4096)
                        answer += chunk
                except OSError:
                    pass
                break
    cut = time.monotonic() - start
    s.close()
    status = int(answer[9:12]) if answer.startswith(b"HTTP/1.1 ") else None
    print(json.dumps({"lines_sent": sent, "cut_after_s": round(cut, 2), "status": status}))
    return 0


def hold(args):
    socks, refused, errors = [], 0, 0
    partial = b"GET /healthz HTTP/1.1\r\nHost: flood\r\n"
    started = time.monotonic()
    for _ in range(args.count):
        try:
            s = socket.create_connection(("127.0.0.1", args.port), timeout=5)
            if args.partial:
                s.sendall(partial)
            socks.append(s)
        except OSError:
            errors += 1
    opened = time.monotonic() - started
    deadline = time.monotonic() + args.seconds
    open_now = set(socks)
    closed_while_held = 0
    # Watch for connections the server answers (refusal at the cap) or closes.
    while time.monotonic() < deadline and open_now:
        ready, _, _ = _poll(open_now)
        for s in ready:
            try:
                data = s.recv(4096)
            except OSError:
                data = b""
            if data.startswith(b"HTTP/1.1 503"):
                refused += 1
            else:
                closed_while_held += 1
            open_now.discard(s)
            s.close()
    kept = len(open_now)
    for s in open_now:
        s.close()
    print(json.dumps({"requested": args.count, "connected": len(socks), "connect_errors": errors,
                      "connect_s": round(opened, 2), "refused_503": refused,
                      "closed_by_server": closed_while_held, "kept_open": kept}))
    return 0


def _poll(socks):
    """select() cannot watch descriptors over 1024; poll can."""
    poller = select.poll()
    by_fd = {s.fileno(): s for s in socks}
    for fd in by_fd:
        poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
    events = poller.poll(200)
    return [by_fd[fd] for fd, _ in events], [], []


def open_connections(args):
    with socket.create_connection(("127.0.0.1", args.port), timeout=5) as s:
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: m\r\nConnection: close\r\n\r\n")
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    for line in data.decode().splitlines():
        if line.startswith("broker_http_open_connections "):
            print(json.dumps({"open_connections": int(float(line.split()[1]))}))
            return 0
    print(json.dumps({"open_connections": None}))
    return 1


def main():
    p = argparse.ArgumentParser()
    p.add_argument("command", choices=["probe", "drip", "hold", "open"])
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--seconds", type=float, default=10)
    p.add_argument("--interval", type=float, default=0.1)
    p.add_argument("--limit", type=float, default=120)
    p.add_argument("--count", type=int, default=100)
    p.add_argument("--partial", action="store_true")
    args = p.parse_args()
    return {"probe": probe, "drip": drip, "hold": hold, "open": open_connections}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
