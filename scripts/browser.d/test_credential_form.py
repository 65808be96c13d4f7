"""The hosted connect page's form for API keys and basic auth, in a real browser.

Starts the real token-broker binary with BROKER_CORS_ORIGINS listing one front-end origin, and the fake-provider
binary as an API that takes entered credentials (`--kind credentials`: `keyhdr` wants `Authorization: Token <key>`,
`basicp` HTTP Basic `ada:<key>`). The front-end page loads <broker>/connect.js and calls TokenBroker.connect with a
session token the test made with the API key; in headless Chromium (Selenium) the test then does what the person would
in the popup: choose the provider, fill in the form the broker generated from the provider's fields, submit it.

  an API key, a basic pair and a bearer token each resolve the Promise with the account, which GET /flows/{state} confirms as
  completed; a key the provider refuses shows the refusal with the provider's status on the form, leaves the key out
  of the page and keeps the popup open, and the right key then connects; the secret inputs are password inputs with
  autocomplete off; no console error or CSP report on any page, and no entered value in any page or the broker's log.
  A provider with a per-account setting (`subdom`, at http://{subdomain}.localhost:PORT) asks for it on the form: `acme`
  connects and its verification reaches acme.localhost:PORT on the fake (its /_fake/calls); `acme.evil.com` is refused
  on the form naming the setting, the value is not in the page, and the fake saw no call.

Screenshots of the form and the refusal go to test-output/browser/credential-form/ as the other browser tests do.

Usage: python3 scripts/browser.d/test_credential_form.py [--binary PATH] [--fake-provider PATH] [--out DIR]
Prints "N passed, N failed" last; exits 1 when anything failed.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.request

from selenium.webdriver.common.by import By

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_connect_page import API_KEY, ROOT, Session, free_port  # noqa: E402
from test_connect_sessions import (APP_PAGE, api_call, assert_clean, back_to_opener, click_for_popup,  # noqa: E402
                                   on_picker, open_app, promise_outcome)
from test_cors import FrontEnd  # noqa: E402

KEY = "CRED-FORM-SENTINEL-KEY-0123456789"
WRONG = "WRONG-KEY-SENTINEL-9876"
SECRETS = [KEY, WRONG, API_KEY]
END_USER = "user-form"


class CredentialFake:
    """fake-provider --kind credentials: its key is KEY, its basic pair ada:KEY; it writes the providers file."""

    def __init__(self, binary, out):
        self.root = tempfile.mkdtemp(prefix="fake-credentials-")
        self.providers_file = os.path.join(self.root, "providers.json")
        self.log = open(os.path.join(out, "fake-provider.log"), "w")
        self.process = subprocess.Popen(
            [binary, "--kind", "credentials", "--client-secret", KEY, "--providers-file", self.providers_file],
            stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.process.stdout.readline().strip()
        if not line.isdigit():
            raise RuntimeError("fake-provider did not start: %r" % line)
        self.port = int(line)

    def calls(self):
        """What reached the fake, in order: [{"host", "path", "accepted"}]."""
        with urllib.request.urlopen("http://127.0.0.1:%d/_fake/calls" % self.port, timeout=5) as reply:
            return json.loads(reply.read())["calls"]

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()
        shutil.rmtree(self.root, ignore_errors=True)


class CredentialBroker:
    """The real token-broker on a free port with the fake's providers file."""

    def __init__(self, binary, fake, out, origin):
        self.root = tempfile.mkdtemp(prefix="broker-credential-form-")
        self.port = free_port()
        self.base = "http://127.0.0.1:%d" % self.port
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self.root,
               "BROKER_HOST": "127.0.0.1", "BROKER_PORT": str(self.port), "BROKER_PUBLIC_URL": self.base,
               "BROKER_DATA_DIR": os.path.join(self.root, "data"), "BROKER_PROVIDERS_FILE": fake.providers_file,
               "BROKER_API_KEY": API_KEY, "BROKER_CORS_ORIGINS": origin, "BROKER_UPSTREAM_TIMEOUT": "5"}
        self.log_path = os.path.join(out, "broker.log")
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen([binary], env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError("token-broker exited with %s; see %s" % (self.process.returncode, self.log_path))
            try:
                if urllib.request.urlopen(self.base + "/healthz", timeout=1).status == 200:
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("token-broker did not answer /healthz")

    def api(self, path):
        request = urllib.request.Request(self.base + path, headers={"Authorization": "Bearer " + API_KEY})
        with urllib.request.urlopen(request, timeout=5) as reply:
            return json.loads(reply.read())

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()
        shutil.rmtree(self.root, ignore_errors=True)


def make_session(ctx, provider):
    body = {"end_user_id": END_USER, "origin": ctx["listed"].origin, "allowed_providers": [provider]}
    status, _, text = api_call(ctx["broker"], "POST", "/connect/sessions", body)
    assert status == 201, "POST /connect/sessions: %s %s" % (status, text)
    return json.loads(text)["token"]


def clean(s, step, allowed=()):
    assert_clean(s, step, allowed)
    for secret in SECRETS:
        assert secret not in s.driver.page_source, "%s: the page shows a secret" % step


def open_form(ctx, s, provider):
    """From the listed front end: the click, the popup's hosted page, the provider's form; (opener, popup)."""
    open_app(s, ctx["listed"], token=make_session(ctx, provider))
    opener, popup = click_for_popup(s, "connect")
    on_picker(s)
    assert [li.get_attribute("data-provider") for li in s.driver.find_elements(By.CSS_SELECTOR, "li.provider")] == [provider]
    clean(s, "the hosted page")
    s.driver.find_element(By.LINK_TEXT, "Connect " + provider).click()
    s.wait(lambda d: d.find_elements(By.CSS_SELECTOR, "form.credentials"), "the credential form")
    form = s.driver.find_element(By.CSS_SELECTOR, "form.credentials")
    assert form.get_attribute("autocomplete") == "off" and form.get_attribute("method") == "post"
    assert form.get_attribute("action") == ctx["broker"].base + "/connect/credentials", form.get_attribute("action")
    clean(s, "the form")
    return opener, popup


def fill(s, values):
    for name, value in values:
        field = s.driver.find_element(By.NAME, name)
        field.clear()
        field.send_keys(value)
    s.driver.find_element(By.CSS_SELECTOR, "form.credentials button[type=submit]").click()


def expect_connected(ctx, s, opener, popup, account):
    back_to_opener(s, opener, popup, "the end page to close the popup")
    outcome = promise_outcome(s)
    assert "resolved" in outcome, "the Promise rejected: %s" % outcome
    assert outcome["resolved"]["account"] == account, outcome
    flow = ctx["broker"].api("/flows/" + outcome["resolved"]["state"])
    assert flow["status"] == "completed" and flow["account"] == account and flow["end_user_id"] == END_USER, flow
    clean(s, "after the popup closed")


def test_an_api_key_connects_through_the_form(ctx):
    s = ctx["session"]
    opener, popup = open_form(ctx, s, "keyhdr")
    key = s.driver.find_element(By.NAME, "api_key")
    assert key.get_attribute("type") == "password" and key.get_attribute("autocomplete") == "off"
    assert s.driver.find_element(By.CSS_SELECTOR, "label[for=tb-field-api_key]").text == "The API key"
    s.shot("01-api-key-form")
    fill(s, [("api_key", KEY)])
    expect_connected(ctx, s, opener, popup, "keyhdr:u-4242")


def test_a_basic_pair_connects_through_the_form(ctx):
    s = ctx["session"]
    opener, popup = open_form(ctx, s, "basicp")
    assert s.driver.find_element(By.NAME, "username").get_attribute("type") == "text"
    assert s.driver.find_element(By.NAME, "password").get_attribute("type") == "password"
    s.shot("02-basic-form")
    fill(s, [("username", "ada"), ("password", KEY)])
    expect_connected(ctx, s, opener, popup, "basicp:ada")


def test_a_bearer_token_connects_through_the_form(ctx):
    s = ctx["session"]
    opener, popup = open_form(ctx, s, "bearerp")
    assert s.driver.find_element(By.NAME, "token").get_attribute("type") == "password"
    fill(s, [("token", KEY)])
    back_to_opener(s, opener, popup, "the end page to close the popup")
    outcome = promise_outcome(s)
    assert "resolved" in outcome and outcome["resolved"]["account"].startswith("bearerp:key-"), outcome
    assert ctx["broker"].api("/flows/" + outcome["resolved"]["state"])["status"] == "completed"
    clean(s, "after the popup closed")


def test_a_refused_key_is_shown_on_the_form_then_the_right_one_connects(ctx):
    s = ctx["session"]
    before = ctx["broker"].api("/accounts")["accounts"]
    opener, popup = open_form(ctx, s, "keyhdr")
    fill(s, [("api_key", WRONG)])
    s.wait(lambda d: d.find_elements(By.ID, "tb-problem"), "the refusal on the form")
    problem = s.driver.find_element(By.ID, "tb-problem").text
    assert "refused these credentials (HTTP 401)" in problem, problem
    # The popup is still open on the form; the refused key is not in the page, nor in its input.
    assert popup in s.driver.window_handles
    assert s.driver.find_element(By.NAME, "api_key").get_attribute("value") == ""
    clean(s, "the refusal", allowed=("422",))
    s.shot("03-refused")
    assert ctx["broker"].api("/accounts")["accounts"] == before, "a refused key was stored"
    fill(s, [("api_key", KEY)])
    expect_connected(ctx, s, opener, popup, "keyhdr:u-4242")


def test_a_setting_is_asked_for_and_its_host_is_called(ctx):
    s = ctx["session"]
    fake = ctx["fake"]
    opener, popup = open_form(ctx, s, "subdom")
    setting = s.driver.find_element(By.NAME, "setting:subdomain")
    assert setting.get_attribute("type") == "text" and setting.get_attribute("required") is not None
    assert s.driver.find_element(By.CSS_SELECTOR, "label[for=tb-setting-subdomain]").text == "Your team's subdomain"
    s.shot("04-setting-form")
    before = len(fake.calls())
    fill(s, [("setting:subdomain", "acme"), ("token", KEY)])
    back_to_opener(s, opener, popup, "the end page to close the popup")
    outcome = promise_outcome(s)
    assert "resolved" in outcome and outcome["resolved"]["account"].startswith("subdom:key-"), outcome
    account = outcome["resolved"]["account"]
    assert ctx["broker"].api("/flows/" + outcome["resolved"]["state"])["status"] == "completed"
    assert ctx["broker"].api("/account?id=" + account)["settings"] == {"subdomain": "acme"}
    calls = fake.calls()[before:]
    assert [(c["host"], c["path"], c["accepted"]) for c in calls] == [
        ("acme.localhost:%d" % fake.port, "/bearer/me", True)], calls
    clean(s, "after the popup closed")


def test_a_refused_setting_is_shown_without_its_value_and_nothing_is_called(ctx):
    s = ctx["session"]
    fake = ctx["fake"]
    accounts = ctx["broker"].api("/accounts")["accounts"]
    opener, popup = open_form(ctx, s, "subdom")
    before = len(fake.calls())
    fill(s, [("setting:subdomain", "acme.evil.com"), ("token", KEY)])
    s.wait(lambda d: d.find_elements(By.ID, "tb-problem"), "the refusal on the form")
    problem = s.driver.find_element(By.ID, "tb-problem").text
    assert '"subdomain"' in problem and "DNS label" in problem, problem
    assert "evil" not in s.driver.page_source, "the page echoes the refused value"
    assert s.driver.find_element(By.NAME, "setting:subdomain").get_attribute("value") == ""
    assert popup in s.driver.window_handles
    clean(s, "the refused setting", allowed=("400",))
    s.shot("05-refused-setting")
    assert len(fake.calls()) == before, "a refused setting reached the fake: %s" % fake.calls()[before:]
    assert ctx["broker"].api("/accounts")["accounts"] == accounts, "a refused setting stored an account"
    fill(s, [("setting:subdomain", "globex"), ("token", KEY)])
    back_to_opener(s, opener, popup, "the end page to close the popup")
    outcome = promise_outcome(s)
    assert "resolved" in outcome, outcome
    assert [c["host"] for c in fake.calls()[before:]] == ["globex.localhost:%d" % fake.port]
    clean(s, "after the popup closed")


TESTS = [
    test_an_api_key_connects_through_the_form,
    test_a_basic_pair_connects_through_the_form,
    test_a_bearer_token_connects_through_the_form,
    test_a_refused_key_is_shown_on_the_form_then_the_right_one_connects,
    test_a_setting_is_asked_for_and_its_host_is_called,
    test_a_refused_setting_is_shown_without_its_value_and_nothing_is_called,
]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build", "debug", "token-broker"))
    parser.add_argument("--fake-provider", default=os.path.join(ROOT, ".build", "debug", "fake-provider"))
    parser.add_argument("--out", default=os.path.join(ROOT, "test-output", "browser", "credential-form"))
    parser.add_argument("--docs", default=None, help="accepted for scripts/browser-test's sake; nothing is copied")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for stale in os.listdir(args.out):
        if stale.endswith(".png"):
            os.remove(os.path.join(args.out, stale))
    for binary in [args.binary, args.fake_provider]:
        if not os.access(binary, os.X_OK):
            sys.exit("browser test: %s is missing; run swift build first" % binary)
    ctx = {}
    listed = FrontEnd("Listed front end", body=lambda: APP_PAGE % {"title": "Listed front end", "broker": ctx["broker"].base})
    ctx["listed"] = listed
    fake = CredentialFake(args.fake_provider, args.out)
    ctx["fake"] = fake
    passed, failed = 0, 0
    broker = None
    try:
        broker = CredentialBroker(args.binary, fake, args.out, listed.origin)
        ctx["broker"] = broker
        for test in TESTS:
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
    if broker:
        with open(broker.log_path) as f:
            log = f.read()
        for secret in [KEY, WRONG]:
            if secret in log:
                failed += 1
                print("FAIL broker.log contains an entered value")
    print("screenshots in %s" % args.out)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
