"""Reads every page of GET /accounts and GET /account for every STEP-th id from a broker; prints a SHA-256 of the
bodies as served (in order), how many accounts and pages it read, and how many /account answers were 200.

Usage: answers.py PORT API_KEY [LIMIT] [STEP]
"""
import hashlib
import http.client
import json
import sys
import urllib.parse

port, key = int(sys.argv[1]), sys.argv[2]
limit = int(sys.argv[3]) if len(sys.argv) > 3 else 500
step = int(sys.argv[4]) if len(sys.argv) > 4 else 100
headers = {"Authorization": "Bearer " + key}
connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)


def get(target):
    connection.request("GET", target, headers=headers)
    response = connection.getresponse()
    return response.status, response.read()


digest = hashlib.sha256()
ids, pages, cursor = [], 0, None
while True:
    target = "/accounts?limit=%d" % limit + ("&cursor=" + urllib.parse.quote(cursor) if cursor else "")
    status, body = get(target)
    if status != 200:
        sys.exit("GET %s: %d %s" % (target, status, body[:200]))
    digest.update(body)
    pages += 1
    page = json.loads(body)
    ids += [account["id"] for account in page["accounts"]]
    cursor = page.get("next_cursor")
    if not cursor:
        break
ok = 0
for account_id in ids[::step]:
    status, body = get("/account?id=" + urllib.parse.quote(account_id))
    digest.update(b"%d " % status + body)
    ok += status == 200
print("sha256=%s accounts=%d pages=%d account_reads=%d account_200=%d" % (digest.hexdigest(), len(ids), pages, len(ids[::step]), ok))
