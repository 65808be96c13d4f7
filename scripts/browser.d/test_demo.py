"""`token-broker demo` in a real browser: the first look a new user gets, end to end.

Starts the real binary's demo command (the broker on a fixed port beside its built-in demo provider,
throwaway data) and, in headless Chromium, opens the connect page, chooses Connect Demo, approves on
the demo provider's consent page and must land back on the connect page with the demo account listed
and active, with no console error or Content-Security-Policy violation anywhere on the way. Then the
API key the demo printed reads the account's token.

Usage: python3 scripts/browser.d/test_demo.py [--binary PATH] [--out DIR]
Prints "N passed, N failed" last; exits 1 when anything failed.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.request

from selenium.webdriver.common.by import By

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_connect_page import ROOT, Session, accounts, free_port  # noqa: E402


class Demo:
    """`token-broker demo` on a free port; reads the API key it prints."""

    def __init__(self, binary, out):
        self.root = tempfile.mkdtemp(prefix="broker-demo-")
        self.port = free_port()
        self.base = "http://127.0.0.1:%d" % self.port
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self.root, "TMPDIR": self.root,
               "BROKER_HOST": "127.0.0.1", "BROKER_PORT": str(self.port), "BROKER_DEMO_PORT": str(free_port())}
        self.log_path = os.path.join(out, "demo.log")
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen([binary, "demo"], env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError("token-broker demo exited with %s; see %s" % (self.process.returncode, self.log_path))
            try:
                if urllib.request.urlopen(self.base + "/readyz", timeout=1).status == 200:
                    break
            except OSError:
                time.sleep(0.1)
        else:
            raise RuntimeError("token-broker demo was not ready within 60 s")

    def api_key(self):
        """The key the demo printed for this run (`Authorization: Bearer …`)."""
        self.log.flush()
        with open(self.log_path) as f:
            printed = f.read()
        found = re.search(r"Bearer ([A-Za-z0-9_\-]{20,})", printed)
        assert found, "the demo printed no API key:\n" + printed[:2000]
        return found.group(1)

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()
        shutil.rmtree(self.root, ignore_errors=True)


def test_demo_connects_an_account_in_a_browser(ctx):
    s, demo = ctx["session"], ctx["demo"]
    d = s.driver
    d.get(demo.base + "/")
    s.check_clean("the connect page")
    assert accounts(d) == [], "a fresh demo lists no account"
    # The link the demo's own instructions name.
    d.find_element(By.CSS_SELECTOR, "li.provider[data-provider=demo] a.button").click()
    s.wait(lambda dr: dr.find_elements(By.CSS_SELECTOR, "button[value=approve]"), "the demo provider's consent page")
    s.check_clean("the consent page")
    s.shot("demo-consent")
    d.find_element(By.CSS_SELECTOR, "button[value=approve]").click()
    s.wait(lambda dr: dr.current_url.rstrip("/") == demo.base and accounts(dr), "the connect page with the account")
    listed = accounts(d)
    assert len(listed) == 1 and listed[0].get_attribute("data-status") == "active", [a.text for a in listed]
    account = listed[0].get_attribute("data-account")
    assert account.startswith("demo:"), account
    s.check_clean("back on the connect page")
    s.shot("demo-connected")
    request = urllib.request.Request(demo.base + "/account?id=" + account, headers={"Authorization": "Bearer " + demo.api_key()})
    with urllib.request.urlopen(request, timeout=10) as reply:
        body = json.loads(reply.read())
    assert body["id"] == account and body["access_token"], body.keys()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build", "debug", "token-broker"))
    parser.add_argument("--fake-provider", default=None)  # accepted like the other browser tests; the demo has its own
    parser.add_argument("--out", default=os.path.join(ROOT, "test-output", "browser"))
    args = parser.parse_args()
    out = os.path.join(args.out, "demo")
    os.makedirs(out, exist_ok=True)
    if not os.access(args.binary, os.X_OK):
        sys.exit("browser test: %s is missing; run swift build first" % args.binary)
    passed, failed = 0, 0
    demo = Demo(args.binary, out)
    session = Session(out)
    try:
        test_demo_connects_an_account_in_a_browser({"session": session, "demo": demo})
        passed += 1
        print("PASS test_demo_connects_an_account_in_a_browser", flush=True)
    except Exception:
        failed += 1
        print("FAIL test_demo_connects_an_account_in_a_browser", flush=True)
        traceback.print_exc()
    finally:
        session.quit()
        demo.stop()
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
