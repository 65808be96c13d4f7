"""The hosted connect page asking for a per-account setting, in a real browser.

Starts the fake-provider binary as an OAuth 2.0 provider (consent `auto`) and the real token-broker binary with its
providers file rewritten so that every URL is at `http://{subdomain}.localhost:PORT` and the provider declares the
setting `subdomain` (Chromium, like the broker, takes every name under `localhost` as the loopback address, RFC 6761
§6.3). A front-end page makes a connect session without settings; in headless Chromium (Selenium) the test then does
what the person would in the popup: choose the provider, see the form asking for the subdomain, enter an unfit value
(refused on the form, naming the setting, the value not written back), then `acme`, sign in at acme.localhost and see
the Promise resolve with the account, which `GET /account` shows with `settings: {"subdomain": "acme"}`. No console
error or CSP report on any page.

Usage: python3 scripts/browser.d/test_settings_form.py [--binary PATH] [--fake-provider PATH] [--out DIR]
Prints "N passed, N failed" last; exits 1 when anything failed.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import traceback

from selenium.webdriver.common.by import By

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_connect_page import ROOT, Session  # noqa: E402
from test_connect_sessions import (APP_PAGE, api_call, assert_clean, back_to_opener, click_for_popup,  # noqa: E402
                                   on_picker, open_app, promise_outcome)
from test_cors import FrontEnd  # noqa: E402
from test_credential_form import CredentialBroker  # noqa: E402

SECRET = "SETTINGS-FORM-CLIENT-SECRET-0123456789"
END_USER = "user-settings"


class SubdomainFake:
    """fake-provider --kind oauth2 at every `{subdomain}.localhost:PORT`, declaring the setting in its providers file."""

    def __init__(self, binary, out):
        self.root = tempfile.mkdtemp(prefix="fake-settings-")
        self.providers_file = os.path.join(self.root, "providers.json")
        written = os.path.join(self.root, "written.json")
        self.log = open(os.path.join(out, "fake-provider.log"), "w")
        self.process = subprocess.Popen(
            [binary, "--kind", "oauth2", "--client-secret", SECRET, "--consent", "auto", "--users", "fixed",
             "--providers-file", written], stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.process.stdout.readline().strip()
        if not line.isdigit():
            raise RuntimeError("fake-provider did not start: %r" % line)
        self.port = int(line)
        with open(written) as f:
            text = f.read().replace("http://127.0.0.1:%d" % self.port, "http://{subdomain}.localhost:%d" % self.port)
        document = json.loads(text)
        # The secret goes in the file itself: the broker's environment is the helper's fixed one.
        document["providers"]["acme"]["client_secret"] = SECRET
        document["providers"]["acme"]["settings"] = [
            {"name": "subdomain", "description": "Your team's subdomain", "pattern": "[a-z0-9][a-z0-9-]*"}]
        with open(self.providers_file, "w") as f:
            json.dump(document, f)

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()
        shutil.rmtree(self.root, ignore_errors=True)


def test_the_hosted_page_asks_for_the_subdomain_then_signs_in_there(ctx):
    s = ctx["session"]
    body = {"end_user_id": END_USER, "origin": ctx["listed"].origin, "allowed_providers": ["acme"]}
    status, _, text = api_call(ctx["broker"], "POST", "/connect/sessions", body)
    assert status == 201, "POST /connect/sessions: %s %s" % (status, text)
    open_app(s, ctx["listed"], token=json.loads(text)["token"])
    opener, popup = click_for_popup(s, "connect")
    on_picker(s)
    assert_clean(s, "the hosted page")
    s.driver.find_element(By.CSS_SELECTOR, "li.provider a").click()
    s.wait(lambda d: d.find_elements(By.CSS_SELECTOR, "form.settings"), "the settings form")
    form = s.driver.find_element(By.CSS_SELECTOR, "form.settings")
    assert form.get_attribute("method") == "post", form.get_attribute("method")
    assert form.get_attribute("action") == ctx["broker"].base + "/connect/settings", form.get_attribute("action")
    assert s.driver.find_element(By.CSS_SELECTOR, "label[for=tb-setting-subdomain]").text == "Your team's subdomain"
    assert_clean(s, "the settings form")
    s.shot("01-settings-form")
    field = s.driver.find_element(By.NAME, "settings.subdomain")
    field.send_keys("acme.evil.com")
    s.driver.find_element(By.CSS_SELECTOR, "form.settings button[type=submit]").click()
    s.wait(lambda d: d.find_elements(By.ID, "tb-problem"), "the refusal on the form")
    problem = s.driver.find_element(By.ID, "tb-problem").text
    assert '"subdomain"' in problem and "evil.com" not in s.driver.page_source, problem
    assert popup in s.driver.window_handles
    assert_clean(s, "the refusal", allowed=("400",))
    s.shot("02-refused")
    field = s.driver.find_element(By.NAME, "settings.subdomain")
    field.clear()
    field.send_keys("acme")
    s.driver.find_element(By.CSS_SELECTOR, "form.settings button[type=submit]").click()
    back_to_opener(s, opener, popup, "the end page to close the popup")
    outcome = promise_outcome(s)
    assert "resolved" in outcome, "the Promise rejected: %s" % outcome
    account = ctx["broker"].api("/account?id=" + outcome["resolved"]["account"])
    assert account["settings"] == {"subdomain": "acme"} and account["end_user_id"] == END_USER, account
    assert_clean(s, "after the popup closed")


TESTS = [test_the_hosted_page_asks_for_the_subdomain_then_signs_in_there]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build", "debug", "token-broker"))
    parser.add_argument("--fake-provider", default=os.path.join(ROOT, ".build", "debug", "fake-provider"))
    parser.add_argument("--out", default=os.path.join(ROOT, "test-output", "browser", "settings-form"))
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
    fake = SubdomainFake(args.fake_provider, args.out)
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
    print("screenshots in %s" % args.out)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
