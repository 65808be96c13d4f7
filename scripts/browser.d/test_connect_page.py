"""The connect page in a real browser: headless Chromium (Debian) driven by Selenium.

Starts the real token-broker binary with the weibo preset pointed at the fake Weibo
of the Swift tests (the fake-provider executable, approving at once), then, as a person would: opens /, clicks Connect, lands back
on the page with the account listed, clicks Disconnect, cancels on the
confirmation page, clicks Disconnect again, confirms and sees it gone. Then the
same through a real nginx that serves the broker under /broker/ and strips the
prefix (nginx_subpath.py). Every step saves a screenshot into
test-output/browser/ (the page and the confirmation at 1280 and 390 pixels
wide) and fails on any browser console error or Content-Security-Policy violation.

Usage: python3 scripts/browser.d/test_connect_page.py [--binary PATH] [--fake-provider PATH] [--out DIR]
(nginx must be installed; scripts/browser-test installs it.)
Prints "N passed, N failed" last; exits 1 when anything failed.
"""

import argparse
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nginx_subpath import PREFIX, Nginx, test_subpath_through_nginx  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
API_KEY = "browser-test-api-key-0123456789"
CLIENT_SECRET = "WEIBO-CLIENT-SECRET-SENTINEL-0123456789"
UID = "3733034601"
TOKEN_MARK = "WEIBO-TOKEN-SENTINEL"
ACCOUNT_ID = "weibo:" + UID
SECRETS = [TOKEN_MARK, CLIENT_SECRET, "WEIBO-CODE-SENTINEL", API_KEY]
# A 24-pixel icon inline, so the page shows one without reaching the network (the policy allows data: images).
ICON = "data:image/svg+xml;base64," + base64.b64encode(
    b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><circle cx="12" cy="12" r="11" fill="#e6162d"/>'
    b'<ellipse cx="10.5" cy="14" rx="6" ry="4.5" fill="#fff"/><circle cx="11" cy="14" r="2" fill="#1b1f24"/></svg>').decode()
WIDE, PHONE = (1280, 800), (390, 844)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def find(names):
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    sys.exit("browser test: none of %s on PATH (scripts/browser-test installs them)" % ", ".join(names))


class FakeProvider:
    """The fake-provider executable as a fake Weibo: tokens for 3 h, its ledger and behaviour under /_fake/.

    `consent="page"` shows its Approve/Deny page instead of approving at once; `name` names its log."""

    def __init__(self, binary, out, consent="auto", name="fake-provider"):
        self.root = tempfile.mkdtemp(prefix="fake-provider-")
        self.providers_file = os.path.join(self.root, "providers.json")
        self.log = open(os.path.join(out, name + ".log"), "w")
        self.process = subprocess.Popen(
            [binary, "--kind", "weibo", "--control", "--client-secret", CLIENT_SECRET, "--token-lifetime", "10800",
             "--secret-variable", "FAKE_WEIBO_SECRET", "--providers-file", self.providers_file, "--consent", consent],
            stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.process.stdout.readline().strip()
        if not line.isdigit():
            raise RuntimeError("fake-provider did not start: %r" % line)
        self.base = "http://127.0.0.1:%s" % line

    def providers_entry(self):
        """The weibo entry of the providers file the fake wrote, pointing the preset at it."""
        with open(self.providers_file) as f:
            return json.load(f)["providers"]["weibo"]

    def stats(self):
        with urllib.request.urlopen(self.base + "/_fake/stats", timeout=5) as reply:
            return json.loads(reply.read())

    def control(self, **fields):
        data = "&".join("%s=%s" % (name, value) for name, value in fields.items()).encode()
        with urllib.request.urlopen(urllib.request.Request(self.base + "/_fake/control", data=data), timeout=5) as reply:
            reply.read()

    def count(self, name):
        return self.stats()[name + "_calls"]

    @property
    def referers(self):
        return self.stats()["authorize_referers"]

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()
        shutil.rmtree(self.root, ignore_errors=True)


class Broker:
    """The real token-broker process on a free port, talking to the fake provider.

    `public_url` is where browsers reach it (its own address unless a proxy stands in front)."""

    def __init__(self, binary, fake, out, public_url=None, name="broker", extra_env=None):
        self.root = tempfile.mkdtemp(prefix="broker-browser-")
        self.port = free_port()
        self.base = "http://127.0.0.1:%d" % self.port
        self.public_url = public_url or self.base
        providers = os.path.join(self.root, "providers.json")
        entry = dict(fake.providers_entry(), icon_url=ICON)
        with open(providers, "w") as f:
            json.dump({"providers": {"weibo": entry}}, f)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self.root,
               "BROKER_HOST": "127.0.0.1", "BROKER_PORT": str(self.port), "BROKER_PUBLIC_URL": self.public_url,
               "BROKER_DATA_DIR": os.path.join(self.root, "data"), "BROKER_PROVIDERS_FILE": providers,
               "BROKER_API_KEY": API_KEY, "FAKE_WEIBO_SECRET": CLIENT_SECRET, "BROKER_UPSTREAM_TIMEOUT": "5",
               **(extra_env or {})}
        self.log_path = os.path.join(out, name + ".log")
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
        raise RuntimeError("token-broker did not answer /healthz within 20 s")

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


class Session:
    """One headless Chromium with its console log, and the checks every step shares."""

    def __init__(self, out, width=WIDE[0], height=WIDE[1]):
        options = webdriver.ChromeOptions()
        options.binary_location = find(["chromium", "chromium-browser"])
        for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                         "--window-size=%d,%d" % (width, height), "--force-device-scale-factor=1",
                         "--no-first-run", "--disable-extensions", "--lang=en-US"]:
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        service = Service(executable_path=find(["chromedriver"]))
        self.driver = webdriver.Chrome(service=service, options=options)
        self.out = out
        self.viewport(width, height)

    def console_problems(self):
        """SEVERE console entries and CSP reports since the last call."""
        entries = self.driver.get_log("browser")
        return [e["message"] for e in entries
                if e.get("level") == "SEVERE" or "Content Security Policy" in e.get("message", "")]

    def check_clean(self, step):
        problems = self.console_problems()
        assert not problems, "%s: browser console shows %s" % (step, problems)
        source = self.driver.page_source
        for secret in SECRETS:
            assert secret not in source, "%s: the page shows a secret (%s)" % (step, secret)

    def viewport(self, width, height):
        """Sizes the window so the page itself gets width x height pixels."""
        self.driver.set_window_size(width, height)
        inner = self.driver.execute_script("return [window.innerWidth, window.innerHeight]")
        self.driver.set_window_size(2 * width - inner[0], 2 * height - inner[1])

    def shot(self, name):
        self.driver.save_screenshot(os.path.join(self.out, name + ".png"))

    def wait(self, condition, what, timeout=30):
        try:
            return WebDriverWait(self.driver, timeout).until(lambda d: condition(d))
        except Exception:
            self.shot("failed-" + what.replace(" ", "-"))
            raise AssertionError("timed out waiting for %s (at %s)" % (what, self.driver.current_url))

    def quit(self):
        self.driver.quit()


def accounts(driver):
    return driver.find_elements(By.CSS_SELECTOR, "li.account")


CSP_PROBE = ("data:text/html,<!doctype html><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'\">"
             "<title>probe</title><p style=\"color:red\">probe</p><script>document.title='ran'</script>")


def test_console_check_sees_csp_violations(ctx):
    """The console check is not blind: a page that breaks its own CSP is reported."""
    s = ctx["session"]
    s.driver.get(CSP_PROBE)
    time.sleep(0.5)
    problems = s.console_problems()
    assert any("Content Security Policy" in p for p in problems), "CSP violation not reported: %s" % problems


def test_page_headers_forbid_everything_but_the_inline_sheet(ctx):
    with urllib.request.urlopen(ctx["broker"].base + "/", timeout=5) as reply:
        headers = reply.headers
        body = reply.read().decode()
    csp = headers["Content-Security-Policy"]
    for directive in ["default-src 'none'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'self'"]:
        assert directive in csp, "CSP lacks %s: %s" % (directive, csp)
    assert "script-src" not in csp and "<script" not in body.lower()
    assert headers["Referrer-Policy"] == "no-referrer"
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Content-Type"].startswith("text/html")
    assert "http://" not in body.replace(ctx["broker"].base, ""), "the page references another origin"


def disconnect_link(driver):
    return accounts(driver)[0].find_element(By.XPATH, ".//a[normalize-space()='Disconnect']")


def test_connect_then_disconnect(ctx):
    s, broker, fake, d = ctx["session"], ctx["broker"], ctx["fake"], ctx["session"].driver
    d.get(broker.base + "/")
    assert d.title == "token-broker"
    assert d.find_element(By.TAG_NAME, "h1").text == "token-broker"
    assert d.find_elements(By.ID, "no-accounts"), "a new browser should see no account"
    # Presets without credentials are hidden from visitors; the configured one shows its name and icon.
    assert [p.get_attribute("data-provider") for p in d.find_elements(By.CSS_SELECTOR, "li.provider")] == ["weibo"]
    assert not d.find_elements(By.CSS_SELECTOR, "[data-provider=github], button[disabled]")
    icon = d.find_element(By.CSS_SELECTOR, "li[data-provider=weibo] img.icon")
    assert icon.get_attribute("alt") == "" and d.execute_script("return arguments[0].naturalWidth", icon) > 0, "the icon did not load"
    s.check_clean("open /")
    s.shot("01-start")

    d.find_element(By.LINK_TEXT, "Connect Weibo").click()
    s.wait(lambda d: d.current_url == broker.base + "/" and accounts(d), "the account listed after Connect")
    rows = accounts(d)
    assert len(rows) == 1 and rows[0].get_attribute("data-account") == ACCOUNT_ID
    assert rows[0].get_attribute("data-status") == "active"
    text = rows[0].text
    assert UID in text and "active" in text and "expires in 3 h" in text, text
    assert "Connected Weibo account %s." % UID in d.find_element(By.CSS_SELECTOR, "[role=status]").text
    assert fake.count("token") == 1 and fake.referers == [None], "Referer sent to the provider: %s" % fake.referers
    assert [a["id"] for a in broker.api("/accounts")["accounts"]] == [ACCOUNT_ID]
    s.check_clean("after Connect")
    s.shot("02-connected")

    d.refresh()
    assert not d.find_elements(By.CSS_SELECTOR, "[role=status]"), "the notice must show only once"
    s.check_clean("reload")

    # Disconnect asks first; Cancel goes back and changes nothing.
    disconnect_link(d).click()
    s.wait(lambda d: "/disconnect?id=" in d.current_url, "the confirmation page")
    assert d.find_element(By.TAG_NAME, "h1").text == "Disconnect Weibo account %s?" % UID
    assert "asks Weibo to revoke" in d.find_element(By.CSS_SELECTOR, ".lead").text
    s.check_clean("confirmation")
    s.shot("03-confirm")
    d.find_element(By.LINK_TEXT, "Cancel").click()
    s.wait(lambda d: d.current_url == broker.base + "/" and accounts(d), "the page again after Cancel")
    assert fake.count("revoke") == 0 and [a["id"] for a in broker.api("/accounts")["accounts"]] == [ACCOUNT_ID]
    s.check_clean("after Cancel")

    disconnect_link(d).click()
    s.wait(lambda d: "/disconnect?id=" in d.current_url, "the confirmation page again")
    d.find_element(By.XPATH, "//button[normalize-space()='Disconnect']").click()
    s.wait(lambda d: d.find_elements(By.ID, "no-accounts"), "the account gone after confirming")
    assert d.current_url == broker.base + "/"
    assert "Disconnected Weibo account %s." % UID in d.find_element(By.CSS_SELECTOR, "[role=status]").text
    assert fake.count("revoke") == 1, "Disconnect must revoke at the provider"
    assert broker.api("/accounts")["accounts"] == []
    s.check_clean("after Disconnect")
    s.shot("04-disconnected")


def test_keyboard_reaches_every_action(ctx):
    s, d = ctx["session"], ctx["session"].driver
    d.get(ctx["broker"].base + "/")
    d.find_element(By.LINK_TEXT, "Connect Weibo").click()
    s.wait(lambda d: accounts(d), "the account listed")
    # Freshly loaded: focus is on the document, so the first Tab goes to the first control.
    reached = []
    for _ in range(12):
        d.switch_to.active_element.send_keys(Keys.TAB)
        element = d.switch_to.active_element
        if element.tag_name == "body":
            continue  # past the last control, focus returns to the document
        name = element.get_attribute("aria-label") or element.text
        outline = element.value_of_css_property("outline-style")
        reached.append((name, outline))
    names = [n for n, _ in reached]
    for wanted in ["Connect Weibo", "Reconnect Weibo account " + UID, "Disconnect Weibo account " + UID]:
        assert wanted in names, "Tab never reaches %r: %s" % (wanted, names)
    assert all(o != "none" for _, o in reached), "a focused control shows no outline: %s" % reached

    def press_enter_on(label):
        for _ in range(12):
            element = d.switch_to.active_element
            if (element.get_attribute("aria-label") or element.text) == label:
                element.send_keys(Keys.ENTER)
                return
            element.send_keys(Keys.TAB)
        raise AssertionError("Tab never reaches %r" % label)

    # Enter on the focused Disconnect link opens the confirmation, and Enter on its button deletes.
    press_enter_on("Disconnect Weibo account " + UID)
    s.wait(lambda d: "/disconnect?id=" in d.current_url, "the confirmation page")
    d.switch_to.active_element.send_keys(Keys.TAB)
    focused = [d.switch_to.active_element.text]
    d.switch_to.active_element.send_keys(Keys.TAB)
    focused.append(d.switch_to.active_element.text)
    assert focused == ["Disconnect", "Cancel"], "the confirmation's controls in Tab order: %s" % focused
    d.switch_to.active_element.send_keys(Keys.SHIFT, Keys.TAB)
    press_enter_on("Disconnect")
    s.wait(lambda d: d.find_elements(By.ID, "no-accounts"), "the account gone after Enter on Disconnect")
    s.check_clean("keyboard")


CONTRAST_JS = """
function rgb(c){const m=c.match(/[\\d.]+/g).map(Number);return m.length>3?m:[...m,1];}
function bg(e){for(;e;e=e.parentElement){const c=rgb(getComputedStyle(e).backgroundColor);if(c[3]>0)return c;}return [255,255,255,1];}
return [...document.querySelectorAll(arguments[0])].filter(e=>e.offsetParent&&e.textContent.trim())
  .map(e=>[e.textContent.trim().slice(0,40),rgb(getComputedStyle(e).color),bg(e)]);
"""


def luminance(c):
    def channel(v):
        v = v / 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4
    return 0.2126 * channel(c[0]) + 0.7152 * channel(c[1]) + 0.0722 * channel(c[2])


def low_contrast(driver):
    """Visible text below 4.5:1 against its background."""
    low = []
    for text, fg, back in driver.execute_script(CONTRAST_JS, "h1,h2,p,.name,.sub,.state,.badge,.button,code"):
        l1, l2 = sorted([luminance(fg), luminance(back)], reverse=True)
        ratio = (l1 + 0.05) / (l2 + 0.05)
        if ratio < 4.5:
            low.append((text, round(ratio, 2)))
    return low


def check_layout(s, d, what):
    """No sideways scrolling, and every button and button-styled link at least 44 pixels tall."""
    width = d.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], "%s scrolls sideways: %s" % (what, width)
    for button in d.find_elements(By.CSS_SELECTOR, ".button"):
        assert button.size["height"] >= 44, "%s: touch target too small: %s %s" % (what, button.text, button.size)
    low = low_contrast(d)
    assert not low, "%s: text below 4.5:1 contrast: %s" % (what, low)


def test_wide_and_phone_widths_and_contrast(ctx):
    """The page and the confirmation at 1280 and at 390 pixels: readable, no sideways scroll, big enough to tap."""
    s, d = ctx["session"], ctx["session"].driver
    d.get(ctx["broker"].base + "/")
    d.find_element(By.LINK_TEXT, "Connect Weibo").click()
    s.wait(lambda d: accounts(d), "the account listed")
    for (width, height), suffix in [(WIDE, ""), (PHONE, "-390")]:
        s.viewport(width, height)
        d.get(ctx["broker"].base + "/")
        s.wait(lambda d: accounts(d), "the page at %d px" % width)
        check_layout(s, d, "the page at %d px" % width)
        s.check_clean("page at %d px" % width)
        s.shot("connect-page" + suffix)
        disconnect_link(d).click()
        s.wait(lambda d: "/disconnect?id=" in d.current_url, "the confirmation at %d px" % width)
        check_layout(s, d, "the confirmation at %d px" % width)
        s.check_clean("confirmation at %d px" % width)
        s.shot("confirm" + suffix)
    s.viewport(*WIDE)


def test_denied_sign_in_shows_a_page_with_a_way_back(ctx):
    s, d, fake = ctx["session"], ctx["session"].driver, ctx["fake"]
    fake.control(deny="true")
    try:
        d.get(ctx["broker"].base + "/")
        d.find_element(By.LINK_TEXT, "Connect Weibo").click()
        s.wait(lambda d: "/callback" in d.current_url and d.find_elements(By.TAG_NAME, "h1"), "the error page")
        assert d.find_element(By.TAG_NAME, "h1").text == "The account was not connected"
        assert "cancelled or refused" in d.find_element(By.CSS_SELECTOR, "[role=alert]").text
        # A 4xx page is a console "Failed to load resource" entry in Chromium; anything else is a problem.
        problems = [p for p in s.console_problems() if "status of 403" not in p]
        assert not problems, "browser console shows %s" % problems
        s.shot("05-denied")
        d.find_element(By.LINK_TEXT, "Back to token-broker").click()
        s.wait(lambda d: d.find_elements(By.ID, "no-accounts"), "the page again, still without an account")
        s.check_clean("back from the error page")
    finally:
        fake.control(deny="false")


TESTS = [test_console_check_sees_csp_violations, test_page_headers_forbid_everything_but_the_inline_sheet,
         test_connect_then_disconnect, test_keyboard_reaches_every_action, test_wide_and_phone_widths_and_contrast,
         test_denied_sign_in_shows_a_page_with_a_way_back]


def run(tests, out, ctx):
    """Runs each test in a fresh browser (no cookie or console entry carries over); returns (passed, failed)."""
    passed, failed = 0, 0
    for test in tests:
        session = Session(out)
        try:
            test(dict(ctx, session=session))
            passed += 1
            print("PASS", test.__name__, flush=True)
        except Exception:
            failed += 1
            print("FAIL", test.__name__, flush=True)
            traceback.print_exc()
        finally:
            session.quit()
    return passed, failed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build", "debug", "token-broker"))
    parser.add_argument("--fake-provider", default=os.path.join(ROOT, ".build", "debug", "fake-provider"))
    parser.add_argument("--out", default=os.path.join(ROOT, "test-output", "browser"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for stale in os.listdir(args.out):
        if stale.endswith(".png"):
            os.remove(os.path.join(args.out, stale))
    for binary in [args.binary, args.fake_provider]:
        if not os.access(binary, os.X_OK):
            sys.exit("browser test: %s is missing; run swift build first" % binary)
    fake = FakeProvider(args.fake_provider, args.out)
    logs = []
    passed, failed = 0, 0
    try:
        broker = Broker(args.binary, fake, args.out)
        logs.append(broker.log_path)
        try:
            passed, failed = run(TESTS, args.out, {"broker": broker, "fake": fake})
        finally:
            broker.stop()
        # The same page under /broker/ behind a real nginx that strips the prefix.
        nginx_port = free_port()
        sub = Broker(args.binary, fake, args.out, public_url="http://127.0.0.1:%d%s" % (nginx_port, PREFIX), name="broker-subpath")
        logs.append(sub.log_path)
        nginx = None
        try:
            nginx = Nginx(nginx_port, sub.port, args.out)
            more = run([test_subpath_through_nginx], args.out, {"broker": sub, "nginx": nginx, "fake": fake})
            passed, failed = passed + more[0], failed + more[1]
        finally:
            if nginx:
                nginx.stop()
            sub.stop()
    finally:
        fake.stop()
    for path in logs:
        with open(path) as f:
            log = f.read()
        for secret in SECRETS:
            if secret in log:
                failed += 1
                print("FAIL %s contains a secret (%s)" % (os.path.basename(path), secret))
    print("screenshots in %s" % args.out)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
