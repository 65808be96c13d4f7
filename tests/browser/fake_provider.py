"""A fake Sina Weibo on 127.0.0.1 that auto-approves, for the browser test.

It speaks Weibo's wire format (reference/providers.md section 1): the authorize
page redirects straight back with a code (or with error=access_denied when told
to deny), the token answer is JSON labelled text/plain with a string uid, and
get_uid.json answers {"uid": <number>}. It also serves /csp-probe, a page that
breaks its own Content-Security-Policy, so the test can prove that its console
check sees CSP violations.
"""

import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

CLIENT_ID = "1234567890"
UID = "3733034601"
TOKEN_MARK = "BROWSER-TOKEN-SENTINEL"


class FakeWeibo:
    """Starts on a free port; counters and switches are read and set by the test."""

    def __init__(self, client_secret, expires_in=3 * 3600):
        self.client_secret = client_secret
        self.expires_in = expires_in
        self.deny = False
        self.lock = threading.Lock()
        self.codes = {}  # code -> redirect_uri
        self.calls = {"authorize": 0, "token": 0, "uid": 0, "revoke": 0}
        self.referers = []  # Referer headers the authorize page received
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
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
                body = self.rfile.read(length).decode()
                return {k: v[0] for k, v in parse_qs(body).items()}

            def do_GET(self):
                url = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(url.query).items()}
                if url.path == "/oauth2/authorize":
                    fake.authorize(self, query)
                elif url.path == "/2/account/get_uid.json":
                    with fake.lock:
                        fake.calls["uid"] += 1
                    self.reply(200, json.dumps({"uid": int(UID)}), "application/json;charset=UTF-8")
                elif url.path == "/csp-probe":
                    self.reply(200, "<!doctype html><title>probe</title><p style=\"color:red\">probe</p>"
                               "<script>document.title='ran'</script>", "text/html",
                               headers=[("Content-Security-Policy", "default-src 'none'")])
                else:
                    self.reply(404, "{\"error\":\"not_found\"}")

            def do_POST(self):
                url = urlsplit(self.path)
                if url.path == "/oauth2/access_token":
                    fake.token(self, self.form())
                elif url.path == "/oauth2/revokeoauth2":
                    self.form()
                    with fake.lock:
                        fake.calls["revoke"] += 1
                    self.reply(200, "{\"result\":\"true\"}")
                else:
                    self.reply(404, "{\"error\":\"not_found\"}")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
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
            handler.reply(400, "{\"error\":\"invalid_request\",\"error_code\":21323}")
            return
        if deny:
            params = {"error": "access_denied", "error_code": "21330",
                      "error_description": "user denied your request.", "state": state}
        else:
            code = "WEIBO-CODE-SENTINEL-" + uuid.uuid4().hex
            with self.lock:
                self.codes[code] = redirect
            params = {"code": code, "state": state}
        handler.reply(302, "", headers=[("Location", redirect + "?" + urlencode(params))])

    def token(self, handler, form):
        with self.lock:
            self.calls["token"] += 1
            redirect = self.codes.pop(form.get("code", ""), None)
        if form.get("client_id") != CLIENT_ID or form.get("client_secret") != self.client_secret:
            handler.reply(401, "{\"error\":\"invalid_client\",\"error_code\":21324}")
        elif form.get("grant_type") != "authorization_code" or redirect is None or form.get("redirect_uri") != redirect:
            handler.reply(400, "{\"error\":\"invalid_grant\",\"error_code\":21325}")
        else:
            body = {"access_token": "2.00%s-%s" % (TOKEN_MARK, uuid.uuid4().hex), "remind_in": str(self.expires_in),
                    "expires_in": self.expires_in, "uid": UID, "isRealName": "true"}
            handler.reply(200, json.dumps(body))

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
