#!/usr/bin/env python3
"""A hostile OAuth 2.0 provider on 127.0.0.1, written on raw sockets so that it can answer in ways no
framework would: bodies of 64 MiB, gzip bombs, broken status lines, numbers no integer holds, user ids
that Swift's String calls equal, rate limits. The wire format is otherwise RFC 6749's (an auto-approving
authorize page, a form-encoded token endpoint answering JSON, a Bearer-protected user endpoint).

GET  /authorize?redirect_uri&state      302 to redirect_uri?code=CODE&state=STATE
POST /token                             the code or refresh grant, answered as `token_mode` says
GET  /user                              {"id": <uid>, "login": "..."} with the uid `uid` says
GET  /control?token_mode=M&refresh_mode=M&uid=U&expires_in=N   switches (uid is UTF-8, percent-encoded)
GET  /stats                             {"token_calls": N, "refresh_calls": N}

token_mode / refresh_mode: ok, huge_expires (expires_in 2^63-1), negative_expires (-1),
unparsable_expires (99999999999999999999), big_body (64 MiB with Content-Length), big_chunked
(64 MiB chunked), gzip_bomb (1 GiB of zeros gzip-compressed, about 1 MiB on the wire),
malformed_status ("HTTP/1.1 abc"), rate_limited (429 with Retry-After: 120).
Usage: hostile_provider.py --port-file FILE
"""
import argparse
import json
import os
import socket
import socketserver
import threading
import zlib
from urllib.parse import parse_qs, urlencode, urlsplit

CLIENT_ID = "hostile-client"
BIG = 64 << 20


def gzip_bomb(zero_bytes=1 << 30):
    """A gzip member whose body inflates to `zero_bytes` zeros (RFC 1952), compressed in pieces."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    piece = bytes(1 << 20)
    parts = [compressor.compress(piece) for _ in range(zero_bytes >> 20)]
    parts.append(compressor.flush())
    return b"".join(parts)


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.token_mode = "ok"
        self.refresh_mode = "ok"
        self.uid = "ada"
        self.expires_in = 3600
        self.token_calls = 0
        self.refresh_calls = 0
        self.issued = 0
        self.codes = set()
        # Made before the port is published: compressing 1 GiB takes seconds, which a loaded machine
        # would add to the answer and the broker would read as its own timeout (504), not the bomb.
        self.bomb = gzip_bomb()


STATE = State()


def response(status, reason, headers, body=b""):
    head = f"HTTP/1.1 {status} {reason}\r\n"
    for name, value in headers:
        head += f"{name}: {value}\r\n"
    return head.encode() + b"\r\n" + body


def json_answer(obj, status=200, reason="OK"):
    body = json.dumps(obj).encode()
    return response(status, reason, [("Content-Type", "application/json"), ("Content-Length", len(body)),
                                     ("Cache-Control", "no-store"), ("Connection", "close")], body)


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        try:
            request_line = self.rfile.readline(8192).decode("latin-1").rstrip("\r\n")
            method, target, _ = request_line.split(" ", 2)
            length = 0
            while True:
                line = self.rfile.readline(8192).decode("latin-1").rstrip("\r\n")
                if not line:
                    break
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            body = self.rfile.read(length).decode("utf-8", "replace") if length else ""
            url = urlsplit(target)
            query = {k: v[0] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
            if url.path == "/authorize":
                self.authorize(query)
            elif url.path == "/token" and method == "POST":
                self.token({k: v[0] for k, v in parse_qs(body).items()})
            elif url.path == "/user":
                with STATE.lock:
                    uid = STATE.uid
                self.wfile.write(json_answer({"id": uid, "login": "hostile-user"}))
            elif url.path == "/control":
                with STATE.lock:
                    STATE.token_mode = query.get("token_mode", STATE.token_mode)
                    STATE.refresh_mode = query.get("refresh_mode", STATE.refresh_mode)
                    STATE.uid = query.get("uid", STATE.uid)
                    STATE.expires_in = int(query.get("expires_in", STATE.expires_in))
                self.wfile.write(json_answer({"ok": True}))
            elif url.path == "/stats":
                with STATE.lock:
                    stats = {"token_calls": STATE.token_calls, "refresh_calls": STATE.refresh_calls}
                self.wfile.write(json_answer(stats))
            else:
                self.wfile.write(json_answer({"error": "not_found"}, 404, "Not Found"))
        except (ConnectionError, BrokenPipeError, ValueError):
            pass

    def authorize(self, query):
        with STATE.lock:
            STATE.issued += 1
            code = f"HOSTILE-CODE-SENTINEL-{STATE.issued}"
            STATE.codes.add(code)
        location = query["redirect_uri"] + "?" + urlencode({"code": code, "state": query.get("state", "")})
        self.wfile.write(response(302, "Found", [("Location", location), ("Content-Length", 0), ("Connection", "close")]))

    def token(self, form):
        with STATE.lock:
            refresh = form.get("grant_type") == "refresh_token"
            if refresh:
                STATE.refresh_calls += 1
                mode = STATE.refresh_mode
            else:
                STATE.token_calls += 1
                mode = STATE.token_mode
                if form.get("code") not in STATE.codes:
                    mode = "invalid_grant"
                STATE.codes.discard(form.get("code"))
            STATE.issued += 1
            n = STATE.issued
            expires_in = STATE.expires_in
        grant = {"access_token": f"HOSTILE-ACCESS-SENTINEL-{n}", "token_type": "bearer",
                 "refresh_token": f"HOSTILE-REFRESH-SENTINEL-{n}"}
        if mode == "ok":
            self.wfile.write(json_answer(dict(grant, expires_in=expires_in)))
        elif mode == "invalid_grant":
            self.wfile.write(json_answer({"error": "invalid_grant"}, 400, "Bad Request"))
        elif mode in ("huge_expires", "negative_expires", "unparsable_expires"):
            value = {"huge_expires": "9223372036854775807", "negative_expires": "-1",
                     "unparsable_expires": "99999999999999999999"}[mode]
            body = json.dumps(grant)[:-1].encode() + b', "expires_in": ' + value.encode() + b"}"
            self.wfile.write(response(200, "OK", [("Content-Type", "application/json"), ("Content-Length", len(body)),
                                                  ("Connection", "close")], body))
        elif mode in ("big_body", "big_chunked"):
            chunked = mode == "big_chunked"
            headers = [("Content-Type", "application/json"), ("Connection", "close")]
            headers.append(("Transfer-Encoding", "chunked") if chunked else ("Content-Length", BIG))
            self.wfile.write(response(200, "OK", headers))
            piece = b" " * (64 << 10)
            for _ in range(BIG // len(piece)):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
            if chunked:
                self.wfile.write(b"0\r\n\r\n")
        elif mode == "gzip_bomb":
            bomb = STATE.bomb
            self.wfile.write(response(200, "OK", [("Content-Type", "application/json"), ("Content-Encoding", "gzip"),
                                                  ("Content-Length", len(bomb)), ("Connection", "close")], bomb))
        elif mode == "malformed_status":
            self.wfile.write(b"HTTP/1.1 abc Whatever\r\nContent-Length: 0\r\n\r\n")
        elif mode == "rate_limited":
            self.wfile.write(response(429, "Too Many Requests", [("Retry-After", "120"), ("Content-Type", "application/json"),
                                                                 ("Content-Length", 2), ("Connection", "close")], b"{}"))


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    args = parser.parse_args()
    server = Server(("127.0.0.1", 0), Handler)
    port = server.server_address[1]
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(port))
    os.rename(args.port_file + ".tmp", args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
