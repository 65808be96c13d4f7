"""CORS in a real browser: a page on another origin calls the broker with the browser's cookies.

Starts the real token-broker binary with BROKER_CORS_ORIGINS listing one front-end origin, a fake
Weibo that auto-approves, and two tiny front-end servers on other ports of 127.0.0.1: one listed,
one not. In headless Chromium (Selenium) it connects a Weibo account at the broker, then from each
front-end page runs fetch(..., {credentials: 'include'}) against GET /account, GET /accounts and
DELETE /account. The listed origin reads the token and deletes the account; the unlisted one is
refused by the browser itself (no answer reaches the page, the preflight fails, nothing is
deleted). Both front ends are same-site with the broker (ports of one host), as SECURITY.md
requires for the SameSite=Lax session cookie to go along.

Usage: python3 scripts/browser.d/test_cors.py [--binary PATH] [--out DIR]
Prints "N passed, N failed" last; exits 1 when anything failed.
"""

import argparse
import os
import sys
import threading
import traceback
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_connect_page import (API_KEY, CLIENT_SECRET, ROOT, UID, Broker, FakeProvider,  # noqa: E402
                               Session, accounts)

ACCOUNT_ID = "weibo:" + UID

# Runs in the front end's page: one credentialed fetch, reported as {status, body} or {error}.
FETCH_JS = """
const [url, method, done] = arguments;
fetch(url, {method: method, credentials: 'include', headers: {'Accept': 'application/json'}})
  .then(async r => done({status: r.status, body: await r.text()}))
  .catch(e => done({error: String(e)}));
"""


class FrontEnd:
    """A static page on 127.0.0.1 at a free port: an origin of its own for the browser.

    `body`, when given, is called for each request and returns the page's HTML (so it can name a broker started later)."""

    def __init__(self, title, body=None):
        static = ("<!doctype html><html><head><meta charset=utf-8><title>%s</title></head>"
                  "<body><h1>%s</h1></body></html>" % (title, title)).encode()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                page = body().encode() if body else static
                self.send_response(200 if self.path.split("?")[0] == "/" else 404)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.origin = "http://127.0.0.1:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def fetch_from(session, front_end, url, method="GET"):
    """Opens the front end's page and fetches `url` from it, with credentials."""
    driver = session.driver
    if not driver.current_url.startswith(front_end.origin):
        driver.get(front_end.origin + "/")
    driver.set_script_timeout(15)
    return driver.execute_async_script(FETCH_JS, url, method)


def connect(ctx):
    """Connects the Weibo account as a person would, so the browser holds the broker's session cookie."""
    s, broker = ctx["session"], ctx["broker"]
    s.driver.get(broker.base + "/authorize?provider=weibo")
    s.wait(lambda d: d.current_url == broker.base + "/" and accounts(d), "the account listed after connecting")
    assert any(c["name"] == "tb_session" for c in s.driver.get_cookies()), "no session cookie"


def stored(ctx):
    request = urllib.request.Request(ctx["broker"].base + "/account?id=" + ACCOUNT_ID,
                                     headers={"Authorization": "Bearer " + API_KEY})
    try:
        with urllib.request.urlopen(request, timeout=5):
            return True
    except urllib.error.HTTPError as error:
        if error.code == 404:
            return False
        raise


def test_a_listed_origin_reads_and_deletes_with_the_browsers_cookies(ctx):
    s, broker, listed, fake = ctx["session"], ctx["broker"], ctx["listed"], ctx["fake"]
    connect(ctx)
    read = fetch_from(s, listed, broker.base + "/account?id=" + ACCOUNT_ID)
    assert read.get("status") == 200, read
    # The page read the answer at all only because the broker allowed its origin, with credentials.
    assert '"access_token":"2.00WEIBO-TOKEN-SENTINEL' in read["body"], read
    mine = fetch_from(s, listed, broker.base + "/accounts")
    assert mine.get("status") == 200 and ACCOUNT_ID in mine["body"] and "SENTINEL" not in mine["body"], mine
    # DELETE is not a simple request: the browser asks first (OPTIONS), and goes on only when allowed.
    revokes = fake.count("revoke")
    deleted = fetch_from(s, listed, broker.base + "/account?id=" + ACCOUNT_ID, "DELETE")
    assert deleted.get("status") == 204, deleted
    assert not stored(ctx), "the listed origin's DELETE did not delete"
    assert fake.count("revoke") == revokes + 1
    s.shot("cors-listed")


def test_an_unlisted_origin_is_refused_by_the_browser(ctx):
    s, broker, unlisted = ctx["session"], ctx["broker"], ctx["unlisted"]
    connect(ctx)
    read = fetch_from(s, unlisted, broker.base + "/account?id=" + ACCOUNT_ID)
    assert "error" in read and "Failed to fetch" in read["error"], "the unlisted origin read an answer: %s" % read
    listing = fetch_from(s, unlisted, broker.base + "/accounts")
    assert "error" in listing, listing
    deleted = fetch_from(s, unlisted, broker.base + "/account?id=" + ACCOUNT_ID, "DELETE")
    assert "error" in deleted, deleted
    assert stored(ctx), "the unlisted origin's DELETE went through"
    problems = " ".join(s.console_problems())
    assert "blocked by CORS policy" in problems, "Chromium did not report the CORS refusals: %s" % problems
    s.shot("cors-unlisted")


TESTS = [test_a_listed_origin_reads_and_deletes_with_the_browsers_cookies, test_an_unlisted_origin_is_refused_by_the_browser]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build", "debug", "token-broker"))
    parser.add_argument("--fake-provider", default=os.path.join(ROOT, ".build", "debug", "fake-provider"))
    parser.add_argument("--out", default=os.path.join(ROOT, "test-output", "browser", "cors"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for binary in [args.binary, args.fake_provider]:
        if not os.access(binary, os.X_OK):
            sys.exit("browser test: %s is missing; run swift build first" % binary)
    fake = FakeProvider(args.fake_provider, args.out)
    listed, unlisted = FrontEnd("Listed front end"), FrontEnd("Unlisted front end")
    broker = Broker(args.binary, fake, args.out, extra_env={"BROKER_CORS_ORIGINS": listed.origin})
    passed, failed = 0, 0
    try:
        for test in TESTS:
            # A fresh browser per test: no cookie, cached preflight or console entry carries over.
            session = Session(args.out)
            try:
                test({"session": session, "broker": broker, "fake": fake, "listed": listed, "unlisted": unlisted})
                passed += 1
                print("PASS", test.__name__, flush=True)
            except Exception:
                failed += 1
                print("FAIL", test.__name__, flush=True)
                traceback.print_exc()
            finally:
                session.quit()
    finally:
        broker.stop()
        fake.stop()
        listed.stop()
        unlisted.stop()
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
