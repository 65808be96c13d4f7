"""Connect sessions in a real browser: a front end on one origin, the broker on another, a popup between them.

Starts the real token-broker binary (BROKER_CORS_ORIGINS and BROKER_RETURN_TO_ALLOWLIST listing one front-end
origin), a fake Weibo that shows its Approve/Deny page, and two front-end servers on other ports of 127.0.0.1: the
listed one and a third origin that is not listed. The front-end page loads <broker>/connect.js; a click on it (a
Selenium click, so the browser lets the popup open) calls TokenBroker.connect with a session token the test made
with the API key. In headless Chromium (Selenium) the test then does what the person would in the popup (choose
the provider, Approve or Deny, or close the window) and reads the Promise's outcome off the front-end page:

  success resolves with the account and the state, which GET /flows/{state} confirms; Deny rejects with
  access_denied; closing the popup rejects with closed; a used session token, and one past its expiry, reject with
  expired, answer 410 and start no flow; a page on the third origin that opens the same URL receives no message
  while the listed origin does; a reconnect session goes straight to the provider and keeps the account id; the
  browser that finished a flow a back end started (a session, POST /authorize) gets 401 on GET /account; no console
  errors on the front-end page, the hosted page and the end page. Screenshots of every step, the hosted page at 1280
  and 390 pixels among them, go to test-output/browser/connect-sessions/; with --docs DIR the two of the hosted
  page are also copied to DIR (`scripts/browser-test --docs docs` refreshes docs/connect-session-*.png), so a
  test run leaves the tracked pictures alone.

The expiry case uses a session made at the start with the shortest lifetime (60 s) and opened after the other
cases, once its expires_at has passed (the broker runs on the real clock).

Usage: python3 scripts/browser.d/test_connect_sessions.py [--binary PATH] [--fake-provider PATH] [--out DIR] [--docs DIR]
Prints "N passed, N failed" last; exits 1 when anything failed.
"""

import argparse
import datetime
import json
import os
import shutil
import sys
import time
import traceback
import urllib.error
import urllib.request

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_connect_page import (API_KEY, PHONE, ROOT, SECRETS, UID, WIDE, Broker, FakeProvider,  # noqa: E402
                               Session, check_layout)
from test_cors import FrontEnd  # noqa: E402

ACCOUNT_ID = "weibo:" + UID
END_USER = "user-7"
TAGS = {"plan": "pro"}

# The front end's page: connect.js from the broker, a button that calls TokenBroker.connect with the token the test
# puts in window.__token, and one that opens window.__url in a popup by hand. Every message event the page gets is
# kept in window.__messages; the Promise's outcome goes to window.__result and onto the page.
APP_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>%(title)s</title><link rel="icon" href="data:,">
<script src="%(broker)s/connect.js"></script></head>
<body><h1>%(title)s</h1>
<button id="connect" type="button">Connect an account</button>
<button id="open" type="button">Open the connect URL</button>
<p id="outcome" role="status"></p>
<script>
window.__messages = [];
window.__result = null;
window.addEventListener("message", function (event) {
  window.__messages.push({ origin: event.origin, data: event.data });
});
document.getElementById("connect").addEventListener("click", function () {
  window.__result = null;
  TokenBroker.connect({ broker: "%(broker)s", sessionToken: window.__token }).then(function (value) {
    window.__result = { resolved: value };
    document.getElementById("outcome").textContent = "Connected " + value.account;
  }, function (reason) {
    window.__result = { rejected: reason };
    document.getElementById("outcome").textContent = "Not connected: " + reason.error;
  });
});
document.getElementById("open").addEventListener("click", function () {
  window.__popup = window.open(window.__url, "connect", "popup=yes,width=520,height=720");
});
</script>
</body></html>
"""


def api_call(broker, method, path, body=None, accept="application/json", key=True):
    """One request to the broker; (status, headers, text). `body` goes as JSON."""
    headers = {"Accept": accept}
    if key:
        headers["Authorization"] = "Bearer " + API_KEY
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(broker.base + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=5) as reply:
            return reply.status, reply.headers, reply.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read().decode()


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args):
        return None


def open_session_url(broker, token):
    """GET /connect?session=TOKEN as a browser navigation asks for it, without following a redirect."""
    request = urllib.request.Request(broker.base + "/connect?session=" + token, headers={"Accept": "text/html"})
    try:
        with urllib.request.build_opener(NoRedirect).open(request, timeout=5) as reply:
            return reply.status, reply.headers, reply.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read().decode()


def make_session(ctx, **fields):
    """POST /connect/sessions with the API key for the listed origin; the answer."""
    body = dict({"end_user_id": END_USER, "origin": ctx["listed"].origin, "tags": TAGS}, **fields)
    status, _, text = api_call(ctx["broker"], "POST", "/connect/sessions", body)
    assert status == 201, "POST /connect/sessions: %s %s" % (status, text)
    made = json.loads(text)
    assert made["connect_url"] == ctx["broker"].base + "/connect?session=" + made["token"], made
    return made


def flow(ctx, state):
    return ctx["broker"].api("/flows/" + state)


def problems_except(s, allowed):
    """Console problems since the last call, but for `allowed` substrings (an error page's own 4xx status)."""
    return [p for p in s.console_problems() if not any(a in p for a in allowed)]


def assert_clean(s, step, allowed=()):
    problems = problems_except(s, allowed)
    assert not problems, "%s: browser console shows %s" % (step, problems)
    source = s.driver.page_source
    for secret in SECRETS:
        assert secret not in source, "%s: the page shows a secret (%s)" % (step, secret)


def open_app(s, app, **values):
    """The front end's page, with `values` (`token`, `url`) set on window as __token, __url."""
    s.driver.get(app.origin + "/")
    s.wait(lambda d: d.execute_script("return typeof TokenBroker === 'object' && Array.isArray(window.__messages)"),
           "the front-end page with connect.js loaded")
    for name, value in values.items():
        s.driver.execute_script("window['__' + arguments[0]] = arguments[1]", name, value)
    return s.driver.current_window_handle


def click_for_popup(s, button_id):
    """Clicks the button and switches to the popup it opens; returns the opener's and the popup's handles."""
    d = s.driver
    opener = d.current_window_handle
    before = set(d.window_handles)
    d.find_element(By.ID, button_id).click()
    s.wait(lambda d: len(set(d.window_handles) - before) == 1, "the popup to open")
    popup = (set(d.window_handles) - before).pop()
    d.switch_to.window(popup)
    return opener, popup


def on_picker(s):
    s.wait(lambda d: d.find_elements(By.CSS_SELECTOR, "li.provider") or d.find_elements(By.ID, "no-providers"),
           "the hosted provider choice")


def on_consent(s, fake):
    s.wait(lambda d: d.current_url.startswith(fake.base) and d.find_elements(By.XPATH, "//button[.='Approve']"),
           "the provider's sign-in page")


def decide(s, fake, decision):
    """Approve or Deny on the fake provider's page."""
    on_consent(s, fake)
    assert "not a real account" in s.driver.find_element(By.TAG_NAME, "h1").text
    s.driver.find_element(By.XPATH, "//button[.='%s']" % decision).click()


def back_to_opener(s, opener, popup, what):
    """Waits for the popup to be gone (it closes itself, or the person closed it), then switches to the opener."""
    s.wait(lambda d: popup not in d.window_handles, what)
    s.driver.switch_to.window(opener)


def promise_outcome(s):
    s.wait(lambda d: d.execute_script("return window.__result"), "the Promise to settle")
    return s.driver.execute_script("return window.__result")


def run_popup(ctx, s, token, decision="Approve", choose=True, shot=None):
    """From the listed front end: the click, the popup's hosted page (when `choose`), the provider's page, and the
    Promise's outcome once the popup closed itself."""
    fake = ctx["fake"]
    open_app(s, ctx["listed"], token=token)
    assert_clean(s, "the front-end page")
    opener, popup = click_for_popup(s, "connect")
    if choose:
        on_picker(s)
        assert s.driver.current_url.startswith(ctx["broker"].base + "/connect?session=")
        assert [li.get_attribute("data-provider") for li in s.driver.find_elements(By.CSS_SELECTOR, "li.provider")] == ["weibo"]
        assert_clean(s, "the hosted page")
        if shot:
            s.shot(shot)
        s.driver.find_element(By.LINK_TEXT, "Connect Weibo").click()
    decide(s, fake, decision)
    back_to_opener(s, opener, popup, "the end page to close the popup")
    return promise_outcome(s)


# The cases, in the order of the "Done when".

def test_success_resolves_with_the_account_and_the_state(ctx):
    s, fake = ctx["session"], ctx["fake"]
    tokens = fake.count("token")
    made = make_session(ctx, allowed_providers=["weibo"])
    outcome = run_popup(ctx, s, made["token"], shot="01-hosted-page")
    assert "resolved" in outcome, "the Promise rejected: %s" % outcome
    value = outcome["resolved"]
    assert value["account"] == ACCOUNT_ID and value["state"], value
    assert s.driver.find_element(By.ID, "outcome").text == "Connected " + ACCOUNT_ID
    assert fake.count("token") == tokens + 1
    # The back end confirms with the state: completed, that account, the session's end user and tags.
    outcome = flow(ctx, value["state"])
    assert outcome["status"] == "completed" and outcome["account"] == ACCOUNT_ID, outcome
    assert outcome["end_user_id"] == END_USER and outcome["tags"] == TAGS, outcome
    # No console error on the front-end page, nor on the end page (Chromium's log holds the popup's entries too).
    assert_clean(s, "after the popup closed")
    s.shot("02-resolved")


def test_the_providers_denial_rejects_with_access_denied(ctx):
    s, broker = ctx["session"], ctx["broker"]
    made = make_session(ctx)
    outcome = run_popup(ctx, s, made["token"], decision="Deny")
    assert "rejected" in outcome, "the Promise resolved: %s" % outcome
    reason = outcome["rejected"]
    assert reason["error"] == "access_denied" and reason.get("state"), reason
    assert s.driver.find_element(By.ID, "outcome").text == "Not connected: access_denied"
    failed = flow(ctx, reason["state"])
    assert failed["status"] == "failed" and failed["error"] == "access_denied" and failed["account"] is None, failed
    # The end page is a 403 document, which Chromium logs as a failed load; nothing else may show.
    assert_clean(s, "after the denial", allowed=[broker.base + "/callback?", "status of 403"])
    s.shot("03-denied")


def test_closing_the_popup_rejects_with_closed(ctx):
    s, fake = ctx["session"], ctx["fake"]
    made = make_session(ctx)
    authorizations = fake.count("authorize")
    open_app(s, ctx["listed"], token=made["token"])
    opener, popup = click_for_popup(s, "connect")
    on_picker(s)
    s.driver.close()  # the person closes the popup before choosing
    back_to_opener(s, opener, popup, "the popup to be gone")
    outcome = promise_outcome(s)
    assert outcome == {"rejected": {"error": "closed", "message": "The window was closed."}}, outcome
    assert s.driver.find_element(By.ID, "outcome").text == "Not connected: closed"
    assert fake.count("authorize") == authorizations, "closing before choosing reached the provider"
    assert_clean(s, "after closing the popup")


def expect_expired(ctx, s, token, step):
    """TokenBroker.connect with a token that cannot run: rejects with expired, 410, and the provider never asked."""
    fake = ctx["fake"]
    authorizations = fake.count("authorize")
    open_app(s, ctx["listed"], token=token)
    opener = s.driver.current_window_handle
    # The popup shows the gone page, which posts and closes at once: often before a new window handle is seen.
    s.driver.find_element(By.ID, "connect").click()
    outcome = promise_outcome(s)
    s.wait(lambda d: d.window_handles == [opener], "the popup closed (%s)" % step)
    assert outcome.get("rejected", {}).get("error") == "expired", "%s: %s" % (step, outcome)
    assert "state" not in outcome["rejected"], "%s: a flow was started: %s" % (step, outcome)
    assert s.driver.find_element(By.ID, "outcome").text == "Not connected: expired"
    # What a person who opens the URL itself sees: 410, no redirect, a page that says so.
    status, headers, body = open_session_url(ctx["broker"], token)
    assert status == 410 and headers["Location"] is None, "%s: %s" % (step, status)
    assert 'data-error="expired"' in body and "The account was not connected" in body
    assert fake.count("authorize") == authorizations, "%s: the provider was asked" % step
    # The 410 page is a failed load in Chromium's log; nothing else may show.
    assert_clean(s, step, allowed=["/connect?session=", "status of 410"])


def test_a_used_session_token_rejects_with_expired_and_starts_no_flow(ctx):
    s = ctx["session"]
    made = make_session(ctx)
    # The first use: the person opens the popup and closes it without choosing.
    open_app(s, ctx["listed"], token=made["token"])
    opener, popup = click_for_popup(s, "connect")
    on_picker(s)
    s.driver.close()
    back_to_opener(s, opener, popup, "the popup to be gone")
    assert promise_outcome(s)["rejected"]["error"] == "closed"
    expect_expired(ctx, s, made["token"], "second use")
    # A token that completed a connection is used up too.
    done = make_session(ctx)
    assert "resolved" in run_popup(ctx, s, done["token"])
    expect_expired(ctx, s, done["token"], "use after completing")


def record_popup_messages(ctx, s, app, connect_url):
    """On `app`'s page, opens `connect_url` in a popup by hand (no connect.js), signs in there, and returns every
    message event the page got once the popup closed itself and a message the page posts to itself arrived."""
    open_app(s, app, url=connect_url)
    opener, popup = click_for_popup(s, "open")
    on_picker(s)
    s.driver.find_element(By.LINK_TEXT, "Connect Weibo").click()
    decide(s, ctx["fake"], "Approve")
    back_to_opener(s, opener, popup, "the end page to close the popup")
    s.wait(lambda d: d.execute_script("return window.__popup && window.__popup.closed"), "the opener to see the popup closed")
    # The end page posts before it closes; a message the page sends itself after that lines up behind it. A second
    # of grace on top covers a message delivered from another renderer process.
    s.driver.execute_script("window.postMessage('sentinel', window.location.origin)")
    s.wait(lambda d: any(m["data"] == "sentinel" for m in d.execute_script("return window.__messages")), "the sentinel")
    time.sleep(1)
    return [m for m in s.driver.execute_script("return window.__messages") if m["data"] != "sentinel"]


def test_only_the_sessions_origin_gets_the_message(ctx):
    s, broker = ctx["session"], ctx["broker"]
    # A page on a third origin (not in BROKER_CORS_ORIGINS) opens a session's connect URL: nothing reaches it,
    # although the connection itself went through.
    elsewhere = make_session(ctx)
    got = record_popup_messages(ctx, s, ctx["unlisted"], elsewhere["connect_url"])
    assert got == [], "the third origin received %s" % got
    # The same by hand on the session's own origin: exactly one message, from the broker, with the outcome.
    own = make_session(ctx)
    got = record_popup_messages(ctx, s, ctx["listed"], own["connect_url"])
    assert len(got) == 1, got
    message = got[0]
    assert message["origin"] == broker.base, message
    data = message["data"]
    assert data["type"] == "token-broker:connect" and data["status"] == "connected" and data["account"] == ACCOUNT_ID, data
    assert flow(ctx, data["state"])["status"] == "completed"
    assert_clean(s, "the listed origin's page")


def test_a_reconnect_session_goes_straight_to_the_provider_and_keeps_the_account(ctx):
    s, fake = ctx["session"], ctx["fake"]
    first = run_popup(ctx, s, make_session(ctx)["token"])
    assert first.get("resolved", {}).get("account") == ACCOUNT_ID, first
    renew = make_session(ctx, account_id=ACCOUNT_ID)
    open_app(s, ctx["listed"], token=renew["token"])
    opener, popup = click_for_popup(s, "connect")
    # No provider choice: the popup's first page is the provider's.
    on_consent(s, fake)
    s.shot("04-reconnect-provider")
    decide(s, fake, "Approve")
    back_to_opener(s, opener, popup, "the end page to close the popup")
    outcome = promise_outcome(s)
    assert outcome.get("resolved", {}).get("account") == ACCOUNT_ID, outcome
    assert flow(ctx, outcome["resolved"]["state"])["account"] == ACCOUNT_ID
    assert [a["id"] for a in ctx["broker"].api("/accounts")["accounts"]] == [ACCOUNT_ID]
    assert_clean(s, "after the reconnect")


FETCH_JS = """
const [url, done] = arguments;
fetch(url, {credentials: 'include', headers: {'Accept': 'application/json'}})
  .then(async r => done({status: r.status, body: await r.text()}))
  .catch(e => done({error: String(e)}));
"""


def read_token_from_front_end(s, broker):
    """GET /account from the listed front end's page with the browser's cookies; the answer it can read (CORS)."""
    s.driver.set_script_timeout(15)
    return s.driver.execute_async_script(FETCH_JS, broker.base + "/account?id=" + ACCOUNT_ID)


def test_the_browser_that_finished_a_back_end_flow_cannot_read_the_token(ctx):
    s, broker, fake, listed = ctx["session"], ctx["broker"], ctx["fake"], ctx["listed"]
    # A connect session, run in the popup.
    outcome = run_popup(ctx, s, make_session(ctx)["token"])
    assert outcome.get("resolved", {}).get("account") == ACCOUNT_ID, outcome
    read = read_token_from_front_end(s, broker)
    assert read.get("status") == 401 and "SENTINEL" not in read.get("body", ""), read
    # POST /authorize by the back end; this browser signs in and is sent on to the front end's return_to.
    status, _, text = api_call(broker, "POST", "/authorize", {"provider": "weibo", "return_to": listed.origin + "/?back=1"})
    assert status == 200, text
    started = json.loads(text)
    s.driver.get(started["authorize_url"])
    decide(s, fake, "Approve")
    s.wait(lambda d: d.current_url.startswith(listed.origin + "/?back=1&"), "the front end's return_to after approving")
    assert "state=" + started["state"] in s.driver.current_url and "account=" in s.driver.current_url
    assert flow(ctx, started["state"])["status"] == "completed"
    read = read_token_from_front_end(s, broker)
    assert read.get("status") == 401 and "SENTINEL" not in read.get("body", ""), read
    assert_clean(s, "after return_to", allowed=["/account?id=", "status of 401"])
    # Navigating to it directly: the same.
    s.driver.get(broker.base + "/account?id=" + ACCOUNT_ID)
    assert '"error":"unauthorized"' in s.driver.page_source.replace(" ", ""), s.driver.page_source
    assert "SENTINEL" not in s.driver.page_source
    # Only the API key reads it.
    assert broker.api("/account?id=" + ACCOUNT_ID)["access_token"].startswith("2.00WEIBO-TOKEN-SENTINEL")


def test_the_end_page_without_an_opener_is_clean(ctx):
    """The connect URL opened in a tab of its own: the hosted page, the provider, then the end page, which stays
    (nothing to post to, no return_to) and says the account is connected, without console errors."""
    s, fake = ctx["session"], ctx["fake"]
    made = make_session(ctx)
    s.driver.get(made["connect_url"])
    on_picker(s)
    assert_clean(s, "the hosted page in a tab")
    s.driver.find_element(By.LINK_TEXT, "Connect Weibo").click()
    decide(s, fake, "Approve")
    s.wait(lambda d: d.current_url.startswith(ctx["broker"].base + "/callback?") and d.find_elements(By.TAG_NAME, "h1"),
           "the end page")
    assert s.driver.find_element(By.TAG_NAME, "h1").text == "Account connected"
    assert "Connected your Weibo account." in s.driver.find_element(By.CSS_SELECTOR, "[role=status]").text
    assert s.driver.find_element(By.ID, "tb-result").get_attribute("data-account") == ACCOUNT_ID
    assert_clean(s, "the end page")
    check_layout(s, s.driver, "the end page")
    s.shot("05-end-page")


def test_the_hosted_page_at_1280_and_390_pixels(ctx):
    s = ctx["session"]
    for (width, height), name in [(WIDE, "connect-session-1280"), (PHONE, "connect-session-390")]:
        s.viewport(width, height)
        s.driver.get(make_session(ctx)["connect_url"])
        on_picker(s)
        assert s.driver.find_element(By.TAG_NAME, "h1").text == "Connect an account"
        check_layout(s, s.driver, "the hosted page at %d px" % width)
        assert_clean(s, "the hosted page at %d px" % width)
        s.shot(name)
        if ctx["docs"]:
            shutil.copy(os.path.join(s.out, name + ".png"), os.path.join(ctx["docs"], name + ".png"))
    s.viewport(*WIDE)


def test_a_session_past_its_expiry_rejects_with_expired_and_starts_no_flow(ctx):
    """The session made at the start with expires_in 60, never opened, used once its expires_at has passed."""
    s, made = ctx["session"], ctx["short"]
    expires = datetime.datetime.fromisoformat(made["expires_at"].replace("Z", "+00:00")).timestamp()
    left = expires + 1 - time.time()
    if left > 0:
        print("waiting %.0f s for the 60 s session to expire" % left, flush=True)
        time.sleep(left)
    expect_expired(ctx, s, made["token"], "past its expiry")


TESTS = [test_success_resolves_with_the_account_and_the_state, test_the_providers_denial_rejects_with_access_denied,
         test_closing_the_popup_rejects_with_closed, test_a_used_session_token_rejects_with_expired_and_starts_no_flow,
         test_only_the_sessions_origin_gets_the_message,
         test_a_reconnect_session_goes_straight_to_the_provider_and_keeps_the_account,
         test_the_browser_that_finished_a_back_end_flow_cannot_read_the_token, test_the_end_page_without_an_opener_is_clean,
         test_the_hosted_page_at_1280_and_390_pixels, test_a_session_past_its_expiry_rejects_with_expired_and_starts_no_flow]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build", "debug", "token-broker"))
    parser.add_argument("--fake-provider", default=os.path.join(ROOT, ".build", "debug", "fake-provider"))
    parser.add_argument("--out", default=os.path.join(ROOT, "test-output", "browser", "connect-sessions"))
    parser.add_argument("--docs", default=os.environ.get("BROWSER_TEST_DOCS") or None,
                        help="also copy the hosted page's screenshots here (default $BROWSER_TEST_DOCS, else nowhere)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for stale in os.listdir(args.out):
        if stale.endswith(".png"):
            os.remove(os.path.join(args.out, stale))
    for binary in [args.binary, args.fake_provider]:
        if not os.access(binary, os.X_OK):
            sys.exit("browser test: %s is missing; run swift build first" % binary)
    fake = FakeProvider(args.fake_provider, args.out, consent="page")
    ctx = {"fake": fake, "docs": args.docs}
    listed = FrontEnd("Listed front end", body=lambda: APP_PAGE % {"title": "Listed front end", "broker": ctx["broker"].base})
    unlisted = FrontEnd("Third origin", body=lambda: APP_PAGE % {"title": "Third origin", "broker": ctx["broker"].base})
    ctx.update(listed=listed, unlisted=unlisted)
    passed, failed = 0, 0
    broker = None
    try:
        broker = Broker(args.binary, fake, args.out, extra_env={
            "BROKER_CORS_ORIGINS": listed.origin, "BROKER_RETURN_TO_ALLOWLIST": listed.origin})
        ctx["broker"] = broker
        # Made first, so that it has run out by the time the last case opens it.
        ctx["short"] = make_session(ctx, expires_in=60)
        for test in TESTS:
            # A fresh browser per case: no cookie, window or console entry carries over.
            session = Session(args.out)
            try:
                test(dict(ctx, session=session))
                passed += 1
                print("PASS", test.__name__, flush=True)
            except Exception:
                failed += 1
                print("FAIL", test.__name__, flush=True)
                traceback.print_exc()
                try:
                    print("browser console:", session.console_problems())
                    session.shot("failed-" + test.__name__)
                except Exception:
                    pass
            finally:
                session.quit()
    finally:
        if broker:
            broker.stop()
        fake.stop()
        listed.stop()
        unlisted.stop()
    if broker:
        with open(broker.log_path) as f:
            log = f.read()
        for secret in SECRETS:
            if secret in log:
                failed += 1
                print("FAIL broker.log contains a secret (%s)" % secret)
    print("screenshots in %s" % args.out)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
