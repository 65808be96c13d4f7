#!/usr/bin/env python3
"""The API contract, end to end: a real token-broker process and a fake provider, every route driven
through its main successes and errors, every answer validated against docs/openapi.yaml (openapi-core).

Also checks that GET /openapi.json is docs/openapi.yaml, that answers the HTTP server gives before any
route (404, 405) match the document's TransportError, and that every operation of the document was
exercised at least once, so a route added to the document without a scenario here fails too.

Usage: contract.py [--binary PATH] [--fake-provider PATH]
Prints PASS/FAIL per scenario and "N passed, N failed" last; exits 1 when anything failed.
"""
import argparse
import copy
import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.request
from urllib.parse import parse_qs, urlencode, urlsplit

import yaml
from openapi_core import OpenAPI
from openapi_core.datatypes import RequestParameters
from openapi_schema_validator import OAS31Validator
from werkzeug.datastructures import Headers, ImmutableMultiDict

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

API_KEY = "contract-test-api-key-0123456789"
CLIENT_SECRET = "ACME-CLIENT-SECRET-SENTINEL-0123456789"
FRONT_END = "http://front.example:3000"
RETURN_TO = "http://app.example:3000/done"
JSON = {"Accept": "application/json"}
HTML = {"Accept": "text/html,application/xhtml+xml;q=0.9"}
API = {"Authorization": "Bearer " + API_KEY}
CREDENTIAL_SECRET = "CREDENTIAL-SENTINEL-0123456789"


class FakeProvider:
    """The fake-provider executable as `acme`, an OAuth 2.0 provider with rotating refresh tokens and revocation:
    its providers-file entry, the environment the broker needs for it, its switches (POST /_fake/control), stop."""

    def __init__(self, binary, workdir, kind="oauth2"):
        providers_file = os.path.join(workdir, "fake-providers-%s.json" % kind)
        self.log = open(os.path.join(workdir, "fake-provider-%s.log" % kind), "w")
        arguments = ([binary, "--kind", "oauth2", "--control", "--client-credentials", "--client-secret", CLIENT_SECRET,
                      "--secret-variable", "FAKE_ACME_SECRET", "--providers-file", providers_file] if kind == "oauth2"
                     # The API taking entered credentials: CREDENTIAL_SECRET is its key, token and ada's password.
                     else [binary, "--kind", kind, "--client-secret", CREDENTIAL_SECRET, "--providers-file", providers_file])
        self.process = subprocess.Popen(arguments, stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.process.stdout.readline().strip()
        if not line.isdigit():
            self.stop()
            raise RuntimeError("fake-provider did not start: %r" % line)
        self.base = "http://127.0.0.1:%s" % line
        with open(providers_file) as f:
            self.providers = json.load(f)["providers"]  # acme (sign-in and app tokens) and acme-app (app tokens only)
        self.env = {"FAKE_ACME_SECRET": CLIENT_SECRET}

    def configure(self, uid=None, expires_in=None, issue_refresh=None, deny=None, token_fails=None, refresh=None,
                  delay=None, revoke_fails=None, app_token_fails=None, extras=None):
        """Sets the switches given: uid, expires_in, issue_refresh, deny, token_fails,
        refresh (ok | invalid_grant | rate_limited | slow, with delay seconds), revoke_fails,
        extras (string members every token answer adds: {"instance_url": …})."""
        fields = {}
        if uid is not None:
            fields["uid"] = uid
        if expires_in is not None:
            fields["access_token_lifetime"] = fields["refreshed_token_lifetime"] = expires_in
        if issue_refresh is not None:
            fields["refresh_tokens"] = "rotate" if issue_refresh else "none"
        if deny is not None:
            fields["deny"] = "true" if deny else "false"
        if token_fails is not None:
            fields["exchange_failure"] = "server_error" if token_fails else "none"
        if refresh is not None:
            failures = {"ok": "none", "slow": "none", "invalid_grant": "invalid_grant", "rate_limited": "rate_limited:120"}
            assert refresh in failures, refresh
            fields["refresh_failure"] = failures[refresh]
            fields["refresh_delay"] = (delay or 0) if refresh == "slow" else 0
        elif delay is not None:
            fields["refresh_delay"] = delay
        if revoke_fails is not None:
            fields["revoke_failure"] = "503" if revoke_fails else "none"
        if app_token_fails is not None:
            fields["client_credentials_failure"] = "rate_limited:120" if app_token_fails else "none"
        if extras is not None:
            fields["extra_fields"] = json.dumps(extras)
        request = urllib.request.Request(self.base + "/_fake/control", data=urlencode(fields).encode())
        with urllib.request.urlopen(request, timeout=5) as reply:
            reply.read()

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Broker:
    """The real token-broker on a free port, its providers file pointing at the fake."""

    def __init__(self, binary, provider, workdir, credentials):
        self.port = free_port()
        self.base = "http://127.0.0.1:%d" % self.port
        providers = os.path.join(workdir, "providers.json")
        # An OpenID provider whose issuer never answers: listed as unavailable, its sign-ins refused with 503.
        down = {"kind": "oidc", "issuer": "http://127.0.0.1:9", "client_id": "down-client", "client_secret": "down-secret"}
        # A remote MCP server that never answers: listed as unavailable with the reason, its sign-ins refused with 503.
        down_mcp = {"kind": "mcp", "server": "http://127.0.0.1:9/mcp", "api_allow_private": True}
        # The fake's resource server is acme's API, on loopback: allowed explicitly, as a private provider would be.
        # Its device endpoint too (RFC 8628), whose verification URI is http: on loopback.
        acme = dict(provider.providers["acme"], api_base_url=provider.base + "/_api", api_allow_private=True,
                    device_authorization_url=provider.base + "/device/code", device_allow_http=True)
        # acme again at each account's own host, `{subdomain}.localhost` (loopback, RFC 6761 §6.3): a per-account setting.
        at_host = "http://{subdomain}.localhost:%d" % int(provider.base.rsplit(":", 1)[1])
        acme_sub = json.loads(json.dumps(provider.providers["acme"]).replace(provider.base, at_host))
        acme_sub["settings"] = [{"name": "subdomain", "description": "Your team's subdomain", "pattern": "[a-z0-9][a-z0-9-]*"}]
        with open(providers, "w") as f:
            json.dump({"providers": dict(provider.providers, **credentials.providers, **{"acme": acme, "acme-sub": acme_sub,
                                                                                       "down-oidc": down, "down-mcp": down_mcp})}, f)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": workdir,
               "BROKER_HOST": "127.0.0.1", "BROKER_PORT": str(self.port), "BROKER_PUBLIC_URL": self.base,
               "BROKER_DATA_DIR": os.path.join(workdir, "data"), "BROKER_PROVIDERS_FILE": providers,
               "BROKER_API_KEY": API_KEY, "BROKER_CORS_ORIGINS": FRONT_END,
               "BROKER_RETURN_TO_ALLOWLIST": "http://app.example:3000", "BROKER_REFRESH_INTERVAL": "0",
               "BROKER_UPSTREAM_TIMEOUT": "1", "BROKER_LOG_FORMAT": "json",
               # A receiver that is never there: deliveries stay pending, so the outbox has something to list.
               "BROKER_WEBHOOK_URL": "http://127.0.0.1:9/hooks", "BROKER_WEBHOOK_SECRET": "contract-webhook-secret-0123456789abcdef",
               **provider.env}
        self.log_path = os.path.join(workdir, "broker.log")
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen([binary], env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 20
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError("token-broker exited with %s; see %s" % (self.process.returncode, self.log_path))
            try:
                connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=1)
                connection.request("GET", "/healthz")
                if connection.getresponse().status == 200:
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("token-broker did not answer /healthz within 20 s")

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


class Reply:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    def header(self, name):
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)

    def all(self, name):
        return [v for k, v in self.headers if k.lower() == name.lower()]

    @property
    def json(self):
        return json.loads(self.body)

    @property
    def error(self):
        return self.json.get("error")


class OpenAPIRequest:
    """A request as openapi-core reads it."""

    def __init__(self, base, method, target, headers, body, cookies):
        url = urlsplit(target)
        self.host_url, self.path, self.method = base, url.path, method.lower()
        self.body = body or None
        self.content_type = (headers.get("Content-Type") or "").lower()
        self.parameters = RequestParameters(query=ImmutableMultiDict(parse_qs(url.query)), header=Headers(headers),
                                            cookie=ImmutableMultiDict(cookies))


class OpenAPIResponse:
    """A response as openapi-core reads it."""

    def __init__(self, reply):
        self.status_code, self.data = reply.status, reply.body
        self.headers = Headers(reply.headers)
        self.content_type = (reply.header("Content-Type") or "").lower()


class Contract:
    """Sends requests to the broker and validates every answer against the document."""

    def __init__(self, document, base):
        self.document = document
        spec = copy.deepcopy(document)
        spec["servers"] = [{"url": base}]  # the document's "." means wherever it is served
        self.openapi = OpenAPI.from_dict(spec)
        self.transport = OAS31Validator({"$ref": "#/components/schemas/TransportError", "components": document["components"]})
        self.base = base
        self.port = int(base.rsplit(":", 1)[1])
        self.exercised = set()
        self.validated = 0

    def call(self, method, target, headers=None, body=b"", jar=None, route=True):
        """One request; the answer is validated against its operation (or, with route=False, TransportError)."""
        headers = dict(headers or {})
        cookies = dict(jar.cookies) if jar else {}
        if cookies:
            headers["Cookie"] = "; ".join("%s=%s" % item for item in cookies.items())
        if isinstance(body, str):
            body = body.encode()
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        connection.request(method, target, body=body or None, headers=headers)
        raw = connection.getresponse()
        reply = Reply(raw.status, raw.getheaders(), raw.read())
        connection.close()
        if jar:
            jar.absorb(reply)
        where = "%s %s -> %d" % (method, target, reply.status)
        if route:
            request = OpenAPIRequest(self.base, method, target, headers, body, cookies)
            try:
                self.openapi.validate_response(request, OpenAPIResponse(reply))
            except Exception as error:
                raise AssertionError("%s does not match docs/openapi.yaml: %s\n%s" % (where, describe(error), reply.body[:300]))
            self.exercised.add((method.lower(), self.template(urlsplit(target).path)))
        else:
            errors = list(self.transport.iter_errors(reply.json))
            assert not errors, "%s is not a TransportError: %s" % (where, [e.message for e in errors])
        self.validated += 1
        return reply

    def template(self, path):
        """The documented path `path` is an instance of (`/flows/abc` of `/flows/{state}`), or `path` itself."""
        for documented in self.document["paths"]:
            pattern = re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(documented))
            if "{" in documented and re.fullmatch(pattern, path):
                return documented
        return path

    def operations(self):
        return {(method, path) for path, item in self.document["paths"].items() for method in item
                if method in ("get", "put", "post", "delete", "options", "head", "patch", "trace")}


def describe(error):
    """openapi-core wraps the schema errors that say what is wrong; unwrap them."""
    parts = [str(error)]
    cause = error.__cause__ or error.__context__
    while cause is not None:
        parts.append(str(cause))
        for sub in getattr(cause, "schema_errors", []) or []:
            parts.append(getattr(sub, "message", str(sub)))
        cause = cause.__cause__ or cause.__context__
    return " / ".join(parts)


class Jar:
    """A browser's cookies for the broker's host."""

    def __init__(self):
        self.cookies = {}

    def absorb(self, reply):
        for line in reply.all("Set-Cookie"):
            pair = line.split(";")[0]
            name, _, value = pair.partition("=")
            if "Max-Age=0" in line or not value:
                self.cookies.pop(name, None)
            else:
                self.cookies[name] = value


def expect(reply, status, error=None):
    assert reply.status == status, "expected %d, got %d: %s" % (status, reply.status, reply.body[:300])
    if error is not None:
        assert reply.error == error, "expected error %s, got %s" % (error, reply.body[:300])


def sign_in(t, jar=None, accept=JSON, query="", **switches):
    """A browser's whole sign-in at the fake (auto-approved): authorize, the provider's redirect, the callback."""
    if switches:
        t.provider.configure(**switches)
    jar = jar or Jar()
    start = t.call("GET", "/authorize?provider=acme" + query, accept, jar=jar)
    expect(start, 302)
    location = urlsplit(start.header("Location"))
    connection = http.client.HTTPConnection(location.hostname, location.port, timeout=10)
    connection.request("GET", location.path + "?" + location.query)
    back = connection.getresponse()
    back.read()
    callback = urlsplit(back.getheader("Location"))
    connection.close()
    return t.call("GET", callback.path + "?" + callback.query, accept, jar=jar), jar


# --- scenarios ---------------------------------------------------------------------------------

def test_documents_and_probes(t):
    document = t.call("GET", "/openapi.json")
    expect(document, 200)
    assert document.json == t.contract.document, "GET /openapi.json differs from docs/openapi.yaml: run scripts/openapi"
    expect(t.call("GET", "/healthz"), 200)
    expect(t.call("GET", "/readyz"), 200)
    metrics = t.call("GET", "/metrics")
    expect(metrics, 200)
    assert b"broker_build_info" in metrics.body
    providers = t.call("GET", "/providers")
    expect(providers, 200)
    by_name = {p["name"]: p for p in providers.json["providers"]}
    assert by_name["acme"]["configured"] and not by_name["github"]["configured"], by_name
    assert by_name["acme"]["available"] and by_name["acme"]["reason"] is None, by_name["acme"]
    down = by_name["down-oidc"]
    assert down["kind"] == "oidc" and down["configured"] and not down["available"], down
    assert down["reason"].startswith("discovery"), down


def test_transport_errors(t):
    expect(t.call("GET", "/no-such-route", route=False), 404, "not_found")
    wrong = t.call("PUT", "/account?id=acme:4242", API, route=False)
    expect(wrong, 405, "method_not_allowed")
    assert wrong.header("Allow") == "GET, HEAD, DELETE, PATCH, OPTIONS", wrong.header("Allow")


def test_browser_sign_in(t):
    done, jar = sign_in(t, uid="4242")
    expect(done, 200)
    assert done.json["id"] == "acme:4242" and "access_token" not in done.json
    assert "tb_session" in jar.cookies
    page, jar = sign_in(t, accept=HTML)
    expect(page, 303)
    assert page.header("Location") == "/"
    back, _ = sign_in(t, query="&return_to=" + RETURN_TO)
    expect(back, 302)
    assert re.fullmatch(re.escape(RETURN_TO) + r"\?account=acme%3A4242&state=[A-Za-z0-9_-]{43}", back.header("Location")), \
        back.header("Location")
    home = t.call("GET", "/", HTML, jar=jar)
    expect(home, 200)
    assert b"acme" in home.body


def test_authorize_errors(t):
    expect(t.call("GET", "/authorize", JSON), 400, "bad_request")
    expect(t.call("GET", "/authorize?provider=nope", JSON), 404, "unknown_provider")
    expect(t.call("GET", "/authorize?provider=github", JSON), 503, "provider_not_configured")
    expect(t.call("GET", "/authorize?provider=down-oidc", JSON), 503, "provider_unavailable")
    expect(t.call("GET", "/authorize?provider=acme&return_to=https://evil.example/", JSON), 400, "invalid_return_to")
    page = t.call("GET", "/authorize?provider=nope", HTML)
    expect(page, 404)
    assert page.header("Content-Type").startswith("text/html") and b"unknown_provider" in page.body


def test_authorize_for_a_back_end(t):
    form = {"Content-Type": "application/x-www-form-urlencoded", **API, **JSON}
    started = t.call("POST", "/authorize", form, body=urlencode({"provider": "acme", "return_to": RETURN_TO}))
    expect(started, 200)
    assert started.json["authorize_url"].startswith(t.provider.providers["acme"]["authorize_url"] + "?")
    as_json = t.call("POST", "/authorize", {"Content-Type": "application/json", **API}, body=json.dumps({"provider": "acme"}))
    expect(as_json, 200)
    expect(t.call("POST", "/authorize", {"Content-Type": "application/json"}, body=json.dumps({"provider": "acme"})),
           401, "unauthorized")
    expect(t.call("POST", "/authorize", {"Content-Type": "application/json", **API}, body="{}"), 400, "bad_request")
    expect(t.call("POST", "/authorize?provider=github", API), 503, "provider_not_configured")
    # End users and tags: a JSON object or repeated tag=key:value; bad values are 400 naming the field.
    owned = t.call("POST", "/authorize", {"Content-Type": "application/json", **API},
                   body=json.dumps({"provider": "acme", "end_user_id": "user-42", "end_user_email": "ada@example.com",
                                    "end_user_name": "Ada", "tags": {"plan": "pro"}}))
    expect(owned, 200)
    expect(t.call("POST", "/authorize", form, body="provider=acme&end_user_id=user-42&tag=plan:pro&tag=env:prod"), 200)
    refused = t.call("POST", "/authorize", form, body="provider=acme&end_user_id=user-42&tag=Plan:pro")
    expect(refused, 400, "bad_request")
    assert "tags" in refused.json["message"], refused.json
    expect(t.call("POST", "/authorize?provider=acme&end_user_email=ada@example.com", API), 400, "bad_request")
    browser = t.call("GET", "/authorize?provider=acme&end_user_id=user-42", JSON)
    expect(browser, 400, "bad_request")
    assert "end_user_id" in browser.json["message"], browser.json


def follow(t, authorize_url, accept=JSON, jar=None):
    """The browser's part of a flow a back end started: the provider's page (auto-approved or denied), then the callback."""
    location = urlsplit(authorize_url)
    connection = http.client.HTTPConnection(location.hostname, location.port, timeout=10)
    connection.request("GET", location.path + "?" + location.query)
    back = connection.getresponse()
    back.read()
    callback = urlsplit(back.getheader("Location"))
    connection.close()
    return t.call("GET", callback.path + "?" + callback.query, accept, jar=jar)


def test_flow_outcomes(t):
    start = {"Content-Type": "application/json", **API}
    started = t.call("POST", "/authorize", start, body=json.dumps({"provider": "acme", "return_to": RETURN_TO}))
    expect(started, 200)
    state = started.json["state"]
    pending = t.call("GET", "/flows/" + state, API)
    expect(pending, 200)
    assert pending.json["status"] == "pending" and pending.json["ended_at"] is None, pending.json
    t.provider.configure(uid="5151")
    back = follow(t, started.json["authorize_url"])
    expect(back, 302)
    assert back.header("Location") == RETURN_TO + "?account=acme%3A5151&state=" + state, back.header("Location")
    done = t.call("GET", "/flows/" + state, API)
    expect(done, 200)
    assert done.json["status"] == "completed" and done.json["account"] == "acme:5151", done.json
    assert done.json["error"] is None and done.json["ended_at"] is not None, done.json
    denied = t.call("POST", "/authorize", start, body=json.dumps({"provider": "acme"}))
    t.provider.configure(deny=True)
    expect(follow(t, denied.json["authorize_url"]), 403, "access_denied")
    t.provider.configure(deny=False)
    failed = t.call("GET", "/flows/" + denied.json["state"], API)
    expect(failed, 200)
    assert failed.json["status"] == "failed" and failed.json["error"] == "access_denied", failed.json
    assert failed.json["account"] is None, failed.json
    expect(t.call("GET", "/flows/" + "A" * 43, API), 404, "not_found")
    expect(t.call("GET", "/flows/" + "A" * 129, API), 400, "bad_request")
    expect(t.call("GET", "/flows/bad%2Fstate", API), 400, "bad_request")
    expect(t.call("GET", "/flows/" + state), 401, "unauthorized")


def test_callback_errors(t):
    expect(t.call("GET", "/callback", JSON), 400, "invalid_state")
    expect(t.call("GET", "/callback?state=unknown&code=x", JSON), 400, "invalid_state")
    denied, _ = sign_in(t, deny=True)
    t.provider.configure(deny=False)
    expect(denied, 403, "access_denied")
    failed, _ = sign_in(t, token_fails=True)
    t.provider.configure(token_fails=False)
    expect(failed, 502, "upstream_error")
    page, _ = sign_in(t, accept=HTML, deny=True)
    t.provider.configure(deny=False)
    expect(page, 403)
    assert page.header("Content-Type").startswith("text/html")


def test_reading_an_account(t):
    done, jar = sign_in(t, uid="4242", expires_in=3600, issue_refresh=True)
    expect(done, 200)
    for headers, who in [(API, "api key"), ({}, "session")]:
        reply = t.call("GET", "/account?id=acme:4242", headers, jar=None if who == "api key" else jar)
        expect(reply, 200)
        assert reply.json["access_token"].startswith("ACME-ACCESS-SENTINEL-") and "refresh_token" not in reply.json
    by_uid = t.call("GET", "/account?provider=acme&uid=4242", API)
    expect(by_uid, 200)
    # The token answer's other fields come back under `raw`; the refresh token never does.
    t.provider.configure(extras={"instance_url": "https://acme.example/instance"})
    expect(sign_in(t, uid="4243", expires_in=3600, issue_refresh=True)[0], 200)
    t.provider.configure(extras={})
    with_raw = t.call("GET", "/account?id=acme:4243", API)
    expect(with_raw, 200)
    raw = with_raw.json.get("raw")
    assert isinstance(raw, dict) and raw.get("instance_url") == "https://acme.example/instance", with_raw.json
    assert "refresh_token" not in raw and "access_token" not in raw, raw
    cors = t.call("GET", "/account?id=acme:4242", {"Origin": FRONT_END}, jar=jar)
    expect(cors, 200)
    assert cors.header("Access-Control-Allow-Origin") == FRONT_END
    # Step-up: a read naming a scope the account was not granted is 403 with a sign-in for the union.
    more = t.call("GET", "/account?id=acme:4242&scopes=contract.write", API)
    expect(more, 403, "insufficient_scope")
    assert more.json["missing_scopes"] == ["contract.write"] and more.json["authorize_url"].startswith("http"), more.json
    expect(t.call("GET", "/account", API), 400, "bad_request")
    expect(t.call("GET", "/account?id=acme:999", API), 404, "not_found")
    expect(t.call("GET", "/account?id=acme:4242"), 401, "unauthorized")
    expect(t.call("GET", "/account?id=acme:4242", {"Authorization": "Bearer wrong-key-0123456789"}), 401, "unauthorized")
    # An expired token without a refresh token is never handed out.
    expect(sign_in(t, uid="5001", expires_in=1, issue_refresh=False)[0], 200)
    # A refreshable one whose refresh is rate limited: the error and when to ask again.
    expect(sign_in(t, uid="5002", expires_in=1, issue_refresh=True)[0], 200)
    t.provider.configure(uid="4242", expires_in=3600, issue_refresh=True, refresh="rate_limited")
    time.sleep(1.2)
    expect(t.call("GET", "/account?id=acme:5001", API), 410, "expired")
    limited = t.call("GET", "/account?id=acme:5002", API)
    t.provider.configure(refresh="ok")
    expect(limited, 502, "upstream_error")
    assert limited.header("Retry-After") == "120", limited.headers


def test_listing_accounts(t):
    done, jar = sign_in(t, uid="4242")
    expect(done, 200)
    everything = t.call("GET", "/accounts", API)
    expect(everything, 200)
    assert "acme:4242" in [a["id"] for a in everything.json["accounts"]]
    expect(t.call("GET", "/accounts?provider=acme", API), 200)
    assert everything.json["next_cursor"] is None
    first = t.call("GET", "/accounts?limit=1&status=active", API)
    expect(first, 200)
    assert len(first.json["accounts"]) == 1
    if first.json["next_cursor"] is not None:
        # A cursor goes on with the filters it was given for; carried to others it is refused.
        expect(t.call("GET", "/accounts?limit=1&status=active&cursor=" + first.json["next_cursor"], API), 200)
        expect(t.call("GET", "/accounts?limit=1&cursor=" + first.json["next_cursor"], API), 400, "bad_request")
    filtered = t.call("GET", "/accounts?end_user_id=user-42&tag=plan:pro&provider=acme", API)
    expect(filtered, 200)
    assert all(a["end_user_id"] == "user-42" and a["tags"].get("plan") == "pro" for a in filtered.json["accounts"])
    expect(t.call("GET", "/accounts?limit=0", API), 400, "bad_request")
    expect(t.call("GET", "/accounts?status=gone", API), 400, "bad_request")
    expect(t.call("GET", "/accounts?cursor=%21", API), 400, "bad_request")
    mine = t.call("GET", "/accounts", {"Origin": FRONT_END}, jar=jar)
    expect(mine, 200)
    assert [a["id"] for a in mine.json["accounts"]] == ["acme:4242"]
    assert mine.header("Access-Control-Allow-Origin") == FRONT_END and mine.header("Vary") == "Origin"
    expect(t.call("GET", "/accounts"), 401, "unauthorized")


def test_preflights(t):
    asked = {"Origin": FRONT_END, "Access-Control-Request-Method": "DELETE"}
    allowed = t.call("OPTIONS", "/account?id=acme:4242", asked)
    expect(allowed, 204)
    assert allowed.header("Access-Control-Allow-Origin") == FRONT_END
    assert allowed.header("Access-Control-Allow-Methods") == "GET, HEAD, DELETE"
    other = t.call("OPTIONS", "/account", {"Origin": "http://other.example", "Access-Control-Request-Method": "DELETE"})
    expect(other, 204)
    assert other.header("Access-Control-Allow-Origin") is None
    expect(t.call("OPTIONS", "/accounts", {"Origin": FRONT_END, "Access-Control-Request-Method": "GET"}), 204)
    refresh = t.call("OPTIONS", "/account/refresh?id=acme:4242", {"Origin": FRONT_END, "Access-Control-Request-Method": "POST"})
    expect(refresh, 204)
    assert refresh.header("Access-Control-Allow-Methods") == "POST", refresh.headers


def test_refreshing_an_account(t):
    done, jar = sign_in(t, uid="4242", expires_in=3600, issue_refresh=True)
    expect(done, 200)
    fresh = t.call("POST", "/account/refresh?id=acme:4242", API)
    expect(fresh, 200)
    assert fresh.json["refreshed_at"] is not None and fresh.json["access_token"], fresh.json
    assert "refresh_token" not in fresh.json
    # A second ask within 10 s gets the same token, without another provider call.
    again = t.call("POST", "/account/refresh?id=acme:4242", API)
    expect(again, 200)
    assert again.json["access_token"] == fresh.json["access_token"]
    expect(t.call("POST", "/account/refresh?id=acme:4242"), 401, "unauthorized")
    # The browser that connected it: from a listed front end, or never on its cookie alone.
    mine = t.call("POST", "/account/refresh?id=acme:4242", {"Origin": FRONT_END}, jar=jar)
    expect(mine, 200)
    assert mine.header("Access-Control-Allow-Origin") == FRONT_END
    expect(t.call("POST", "/account/refresh?id=acme:4242", {}, jar=jar), 403, "forbidden")
    expect(t.call("POST", "/account/refresh", API), 400, "bad_request")
    expect(t.call("POST", "/account/refresh?id=acme:999", API), 404, "not_found")
    expect(sign_in(t, uid="6001", issue_refresh=False)[0], 200)
    expect(t.call("POST", "/account/refresh?id=acme:6001", API), 409, "not_refreshable")
    expect(sign_in(t, uid="6002", issue_refresh=True)[0], 200)
    t.provider.configure(refresh="slow", delay=1.5)
    expect(t.call("POST", "/account/refresh?id=acme:6002", API), 504, "upstream_timeout")
    time.sleep(0.5)  # the slow answer arrives after the broker gave up; let it land first
    expect(sign_in(t, uid="6003", issue_refresh=True)[0], 200)
    t.provider.configure(refresh="rate_limited")
    limited = t.call("POST", "/account/refresh?id=acme:6003", API)
    expect(limited, 502, "upstream_error")
    assert limited.header("Retry-After") == "120"
    expect(sign_in(t, uid="6004", issue_refresh=True)[0], 200)
    t.provider.configure(refresh="invalid_grant")
    expect(t.call("POST", "/account/refresh?id=acme:6004", API), 410, "reauthorization_required")
    expect(t.call("GET", "/account?id=acme:6004", API), 410, "reauthorization_required")
    t.provider.configure(uid="4242", refresh="ok")


def test_forward_auth(t):
    expect(sign_in(t, uid="8001", expires_in=3600, issue_refresh=True)[0], 200)
    named = dict(API, **{"Broker-Account": "acme:8001"})
    token = t.call("GET", "/account?id=acme:8001", API).json["access_token"]
    for method in ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]:
        # One segment after /auth/: an OpenAPI path parameter holds no "/" (the Swift tests send several).
        for path in ["/auth", "/auth/reports"]:
            granted = t.call(method, path, named)
            expect(granted, 200)
            assert granted.header("Authorization") == "Bearer " + token, (method, path, granted.headers)
            assert granted.body == b"", granted.body
    by_query = t.call("GET", "/auth?id=acme:8001", API)
    assert by_query.header("Broker-Account") == "acme:8001", by_query.headers
    expect(t.call("GET", "/auth", {"Broker-Account": "acme:8001"}), 401, "unauthorized")
    expect(t.call("GET", "/auth", API), 400, "bad_request")
    expect(t.call("GET", "/auth?id=acme:999", API), 404, "not_found")
    by_user = dict(API, **{"Broker-Provider": "acme", "Broker-End-User-ID": "nobody"})
    expect(t.call("GET", "/auth", by_user), 404, "not_found")


def test_proxy(t):
    expect(sign_in(t, uid="8101")[0], 200)
    t.provider.configure(uid="4242")
    named = dict(API, **{"Broker-Account": "acme:8101"})
    for method in ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]:
        relayed = t.call(method, "/proxy/echo", named, body="ping" if method in ["POST", "PUT", "PATCH"] else b"")
        expect(relayed, 200)
        assert relayed.header("Broker-Account") == "acme:8101", relayed.headers
        assert relayed.header("Set-Cookie") is None, relayed.headers
    limited = t.call("GET", "/proxy/limited", named)
    expect(limited, 429)
    assert limited.header("Retry-After") == "3600", limited.headers
    expect(t.call("GET", "/proxy/echo", {"Broker-Account": "acme:8101"}), 401, "unauthorized")
    expect(t.call("GET", "/proxy/echo", API), 400, "bad_request")
    expect(t.call("GET", "/proxy/%2e%2e", named), 400, "bad_request")
    expect(t.call("GET", "/proxy/echo", dict(API, **{"Broker-Account": "acme:999"})), 404, "not_found")


def test_mcp(t):
    # The client ID metadata document: none on a broker whose public URL is http, nor for a provider of another kind.
    expect(t.call("GET", "/.well-known/oauth-client/down-mcp"), 404, "not_found")
    expect(t.call("GET", "/.well-known/oauth-client/acme"), 404, "not_found")
    listed = {p["name"]: p for p in t.call("GET", "/providers").json["providers"]}["down-mcp"]
    assert listed["kind"] == "mcp" and listed["configured"] and not listed["available"], listed
    assert listed["reason"].startswith("discovery"), listed
    expect(t.call("GET", "/authorize?provider=down-mcp", {"Accept": "application/json"}), 503, "provider_unavailable")
    # POST /proxy/ calls the API base itself (an MCP server's URL; here acme's API base), relayed as it answers.
    expect(sign_in(t, uid="8102")[0], 200)
    t.provider.configure(uid="4242")
    named = dict(API, **{"Broker-Account": "acme:8102", "Content-Type": "application/json"})
    relayed = t.call("POST", "/proxy/", named, body='{"jsonrpc":"2.0","id":1,"method":"ping"}')
    assert relayed.header("Broker-Account") == "acme:8102", relayed.headers
    expect(t.call("POST", "/proxy/", {"Broker-Account": "acme:8102"}), 401, "unauthorized")


def test_credential_accounts(t):
    write = dict(API, **{"Content-Type": "application/json"})
    made = t.call("POST", "/accounts", write, body=json.dumps(
        {"provider": "keyhdr", "credentials": {"api_key": CREDENTIAL_SECRET}, "end_user_id": "user-7", "tags": {"plan": "pro"}}))
    expect(made, 201)
    assert made.json["id"] == "keyhdr:u-4242" and CREDENTIAL_SECRET.encode() not in made.body, made.body
    again = t.call("POST", "/accounts", write, body=json.dumps({"provider": "keyhdr", "credentials": {"api_key": CREDENTIAL_SECRET}}))
    expect(again, 200)
    basic = t.call("POST", "/accounts", write, body=json.dumps(
        {"provider": "basicp", "credentials": {"username": "ada", "password": CREDENTIAL_SECRET}}))
    expect(basic, 201)
    read = t.call("GET", "/account?id=basicp:ada", API)
    expect(read, 200)
    assert read.json["access_token"] is None and read.json["credentials"]["password"] == CREDENTIAL_SECRET, read.body
    key = t.call("GET", "/account?id=keyhdr:u-4242", API)
    assert key.json["access_token"] == CREDENTIAL_SECRET and key.json["credentials"] == {"api_key": CREDENTIAL_SECRET}, key.body
    expect(t.call("POST", "/accounts", write, body=json.dumps({"provider": "keyqry", "credentials": {"apikey": "x"}})),
           400, "bad_request")
    expect(t.call("POST", "/accounts", write, body=json.dumps({"provider": "bearerp", "credentials": {"token": "wrong"}})),
           422, "credential_invalid")
    expect(t.call("POST", "/accounts", write, body=json.dumps({"provider": "nope", "credentials": {}})), 404, "unknown_provider")
    expect(t.call("POST", "/accounts", {"Content-Type": "application/json"}, body="{}"), 401, "unauthorized")
    verified = t.call("POST", "/account/verify?id=keyhdr:u-4242", API)
    expect(verified, 200)
    assert verified.json == {"id": "keyhdr:u-4242", "valid": True, "status": 200}, verified.body
    expect(t.call("POST", "/account/verify?id=keyhdr:nobody", API), 404, "not_found")
    expect(t.call("POST", "/account/verify?id=acme:4242", API), 400, "bad_request")
    expect(t.call("POST", "/account/verify?id=keyhdr:u-4242"), 401, "unauthorized")
    proxied = t.call("GET", "/proxy/items", dict(API, **{"Broker-Account": "basicp:ada"}))
    expect(proxied, 200)
    # OAuth tokens from another system: given a uid and no refresh token, stored as they are.
    imported = t.call("POST", "/accounts", write, body=json.dumps(
        {"provider": "acme", "access_token": "IMPORTED-ACCESS", "uid": "imported-1", "expires_at": "2031-01-02T03:04:05Z"}))
    expect(imported, 201)
    checked = t.call("POST", "/accounts", write, body=json.dumps(
        {"provider": "acme", "access_token": "IMPORTED-ACCESS", "uid": "imported-2", "dry_run": True}))
    expect(checked, 200)
    expect(t.call("GET", "/account?id=acme:imported-2", API), 404, "not_found")
    edited = t.call("PATCH", "/account?id=acme:imported-1", write, body=json.dumps({"tags": {"moved": "yes"}, "end_user_id": "user-8"}))
    expect(edited, 200)
    assert edited.json["tags"] == {"moved": "yes"} and edited.json["end_user_id"] == "user-8", edited.body
    expect(t.call("PATCH", "/account?id=acme:imported-1", write, body=json.dumps({"tag": "x"})), 400, "bad_request")
    expect(t.call("PATCH", "/account?id=acme:nobody", write, body=json.dumps({"tags": {}})), 404, "not_found")
    # metadata: a free JSON object of at most 16 KB, shown by GET /account; anything else is 400.
    meta = t.call("PATCH", "/account?id=acme:imported-1", write, body=json.dumps({"metadata": {"crm": {"id": 42}, "ok": True}}))
    expect(meta, 200)
    assert meta.json["metadata"] == {"crm": {"id": 42}, "ok": True}, meta.body
    assert t.call("GET", "/account?id=acme:imported-1", API).json["metadata"] == {"crm": {"id": 42}, "ok": True}
    expect(t.call("PATCH", "/account?id=acme:imported-1", write, body=json.dumps({"metadata": [1]})), 400, "bad_request")
    expect(t.call("PATCH", "/account?id=acme:imported-1", write, body=json.dumps({"metadata": {"x": "y" * 17000}})),
           400, "bad_request")
    # Per-account settings: a provider without settings takes none, refused before any call.
    expect(t.call("POST", "/accounts", write, body=json.dumps(
        {"provider": "keyhdr", "credentials": {"api_key": CREDENTIAL_SECRET}, "settings": {"subdomain": "acme.evil.com"}})),
        400, "invalid_setting")
    listed = t.call("GET", "/accounts?status=invalid", API)
    expect(listed, 200)
    assert listed.json["accounts"] == [], listed.body


def test_deleting_accounts(t):
    done, jar = sign_in(t, uid="7001")
    expect(done, 200)
    expect(t.call("DELETE", "/account?id=acme:7001"), 401, "unauthorized")
    gone = t.call("DELETE", "/account?id=acme:7001", {"Origin": FRONT_END}, jar=jar)
    expect(gone, 204)
    assert gone.header("Access-Control-Allow-Origin") == FRONT_END
    expect(t.call("DELETE", "/account?id=acme:7001", API), 404, "not_found")
    expect(t.call("DELETE", "/account", API), 400, "bad_request")
    expect(sign_in(t, uid="7002")[0], 200)
    t.provider.configure(revoke_fails=True)
    unrevoked = t.call("DELETE", "/account?provider=acme&uid=7002", API)
    t.provider.configure(revoke_fails=False, uid="4242")
    expect(unrevoked, 200)
    assert unrevoked.json["revoked"] is False and unrevoked.json["deleted"] is True


def test_disconnect_from_the_page(t):
    done, jar = sign_in(t, uid="8001")
    t.provider.configure(uid="4242")
    expect(done, 200)
    page = t.call("GET", "/", HTML, jar=jar)
    assert b'href="/disconnect?id=acme%3A8001"' in page.body, "the page links Disconnect to its confirmation"
    confirm = t.call("GET", "/disconnect?id=acme%3A8001", HTML, jar=jar)
    expect(confirm, 200)
    assert b'action="/disconnect"' in confirm.body
    csrf = re.search(rb'name="csrf" value="([^"]+)"', confirm.body)
    assert csrf, "the confirmation has no csrf field"
    expect(t.call("GET", "/disconnect?id=acme%3A8001", JSON), 403, "forbidden")
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    expect(t.call("POST", "/disconnect", {**form, **JSON}, body="id=acme%3A8001&csrf=forged", jar=jar), 403, "forbidden")
    refused = t.call("POST", "/disconnect", {**form, **HTML}, body="id=acme%3A8001", jar=jar)
    expect(refused, 403)
    assert refused.header("Content-Type").startswith("text/html")
    body = urlencode({"id": "acme:8001", "csrf": csrf.group(1).decode()})
    expect(t.call("POST", "/disconnect", {**form, **HTML}, body=body, jar=jar), 303)
    expect(t.call("GET", "/account?id=acme:8001", API), 404, "not_found")


def test_webhook_outbox(t):
    done, _ = sign_in(t, uid="8101")
    t.provider.configure(uid="4242")
    expect(done, 200)
    expect(t.call("GET", "/webhooks", JSON), 401, "unauthorized")
    listing = t.call("GET", "/webhooks", API)
    expect(listing, 200)
    pending = [d for d in listing.json["pending"] if d["account_id"] == "acme:8101"]
    assert pending and pending[0]["type"] == "account.connected", listing.json
    replayed = t.call("POST", "/webhooks/replay?id=" + pending[0]["event_id"], API)
    expect(replayed, 200)
    assert replayed.json["replayed"] >= 1
    expect(t.call("POST", "/webhooks/replay?id=evt_unknown", API), 404, "not_found")
    expect(t.call("POST", "/webhooks/replay", API), 400, "bad_request")
    expect(t.call("POST", "/webhooks/replay?id=x", JSON), 401, "unauthorized")


def test_backup(t):
    expect(t.call("POST", "/backup", JSON), 401, "unauthorized")
    first = t.call("POST", "/backup", API)
    expect(first, 200)
    assert first.header("Cache-Control") == "no-store"
    assert first.json["file"].startswith("backups/accounts-") and first.json["bytes"] > 0, first.json
    second = t.call("POST", "/backup", API)
    expect(second, 200)
    assert second.json["file"] != first.json["file"], "each backup gets a file of its own"


def test_app_tokens(t):
    first = t.call("GET", "/app-token?provider=acme-app&scope=read+write", API)
    expect(first, 200)
    assert first.json["access_token"].startswith("ACME-ACCESS-SENTINEL-") and first.json["scope"] == "read write", first.json
    assert first.header("Cache-Control") == "no-store"
    again = t.call("GET", "/app-token?provider=acme-app&scope=write%20read", API)
    expect(again, 200)
    assert again.json["access_token"] == first.json["access_token"], "the same scope set is one cached token"
    expect(t.call("GET", "/app-token?provider=acme", API), 200)
    expect(t.call("GET", "/app-token?provider=acme-app"), 401, "unauthorized")
    expect(t.call("GET", "/app-token", API), 400, "bad_request")
    expect(t.call("GET", "/app-token?provider=acme-app&scope=a%22b", API), 400, "bad_request")
    expect(t.call("GET", "/app-token?provider=github", API), 400, "bad_request")
    expect(t.call("GET", "/app-token?provider=nope", API), 404, "unknown_provider")
    t.provider.configure(app_token_fails=True)
    limited = t.call("GET", "/app-token?provider=acme-app&scope=other", API)
    t.provider.configure(app_token_fails=False)
    expect(limited, 502, "upstream_error")
    assert limited.header("Retry-After") == "120", limited.headers
    providers = {p["name"]: p for p in t.call("GET", "/providers").json["providers"]}
    assert providers["acme-app"]["grants"] == ["client_credentials"], providers["acme-app"]
    expect(t.call("GET", "/authorize?provider=acme-app", JSON), 400, "bad_request")


def test_device_sign_in(t):
    start = {"Content-Type": "application/json", **API}
    started = t.call("POST", "/device/authorize", start, body=json.dumps({"provider": "acme", "end_user_id": "user-12"}))
    expect(started, 200)
    assert started.json["user_code"] and started.json["verification_uri"].startswith(t.provider.base), started.json
    followed = t.call("GET", "/flows/" + started.json["state"], API)
    expect(followed, 200)
    # The broker polls on its own at the provider's interval; the first look usually finds the flow still pending.
    assert followed.json["status"] in ("pending", "completed"), followed.json
    expect(t.call("POST", "/device/authorize", {"Content-Type": "application/json"}, body=json.dumps({"provider": "acme"})),
           401, "unauthorized")
    expect(t.call("POST", "/device/authorize", start, body=json.dumps({"provider": "nope"})), 404, "unknown_provider")
    expect(t.call("POST", "/device/authorize", start, body=json.dumps({"provider": "acme", "enduser_id": "x"})),
           400, "bad_request")
    expect(t.call("POST", "/device/authorize", start, body=json.dumps({"provider": "keyhdr"})), 400, "bad_request")


def test_connect_sessions(t):
    made_headers = {"Content-Type": "application/json", **API}
    body = {"end_user_id": "user-9", "origin": FRONT_END, "tags": {"plan": "pro"}, "allowed_providers": ["acme"]}
    made = t.call("POST", "/connect/sessions", made_headers, body=json.dumps(body))
    expect(made, 201)
    token = made.json["token"]
    assert made.json["connect_url"].endswith("/connect?session=" + token), made.json
    expect(t.call("POST", "/connect/sessions", {"Content-Type": "application/json"}, body=json.dumps(body)), 401, "unauthorized")
    expect(t.call("POST", "/connect/sessions", made_headers, body=json.dumps({**body, "origin": "http://evil.example"})),
           400, "bad_request")
    expect(t.call("POST", "/connect/sessions", made_headers, body=json.dumps({**body, "allowed_providers": ["nope"]})),
           404, "unknown_provider")
    expect(t.call("POST", "/connect/sessions", made_headers, body=json.dumps({**body, "account_id": "acme:nobody"})),
           404, "not_found")
    jar = Jar()
    page = t.call("GET", "/connect?session=" + token, HTML, jar=jar)
    expect(page, 200)
    assert b'data-provider="acme"' in page.body and "tb_connect" in jar.cookies
    expect(t.call("GET", "/connect?session=" + token, JSON), 410, "session_expired")
    gone = t.call("GET", "/connect?session=" + token, HTML)
    expect(gone, 410)
    assert gone.header("Content-Type").startswith("text/html")
    refused = t.call("GET", "/connect/start?provider=nope", HTML, jar=Jar())
    expect(refused, 410)
    start = t.call("GET", "/connect/start?provider=acme", HTML, jar=jar)
    expect(start, 302)
    t.provider.configure(uid="6161")
    end = follow(t, start.header("Location"), accept=HTML, jar=jar)
    expect(end, 200)
    assert b'data-status="connected"' in end.body and b'data-account="acme:6161"' in end.body, end.body[:600]
    # A reconnect session goes straight to the provider; another user coming back is 409 account_mismatch.
    again = t.call("POST", "/connect/sessions", made_headers, body=json.dumps({**body, "account_id": "acme:6161"}))
    renewing = Jar()
    straight = t.call("GET", "/connect?session=" + again.json["token"], HTML, jar=renewing)
    expect(straight, 302)
    t.provider.configure(uid="7171")
    expect(follow(t, straight.header("Location"), jar=renewing), 409, "account_mismatch")
    # A session for an API-key provider: the hosted form, a post that is not the form's, a refusal shown on the
    # form, a missing field, then the right key stored and the flow ended as a sign-in's.
    keyed = t.call("POST", "/connect/sessions", made_headers,
                   body=json.dumps({**body, "allowed_providers": ["keyhdr"], "end_user_id": "user-10"}))
    expect(keyed, 201)
    form_jar = Jar()
    expect(t.call("GET", "/connect?session=" + keyed.json["token"], HTML, jar=form_jar), 200)
    form = t.call("GET", "/connect/start?provider=keyhdr", HTML, jar=form_jar)
    expect(form, 200)
    assert "tb_connect_form" in form_jar.cookies and b'name="api_key" type="password"' in form.body, form.body[:600]
    state = re.search(rb'name="state" value="([^"]+)"', form.body).group(1).decode()
    csrf = re.search(rb'name="csrf" value="([^"]+)"', form.body).group(1).decode()

    def submit(key, jar=form_jar, token=csrf):
        return t.call("POST", "/connect/credentials", {"Content-Type": "application/x-www-form-urlencoded", **HTML},
                      body=urlencode({"state": state, "csrf": token, "api_key": key}), jar=jar)
    expect(submit("x", jar=Jar()), 403)
    expect(submit("x", token="forged"), 403)
    refused = submit("not-the-key")
    expect(refused, 422)
    assert b"HTTP 401" in refused.body and b"not-the-key" not in refused.body, refused.body[:600]
    expect(submit(""), 400)
    stored = submit(CREDENTIAL_SECRET)
    expect(stored, 200)
    assert b'data-status="connected"' in stored.body and b'data-account="keyhdr:u-4242"' in stored.body, stored.body[:600]
    assert CREDENTIAL_SECRET.encode() not in stored.body
    outcome = t.call("GET", "/flows/" + state, API)
    assert outcome.json["status"] == "completed" and outcome.json["account"] == "keyhdr:u-4242", outcome.body
    # Used: the cookie is gone, and the same post again is refused.
    expect(submit(CREDENTIAL_SECRET), 403)
    # A session for a provider with a per-account setting it did not fix: the hosted page asks for it, refuses a
    # forged post and an unfit value (naming the setting, never writing the value back), then starts the sign-in at
    # the host the fit value names.
    hosted = t.call("POST", "/connect/sessions", made_headers,
                    body=json.dumps({**body, "allowed_providers": ["acme-sub"], "end_user_id": "user-11"}))
    expect(hosted, 201)
    settings_jar = Jar()
    expect(t.call("GET", "/connect?session=" + hosted.json["token"], HTML, jar=settings_jar), 200)
    asked = t.call("GET", "/connect/start?provider=acme-sub", HTML, jar=settings_jar)
    expect(asked, 200)
    assert b'name="settings.subdomain"' in asked.body, asked.body[:600]
    settings_csrf = re.search(rb'name="csrf" value="([^"]+)"', asked.body).group(1).decode()

    def submit_settings(value, token=settings_csrf):
        return t.call("POST", "/connect/settings", {"Content-Type": "application/x-www-form-urlencoded", **HTML},
                      body=urlencode({"provider": "acme-sub", "csrf": token, "settings.subdomain": value}), jar=settings_jar)
    expect(submit_settings("acme", token="forged"), 403)
    unfit = submit_settings("acme.evil.com")
    expect(unfit, 400)
    assert b"subdomain" in unfit.body and b"evil" not in unfit.body, unfit.body[:600]
    # The refused post used the choice up; the form shown again carries a new one.
    started = submit_settings("acme", token=re.search(rb'name="csrf" value="([^"]+)"', unfit.body).group(1).decode())
    expect(started, 200)
    assert "tb_flow" in settings_jar.cookies
    assert started.header("Refresh").startswith("0; url=http://acme.localhost:"), started.header("Refresh")
    script = t.call("GET", "/connect.js")
    expect(script, 200)
    assert b"TokenBroker" in script.body
    listed = t.call("OPTIONS", "/providers", {"Origin": FRONT_END, "Access-Control-Request-Method": "GET"})
    expect(listed, 204)
    assert listed.header("Access-Control-Allow-Origin") == FRONT_END


TESTS = [test_documents_and_probes, test_transport_errors, test_browser_sign_in, test_authorize_errors,
         test_authorize_for_a_back_end, test_flow_outcomes, test_callback_errors, test_reading_an_account, test_listing_accounts,
         test_preflights, test_refreshing_an_account, test_forward_auth, test_proxy, test_mcp, test_credential_accounts, test_deleting_accounts, test_disconnect_from_the_page,
         test_webhook_outbox, test_backup, test_app_tokens, test_device_sign_in, test_connect_sessions]


class Context:
    def __init__(self, contract, provider):
        self.contract, self.provider = contract, provider

    def call(self, *args, **kwargs):
        return self.contract.call(*args, **kwargs)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build", "debug", "token-broker"))
    parser.add_argument("--fake-provider", default=os.path.join(ROOT, ".build", "debug", "fake-provider"))
    args = parser.parse_args()
    for binary in [args.binary, args.fake_provider]:
        if not os.access(binary, os.X_OK):
            sys.exit("api-contract: %s is missing; run swift build first" % binary)
    with open(os.path.join(ROOT, "docs", "openapi.yaml"), "rb") as f:
        document = yaml.safe_load(f)
    workdir = tempfile.mkdtemp(prefix="broker-contract-")
    provider = FakeProvider(args.fake_provider, workdir)
    credentials = FakeProvider(args.fake_provider, workdir, kind="credentials")
    broker = None
    passed, failed = 0, 0
    try:
        broker = Broker(args.binary, provider, workdir, credentials)
        t = Context(Contract(document, broker.base), provider)
        for test in TESTS:
            try:
                test(t)
                passed += 1
                print("PASS", test.__name__, flush=True)
            except Exception:
                failed += 1
                print("FAIL", test.__name__, flush=True)
                traceback.print_exc()
        missing = sorted(t.contract.operations() - t.contract.exercised)
        if missing:
            failed += 1
            print("FAIL every documented operation is exercised; never called: %s" % ", ".join("%s %s" % m for m in missing))
        else:
            passed += 1
            print("PASS every documented operation is exercised (%d operations, %d answers validated)"
                  % (len(t.contract.exercised), t.contract.validated))
    finally:
        if broker:
            broker.stop()
            with open(broker.log_path) as f:
                log = f.read()
            for secret in ["ACME-ACCESS-SENTINEL", "ACME-REFRESH-SENTINEL", "ACME-CODE-SENTINEL", CLIENT_SECRET, API_KEY,
                           CREDENTIAL_SECRET]:
                if secret in log:
                    failed += 1
                    print("FAIL the broker log contains a secret (%s)" % secret)
        provider.stop()
        credentials.stop()
        if failed == 0:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            print("broker data and log kept in %s" % workdir)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
