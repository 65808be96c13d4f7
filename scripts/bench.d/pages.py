#!/usr/bin/env python3
"""Times GET /accounts pages on one keep-alive connection: prints one line per kind of page,
`<name> <median ms> <p99 ms> <pages>`.

Usage: pages.py PORT API_KEY OWNER SIZE
  first      the first page of 100, repeated
  walk       200 consecutive pages of 100 from the start, following next_cursor
  deep       pages of 100 from the middle of the store of SIZE accounts (reached by following cursors of pages of 1000)
  provider   the first page of provider=weibo, repeated
  end_user   the first page of end_user_id=OWNER, repeated
"""
import http.client
import json
import sys
import time
import urllib.parse

port, key, owner, size = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
headers = {"Authorization": "Bearer " + key}


def get(query):
    t0 = time.perf_counter()
    conn.request("GET", "/accounts?" + query, headers=headers)
    response = conn.getresponse()
    body = response.read()
    ms = (time.perf_counter() - t0) * 1000
    if response.status != 200:
        sys.exit("pages.py: GET /accounts?%s answered %d: %s" % (query, response.status, body[:200]))
    return ms, json.loads(body)


def report(name, times):
    times = sorted(times)
    print("%s %.2f %.2f %d" % (name, times[len(times) // 2], times[min(len(times) - 1, int(len(times) * 0.99))], len(times)))


def walk(query, pages, cursor=None):
    times = []
    for _ in range(pages):
        ms, page = get(query + ("&cursor=" + urllib.parse.quote(cursor) if cursor else ""))
        times.append(ms)
        cursor = page["next_cursor"]
        if cursor is None:
            break
    return times, cursor


report("first", [get("limit=100")[0] for _ in range(50)])
report("walk", walk("limit=100", 200)[0])
# Half way, by cursors of pages of 1000.
total = 0
cursor = None
while True:
    ms, page = get("limit=1000" + ("&cursor=" + urllib.parse.quote(cursor) if cursor else ""))
    total += len(page["accounts"])
    cursor = page["next_cursor"]
    if cursor is None or total >= size // 2:
        break
# A cursor is bound to the filters, not to the limit: the deep pages go on from it 100 at a time.
report("deep", walk("limit=100", 100, cursor)[0] if cursor else [0.0])
report("provider", [get("provider=weibo&limit=100")[0] for _ in range(50)])
report("end_user", [get("end_user_id=" + urllib.parse.quote(owner) + "&limit=100")[0] for _ in range(50)])
