#!/usr/bin/env python3
"""A fake Sina Weibo for the hardening scripts, speaking Weibo's wire format.

GET  /oauth2/authorize      auto-approves: 302 to redirect_uri?code=CODE&state=STATE
POST /oauth2/access_token   form in; JSON labelled text/plain, uid as a string (providers.md §1)
GET  /2/account/get_uid.json  {"uid": <number>}
POST /oauth2/revokeoauth2   {"result":"true"}
GET  /stats                 {"token_calls": N, "open_codes": N}, for the scripts
GET  /control?token_delay=S the token endpoint answers S seconds after counting the call

Every code is single use and gets a fresh uid, so each completed dance makes a new
account. Tokens and codes carry the word SENTINEL so scans can look for them.
Usage: fake_provider.py --port-file FILE [--client-secret S]; listens on 127.0.0.1:0.
"""
import argparse
import itertools
import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

CLIENT_ID = "1234567890"


class State:
    def __init__(self, client_secret):
        self.client_secret = client_secret
        self.lock = threading.Lock()
        self.codes = {}  # code -> (redirect_uri, uid)
        self.uids = itertools.count(5_000_000_001)
        self.token_calls = 0
        self.token_delay = 0.0


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "weibo"

    def log_message(self, *args):  # quiet
        pass

    def reply(self, status, body, content_type="text/plain;charset=UTF-8", headers=()):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        state: State = self.server.state
        if url.path == "/oauth2/authorize":
            redirect, st = query.get("redirect_uri"), query.get("state")
            if query.get("client_id") != CLIENT_ID or not redirect or not st:
                return self.reply(400, '{"error":"invalid_request","error_code":21323}')
            code = "WEIBO-CODE-SENTINEL-" + secrets.token_hex(12)
            with state.lock:
                state.codes[code] = (redirect, str(next(state.uids)))
            return self.reply(302, "", headers=[("Location", redirect + "?" + urlencode({"code": code, "state": st}))])
        if url.path == "/2/account/get_uid.json":
            return self.reply(200, '{"uid":1}', "application/json;charset=UTF-8")
        if url.path == "/control":
            with state.lock:
                state.token_delay = float(query.get("token_delay", state.token_delay))
            return self.reply(200, "{}")
        if url.path == "/stats":
            with state.lock:
                return self.reply(200, json.dumps({"token_calls": state.token_calls, "open_codes": len(state.codes)}))
        self.reply(404, '{"error":"not_found"}')

    def do_POST(self):
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
        state: State = self.server.state
        if url.path == "/oauth2/access_token":
            with state.lock:
                state.token_calls += 1
                issued = state.codes.pop(form.get("code", ""), None)
                delay = state.token_delay
            time.sleep(delay)
            if form.get("client_id") != CLIENT_ID or form.get("client_secret") != state.client_secret:
                return self.reply(401, '{"error":"invalid_client","error_code":21324}')
            if form.get("grant_type") != "authorization_code" or issued is None or form.get("redirect_uri") != issued[0]:
                return self.reply(400, '{"error":"invalid_grant","error_code":21325}')
            token = "2.00WEIBO-TOKEN-SENTINEL-" + secrets.token_hex(12)
            body = {"access_token": token, "remind_in": "157679999", "expires_in": 157679999,
                    "uid": issued[1], "isRealName": "true"}
            return self.reply(200, json.dumps(body))
        if url.path == "/oauth2/revokeoauth2":
            return self.reply(200, '{"result":"true"}')
        self.reply(404, '{"error":"not_found"}')


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--client-secret", default="WEIBO-CLIENT-SECRET-SENTINEL-hardening")
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.state = State(args.client_secret)
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    import os
    os.rename(args.port_file + ".tmp", args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
