"""The connect page under a sub-path, through a real nginx that strips the prefix.

nginx serves `location /broker/ { proxy_pass http://127.0.0.1:BROKERPORT/; }`, the
broker runs with BROKER_PUBLIC_URL=http://127.0.0.1:NGINXPORT/broker, and a real
browser connects an account against the fake provider, sees it active,
disconnects it through the confirmation, and meets an error page: every link,
form action, redirect and cookie must stay under /broker/, and nginx must never
be asked for a path outside it. Imported by test_connect_page.py.
"""

import os
import shutil
import subprocess
import tempfile
import time
import urllib.request

from selenium.webdriver.common.by import By

PREFIX = "/broker"

CONFIG = """# Written by scripts/browser.d/nginx_subpath.py for one run.
{user}
worker_processes 1;
pid {root}/nginx.pid;
error_log {root}/error.log warn;
events {{ worker_connections 128; }}
http {{
    access_log {root}/access.log;
    # Temp paths inside the run's directory, so nginx starts without the Debian ones in /var/lib/nginx.
    client_body_temp_path {root}/body;
    proxy_temp_path {root}/proxy;
    fastcgi_temp_path {root}/fastcgi;
    uwsgi_temp_path {root}/uwsgi;
    scgi_temp_path {root}/scgi;
    server {{
        listen 127.0.0.1:{port};
        location /broker/ {{
            proxy_pass http://127.0.0.1:{broker_port}/;
        }}
    }}
}}
"""


def nginx_binary():
    found = shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)
    if not found:
        raise RuntimeError("nginx is missing (scripts/browser-test installs the Debian package)")
    return found


class Nginx:
    """nginx in the foreground on `port`, proxying /broker/ to `broker_port` with the prefix stripped."""

    def __init__(self, port, broker_port, out):
        self.port = port
        self.root = tempfile.mkdtemp(prefix="broker-nginx-")
        self.base = "http://127.0.0.1:%d" % port
        # As root, workers would run as nobody and could not use the run's 0700 directory.
        user = "user root;" if os.geteuid() == 0 else ""
        config = os.path.join(self.root, "nginx.conf")
        with open(config, "w") as f:
            f.write(CONFIG.format(user=user, root=self.root, port=port, broker_port=broker_port))
        self.out = out
        self.process = subprocess.Popen([nginx_binary(), "-e", os.path.join(self.root, "error.log"), "-p", self.root,
                                         "-c", config, "-g", "daemon off;"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError("nginx exited with %s: %s" % (self.process.returncode, self.errors()))
            try:
                if urllib.request.urlopen(self.base + PREFIX + "/healthz", timeout=1).status == 200:
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("nginx did not proxy /broker/healthz within 20 s: %s" % self.errors())

    def errors(self):
        try:
            with open(os.path.join(self.root, "error.log")) as f:
                return f.read()
        except OSError:
            return ""

    def requested_paths(self):
        """The request targets nginx logged, in order."""
        with open(os.path.join(self.root, "access.log")) as f:
            return [line.split('"')[1].split(" ")[1] for line in f if line.count('"') >= 2 and " " in line.split('"')[1]]

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        for name in ["access.log", "error.log"]:
            source = os.path.join(self.root, name)
            if os.path.exists(source):
                shutil.copy(source, os.path.join(self.out, "nginx-" + name))
        shutil.rmtree(self.root, ignore_errors=True)


URLS_JS = """
return [...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href'))
  .concat([...document.querySelectorAll('form')].map(f => f.getAttribute('action')))
  .concat([...document.querySelectorAll('img[src]')].map(i => i.getAttribute('src')).filter(s => !s.startsWith('data:')));
"""


def check_under_prefix(s, nginx, step):
    """Where the browser is, every link and form on the page, and every cookie it holds: all under /broker/."""
    d = s.driver
    assert d.current_url.startswith(nginx.base + PREFIX + "/"), "%s: the browser is at %s" % (step, d.current_url)
    for url in d.execute_script(URLS_JS):
        assert url.startswith(PREFIX + "/"), "%s: a link or form leaves %s/: %s" % (step, PREFIX, url)
    for cookie in d.get_cookies():
        assert cookie["path"].startswith(PREFIX), "%s: cookie %s has path %s" % (step, cookie["name"], cookie["path"])
    # Behind a proxy the broker sees its own address as Host; it must not take that for a wrong address.
    assert not d.find_elements(By.CSS_SELECTOR, "[role=note]"), "%s: the page warns about the address" % step
    s.check_clean(step)


def test_subpath_through_nginx(ctx):
    s, broker, nginx, fake, d = ctx["session"], ctx["broker"], ctx["nginx"], ctx["fake"], ctx["session"].driver
    from test_connect_page import ACCOUNT_ID, UID, accounts, disconnect_link  # noqa: E402 (shared helpers)
    home = nginx.base + PREFIX + "/"
    d.get(home)
    assert d.find_elements(By.ID, "no-accounts")
    check_under_prefix(s, nginx, "open /broker/")
    s.shot("nginx-01-start")

    revokes = fake.count("revoke")
    d.find_element(By.LINK_TEXT, "Connect Weibo").click()
    s.wait(lambda d: d.current_url == home and accounts(d), "the account listed after Connect through nginx")
    assert accounts(d)[0].get_attribute("data-account") == ACCOUNT_ID
    assert accounts(d)[0].get_attribute("data-status") == "active"
    assert "Connected Weibo account %s." % UID in d.find_element(By.CSS_SELECTOR, "[role=status]").text
    names = {c["name"]: c["path"] for c in d.get_cookies()}
    assert names.get("tb_session") == PREFIX, "session cookie: %s" % names
    check_under_prefix(s, nginx, "after Connect")
    s.shot("nginx-02-connected")

    disconnect_link(d).click()
    s.wait(lambda d: "/disconnect?id=" in d.current_url, "the confirmation through nginx")
    assert d.current_url.startswith(home + "disconnect?id=")
    check_under_prefix(s, nginx, "confirmation")
    s.shot("nginx-03-confirm")
    d.find_element(By.LINK_TEXT, "Cancel").click()
    s.wait(lambda d: d.current_url == home and accounts(d), "the page again after Cancel through nginx")
    disconnect_link(d).click()
    s.wait(lambda d: "/disconnect?id=" in d.current_url, "the confirmation again")
    d.find_element(By.XPATH, "//button[normalize-space()='Disconnect']").click()
    s.wait(lambda d: d.current_url == home and d.find_elements(By.ID, "no-accounts"), "the account gone through nginx")
    assert "Disconnected Weibo account %s." % UID in d.find_element(By.CSS_SELECTOR, "[role=status]").text
    assert fake.count("revoke") == revokes + 1
    check_under_prefix(s, nginx, "after Disconnect")
    s.shot("nginx-04-disconnected")

    # An error page's way back stays under the prefix too.
    d.get(home + "authorize?provider=nope")
    s.wait(lambda d: d.find_elements(By.TAG_NAME, "h1"), "the error page through nginx")
    problems = [p for p in s.console_problems() if "status of 404" not in p]
    assert not problems, "browser console shows %s" % problems
    d.find_element(By.PARTIAL_LINK_TEXT, "Back to").click()
    s.wait(lambda d: d.current_url == home and d.find_elements(By.ID, "no-accounts"), "the page again from the error page")
    check_under_prefix(s, nginx, "back from the error page")

    outside = [p for p in nginx.requested_paths() if not p.startswith(PREFIX + "/")]
    assert not outside, "nginx was asked for paths outside %s/: %s" % (PREFIX, outside)
