"""A short, scripted day in the life of a broker, for the dashboard picture (scripts/dashboard-snapshot).

Drives a real token-broker and the fake OAuth 2.0 provider on 127.0.0.1 through phases a dashboard should
show: sign-ins all along (a window of denials), token reads and proxied calls, a stretch of provider errors
on refresh (then recovery), a few refresh tokens revoked (accounts needing reauthorization), unmatched
callbacks, and a webhook receiver that is down for a while. Prints one line per phase change.

usage: load.py BROKER_PORT PROVIDER_PORT RECEIVER_CONTROL_FILE API_KEY SECONDS
"""
import http.client
import random
import sys
import threading
import time
import urllib.parse

broker_port, provider_port = int(sys.argv[1]), int(sys.argv[2])
receiver_control, api_key, total = sys.argv[3], sys.argv[4], float(sys.argv[5])
start = time.monotonic()
stop = threading.Event()
accounts = []
accounts_lock = threading.Lock()


def elapsed():
    return time.monotonic() - start


def request(port, method, path, headers=None, body=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def control(**fields):
    body = urllib.parse.urlencode(fields)
    request(provider_port, "POST", "/_fake/control", {"Content-Type": "application/x-www-form-urlencoded"}, body)


def sign_in():
    status, headers, _ = request(broker_port, "GET", "/authorize?provider=acme")
    if status != 302:
        return
    cookie = headers.get("Set-Cookie", "").split(";")[0]
    target = urllib.parse.urlsplit(headers["Location"])
    status, headers, _ = request(provider_port, "GET", target.path + "?" + target.query)
    if status != 302:
        return
    back = urllib.parse.urlsplit(headers["Location"])
    status, _, body = request(
        broker_port, "GET", back.path + "?" + back.query, {"Cookie": cookie, "Accept": "application/json"})
    if status == 200:
        import json
        with accounts_lock:
            accounts.append(json.loads(body)["id"])


def some_account():
    with accounts_lock:
        return random.choice(accounts) if accounts else None


def signer(rate):
    while not stop.is_set():
        sign_in()
        time.sleep(1 / rate)


def reader(rate):
    key = {"Authorization": "Bearer " + api_key}
    while not stop.is_set():
        account = some_account()
        if account:
            request(broker_port, "GET", "/account?id=" + urllib.parse.quote(account), key)
        if random.random() < 0.1:
            request(broker_port, "GET", "/healthz")
        time.sleep(1 / rate)


def proxier(rate):
    while not stop.is_set():
        account = some_account()
        if account:
            headers = {"Authorization": "Bearer " + api_key, "Broker-Account": account}
            request(broker_port, "GET", "/proxy/echo?delay_ms=%d" % random.choice([5, 10, 20, 40]), headers)
        time.sleep(1 / rate)


def receiver(up):
    with open(receiver_control, "w") as f:
        f.write("up" if up else "down")


workers = [threading.Thread(target=signer, args=(4,)) for _ in range(2)]
workers += [threading.Thread(target=reader, args=(40,)) for _ in range(3)]
workers += [threading.Thread(target=proxier, args=(15,)) for _ in range(2)]
for worker in workers:
    worker.start()

# (fraction of the run, what happens)
phases = [
    (0.20, lambda: control(deny="true"), "sign-ins denied by the user"),
    (0.30, lambda: control(deny="false"), "sign-ins allowed again"),
    (0.35, lambda: [request(broker_port, "GET", "/callback?code=x&state=unknown%d" % n) for n in range(40)],
     "40 callbacks for no pending flow"),
    (0.40, lambda: control(refresh_failure="server_error"), "the provider answers 500 to refreshes"),
    (0.55, lambda: receiver(False), "the webhook receiver goes down"),
    (0.60, lambda: control(refresh_failure="none"), "refreshes work again"),
    (0.70, lambda: control(refresh_failure="invalid_grant"), "the provider revokes refresh tokens"),
    (0.72, lambda: control(refresh_failure="none"), "refresh tokens accepted again"),
    (0.80, lambda: receiver(True), "the webhook receiver is back"),
]
for fraction, action, label in phases:
    while elapsed() < fraction * total:
        time.sleep(0.2)
    action()
    print("t=%5.1fs %s" % (elapsed(), label), flush=True)
while elapsed() < total:
    time.sleep(0.2)
stop.set()
for worker in workers:
    worker.join()
print("accounts signed in: %d" % len(accounts), flush=True)
