#!/usr/bin/env python3
"""A fake OAuth 2.0 provider (RFC 6749) on 127.0.0.1 with refresh tokens, for scripts/api-contract.

GET  /authorize  302 to redirect_uri?code=CODE&state=STATE, or error=access_denied while `deny` is set
POST /token      authorization_code and refresh_token grants (client_secret_post); refresh tokens rotate;
                 `refresh` picks how the refresh grant answers: ok, invalid_grant, rate_limited (429 with
                 Retry-After: 120), slow (answers after `delay` seconds); `token_fails` makes the code
                 exchange answer 500
GET  /user       {"id": <uid>, "login": "ada"} for a token it issued
POST /revoke     200, or 503 while `revoke_fails` is set

Every code gets the current `uid`, `expires_in` and `issue_refresh` settings, so one fake makes
accounts of several kinds. Switches are plain attributes, read and set by the caller.
"""
import itertools
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

CLIENT_ID = "acme-client-id"


class FakeOAuth2:
    """Starts on a free port in a daemon thread."""

    def __init__(self, client_secret):
        self.client_secret = client_secret
        self.uid = "4242"
        self.expires_in = 3600
        self.issue_refresh = True
        self.deny = False
        self.token_fails = False
        self.refresh = "ok"
        self.delay = 0.0
        self.revoke_fails = False
        self.lock = threading.Lock()
        self.counter = itertools.count(1)
        self.codes = {}  # code -> (redirect_uri, uid, expires_in, issue_refresh)
        self.refresh_tokens = {}  # refresh token -> uid
        self.access_tokens = {}  # access token -> uid
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.base = "http://127.0.0.1:%d" % self.port
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def grant(self, uid, expires_in, issue_refresh):
        n = next(self.counter)
        access = "ACME-ACCESS-SENTINEL-%d" % n
        body = {"access_token": access, "token_type": "bearer", "expires_in": expires_in}
        self.access_tokens[access] = uid
        if issue_refresh:
            refresh = "ACME-REFRESH-SENTINEL-%d" % n
            self.refresh_tokens[refresh] = uid
            body["refresh_token"] = refresh
        return body

    def providers_entry(self, secret_variable):
        """The providers-file entry of provider `acme` pointing at this fake."""
        return {"kind": "oauth2", "client_id": CLIENT_ID, "client_secret": "${%s}" % secret_variable,
                "authorize_url": self.base + "/authorize", "token_url": self.base + "/token",
                "user_url": self.base + "/user", "revoke_url": self.base + "/revoke"}

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def _handler(fake):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # quiet
            pass

        def reply(self, status, body, headers=()):
            data = json.dumps(body).encode() if body is not None else b""
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers:
                self.send_header(name, value)
            try:
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the broker gave up waiting (a slow answer past its timeout)

        def form(self):
            length = int(self.headers.get("Content-Length") or 0)
            return {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}

        def do_GET(self):
            url = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(url.query).items()}
            if url.path == "/authorize":
                redirect, state = query.get("redirect_uri"), query.get("state")
                if query.get("client_id") != CLIENT_ID or not redirect or not state:
                    return self.reply(400, {"error": "invalid_request"})
                with fake.lock:
                    if fake.deny:
                        params = {"error": "access_denied", "state": state}
                    else:
                        code = "ACME-CODE-SENTINEL-%d" % next(fake.counter)
                        fake.codes[code] = (redirect, fake.uid, fake.expires_in, fake.issue_refresh)
                        params = {"code": code, "state": state}
                self.reply(302, None, [("Location", redirect + "?" + urlencode(params))])
            elif url.path == "/user":
                token = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
                with fake.lock:
                    uid = fake.access_tokens.get(token)
                if uid is None:
                    return self.reply(401, {"message": "Bad credentials"})
                self.reply(200, {"id": int(uid), "login": "ada"})
            else:
                self.reply(404, {"error": "not_found"})

        def do_POST(self):
            url = urlsplit(self.path)
            form = self.form()
            if url.path == "/revoke":
                with fake.lock:
                    fails = fake.revoke_fails
                return self.reply(503 if fails else 200, {} if not fails else {"error": "temporarily_unavailable"})
            if url.path != "/token":
                return self.reply(404, {"error": "not_found"})
            if form.get("client_id") != CLIENT_ID or form.get("client_secret") != fake.client_secret:
                return self.reply(401, {"error": "invalid_client"})
            with fake.lock:
                grant_type = form.get("grant_type")
                if grant_type == "authorization_code":
                    issued = fake.codes.pop(form.get("code", ""), None)
                    if fake.token_fails:
                        return self.reply(500, {"error": "server_error"})
                    if issued is None or form.get("redirect_uri") != issued[0]:
                        return self.reply(400, {"error": "invalid_grant"})
                    return self.reply(200, fake.grant(*issued[1:]))
                if grant_type != "refresh_token":
                    return self.reply(400, {"error": "unsupported_grant_type"})
                mode, delay = fake.refresh, fake.delay
            if mode == "slow":
                time.sleep(delay)
            if mode == "invalid_grant":
                return self.reply(400, {"error": "invalid_grant"})
            if mode == "rate_limited":
                return self.reply(429, {"error": "slow_down"}, [("Retry-After", "120")])
            with fake.lock:
                uid = fake.refresh_tokens.pop(form.get("refresh_token", ""), None)
                if uid is None:
                    return self.reply(400, {"error": "invalid_grant"})
                return self.reply(200, fake.grant(uid, fake.expires_in, True))

    return Handler
