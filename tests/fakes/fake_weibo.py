#!/usr/bin/env python3
"""A fake Sina Weibo on 127.0.0.1 that auto-approves, speaking Weibo's wire format
(reference/providers.md section 1). Used by the browser test (imported) and by the
hardening scripts (run as a program).

GET  /oauth2/authorize        302 to redirect_uri?code=CODE&state=STATE, or with
                              error=access_denied while `deny` is set
POST /oauth2/access_token     form in; JSON labelled text/plain, uid as a string
GET  /2/account/get_uid.json  {"uid": <number>}
POST /oauth2/revokeoauth2     {"result":"true"}
GET  /stats                   {"token_calls": N, "open_codes": N}
GET  /control?token_delay=S   the token endpoint answers S seconds after counting the call
GET  /csp-probe               a page that breaks its own Content-Security-Policy, so the
                              browser test can prove its console check sees violations

Codes are single use. With fresh_uids every code gets a new uid, so each completed
dance makes a new account; otherwise every account is weibo:UID. Tokens and codes
carry the word SENTINEL so scans can look for them.
Program usage: fake_weibo.py --port-file FILE [--client-secret S] (fresh uids).
"""
import argparse
import itertools
import json
import os
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

CLIENT_ID = "1234567890"
UID = "3733034601"
TOKEN_MARK = "WEIBO-TOKEN-SENTINEL"


class FakeWeibo:
    """Starts on a free port in a daemon thread; counters and switches are read and set by the caller."""

    def __init__(self, client_secret, expires_in=3 * 3600, fresh_uids=False):
        self.client_secret = client_secret
        self.expires_in = expires_in
        self.deny = False
        self.token_delay = 0.0
        self.lock = threading.Lock()
        self.codes = {}  # code -> (redirect_uri, uid)
        self.uids = itertools.count(5_000_000_001) if fresh_uids else itertools.repeat(int(UID))
        self.calls = {"authorize": 0, "token": 0, "uid": 0, "revoke": 0}
        self.referers = []  # Referer headers the authorize page received
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.base = "http://127.0.0.1:%d" % self.port
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def authorize(self, handler, query):
        with self.lock:
            self.calls["authorize"] += 1
            self.referers.append(handler.headers.get("Referer"))
            deny = self.deny
        redirect, state = query.get("redirect_uri"), query.get("state")
        if query.get("client_id") != CLIENT_ID or not redirect or not state:
            return handler.reply(400, '{"error":"invalid_request","error_code":21323}')
        if deny:
            params = {"error": "access_denied", "error_code": "21330",
                      "error_description": "user denied your request.", "state": state}
        else:
            code = "WEIBO-CODE-SENTINEL-" + uuid.uuid4().hex
            with self.lock:
                self.codes[code] = (redirect, str(next(self.uids)))
            params = {"code": code, "state": state}
        handler.reply(302, "", headers=[("Location", redirect + "?" + urlencode(params))])

    def token(self, handler, form):
        with self.lock:
            self.calls["token"] += 1
            issued = self.codes.pop(form.get("code", ""), None)
            delay = self.token_delay
        time.sleep(delay)
        if form.get("client_id") != CLIENT_ID or form.get("client_secret") != self.client_secret:
            handler.reply(401, '{"error":"invalid_client","error_code":21324}')
        elif form.get("grant_type") != "authorization_code" or issued is None or form.get("redirect_uri") != issued[0]:
            handler.reply(400, '{"error":"invalid_grant","error_code":21325}')
        else:
            body = {"access_token": "2.00%s-%s" % (TOKEN_MARK, uuid.uuid4().hex), "remind_in": str(self.expires_in),
                    "expires_in": self.expires_in, "uid": issued[1], "isRealName": "true"}
            handler.reply(200, json.dumps(body))

    def stats(self):
        with self.lock:
            return {"token_calls": self.calls["token"], "open_codes": len(self.codes)}

    def providers_entry(self):
        """The providers-file entry pointing the weibo preset at this fake."""
        return {"client_id": CLIENT_ID, "client_secret": "${FAKE_WEIBO_SECRET}",
                "authorize_url": self.base + "/oauth2/authorize", "token_url": self.base + "/oauth2/access_token",
                "user_url": self.base + "/2/account/get_uid.json", "revoke_url": self.base + "/oauth2/revokeoauth2"}

    def count(self, name):
        with self.lock:
            return self.calls[name]

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def _handler(fake):
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

        def form(self):
            length = int(self.headers.get("Content-Length") or 0)
            return {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}

        def do_GET(self):
            url = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(url.query).items()}
            if url.path == "/oauth2/authorize":
                fake.authorize(self, query)
            elif url.path == "/2/account/get_uid.json":
                with fake.lock:
                    fake.calls["uid"] += 1
                self.reply(200, json.dumps({"uid": int(UID)}), "application/json;charset=UTF-8")
            elif url.path == "/stats":
                self.reply(200, json.dumps(fake.stats()))
            elif url.path == "/control":
                with fake.lock:
                    fake.token_delay = float(query.get("token_delay", fake.token_delay))
                self.reply(200, "{}")
            elif url.path == "/csp-probe":
                self.reply(200, "<!doctype html><title>probe</title><p style=\"color:red\">probe</p>"
                           "<script>document.title='ran'</script>", "text/html",
                           headers=[("Content-Security-Policy", "default-src 'none'")])
            else:
                self.reply(404, '{"error":"not_found"}')

        def do_POST(self):
            url = urlsplit(self.path)
            if url.path == "/oauth2/access_token":
                fake.token(self, self.form())
            elif url.path == "/oauth2/revokeoauth2":
                self.form()
                with fake.lock:
                    fake.calls["revoke"] += 1
                self.reply(200, '{"result":"true"}')
            else:
                self.reply(404, '{"error":"not_found"}')

    return Handler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--client-secret", default="WEIBO-CLIENT-SECRET-SENTINEL-hardening")
    args = parser.parse_args()
    fake = FakeWeibo(args.client_secret, expires_in=157679999, fresh_uids=True)
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(fake.port))
    os.rename(args.port_file + ".tmp", args.port_file)
    fake.thread.join()


if __name__ == "__main__":
    main()
