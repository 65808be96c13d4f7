#!/usr/bin/env python3
"""Differential check of token-broker's HTTP/1.1 request framing against h11.

For every input file, `FuzzHTTP --frame` prints how our parser frames it (one
JSON line: requests with method, target, version, body length and SHA-256 and
byte offsets, then how the input ended). h11 (a second, independent parser,
used for framing only) frames the same bytes. Both must make the same
accept/reject decision and put every body boundary at the same byte.

Where they differ, the difference is "expected" only when a named rule below
explains it and the rule's predicate holds on the offending bytes: our parser
is deliberately stricter than h11 in places the reliability catalogue
(shared/reference/http-reliability-security.md, items 1-20) asks for, and h11
is stricter in a few places RFC 9112 leaves open. Anything else is a
disagreement, and the script exits 1.

Usage: h11_diff.py FUZZHTTP_BINARY REPORT_FILE DIR_OR_FILE...
"""
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter

import h11

from h11_rules import classify_ours_stricter, classify_h11_stricter

# How our parser frames input: the binary's --frame mode, run in batches.
BATCH = 400
# Suffixes that complete a head or chunked body, used when one parser decided and the other still waits.
COMPLETIONS = [b"\r\n\r\n", b"\r\n0\r\n\r\n", b"0\r\n\r\n"]


def ours_frame(binary, paths):
    """Our parser's framing of each file, keyed by path."""
    result = {}
    env = dict(os.environ, SWIFT_BACKTRACE="enable=no")
    for i in range(0, len(paths), BATCH):
        batch = paths[i:i + BATCH]
        out = subprocess.run([binary, "--frame", *batch], env=env, check=True, capture_output=True).stdout
        for line in out.decode().splitlines():
            record = json.loads(line)
            result[record["file"]] = record
    return result


def h11_frame(data):
    """h11's framing of `data`, in the same shape as ours: requests, then the ending."""
    conn = h11.Connection(h11.SERVER, max_incomplete_event_size=1 << 30)
    conn.receive_data(data)
    requests = []
    start = 0
    current = None
    body = bytearray()
    try:
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA or event is h11.PAUSED:
                break
            if isinstance(event, h11.Request):
                current = event
                body = bytearray()
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                # h11 keeps what it has not framed yet in its receive buffer; its length locates the boundary.
                end = len(data) - len(conn._receive_buffer)
                requests.append({
                    "method": current.method.decode("latin-1"),
                    "target": current.target.decode("latin-1"),
                    "version": current.http_version.decode("latin-1"),
                    "body_length": len(body),
                    "body_sha256": hashlib.sha256(bytes(body)).hexdigest(),
                    "start": start, "end": end,
                })
                start = end
                # Answer (404, never a protocol switch) so h11 moves on to the next pipelined request.
                conn.send(h11.Response(status_code=404, headers=[("Content-Length", "0")]))
                conn.send(h11.EndOfMessage())
                if conn.their_state is h11.DONE and conn.our_state is h11.DONE:
                    conn.start_next_cycle()
                else:
                    requests[-1]["closes"] = True
                    return {"requests": requests, "ending": "closed", "at": start}
    except h11.RemoteProtocolError as error:
        return {"requests": requests, "ending": "error", "message": str(error), "at": start}
    if conn.their_state is h11.IDLE and len(conn._receive_buffer) == 0:
        return {"requests": requests, "ending": "idle", "at": start}
    return {"requests": requests, "ending": "partial", "at": start}


def summarize(outcomes):
    """One verdict from a parser's outcomes on the completed inputs: accepting any completion counts as accepting."""
    outcomes = list(outcomes)
    if "accepted" in outcomes:
        return "accepted"
    return "error" if "error" in outcomes else "partial"


def same_request(a, b):
    """The fields both parsers report and must agree on."""
    keys = ("method", "target", "version", "body_length", "body_sha256", "start", "end")
    return all(a[k] == b[k] for k in keys), [k for k in keys if a[k] != b[k]]


def compare(data, ours, theirs, completed):
    """('agree', kind) | ('ours-stricter', rule) | ('h11-stricter', rule) | ('undecided', why) | ('disagree', why)."""
    for i, (a, b) in enumerate(zip(ours["requests"], theirs["requests"])):
        same, fields = same_request(a, b)
        if not same:
            return ("disagree", f"request {i} differs in {','.join(fields)}")
        # The server stops reading after a response that closes; so does h11. Nothing after it is framed.
        if not a["keep_alive"] or b.get("closes"):
            return ("agree", "accepted")
    k = min(len(ours["requests"]), len(theirs["requests"]))
    at = ours["requests"][k - 1]["end"] if k else 0
    seg = data[at:]
    ours_more = len(ours["requests"]) > k
    theirs_more = len(theirs["requests"]) > k
    o_end = "accepted" if ours_more else ours["ending"]
    t_end = "accepted" if theirs_more else theirs["ending"]
    if o_end == t_end:
        return ("agree", {"idle": "accepted", "accepted": "accepted", "error": "rejected", "partial": "incomplete"}.get(o_end, o_end))
    if o_end == "error":
        if t_end == "partial":
            # h11 only decides once a whole head or chunk line is in; give it the rest of one. The rule that
            # explains our rejection is then checked on the completed bytes, as h11 would frame them.
            verdict = completed.get(("h11", at))
            if verdict == "error":
                return ("agree", "rejected")
            rule = next(filter(None, (classify_ours_stricter(seg + end, ours) for end in [b""] + COMPLETIONS)), None)
            if rule:
                return ("ours-stricter", rule)
            if verdict is None or verdict == "partial":
                return ("undecided", "h11 still incomplete: " + ours["message"])
            return ("disagree", f"ours {ours['status']} '{ours['message']}', h11 accepts it once complete")
        rule = classify_ours_stricter(seg, ours)
        return ("ours-stricter", rule) if rule else ("disagree", f"ours {ours['status']} '{ours['message']}', h11 {t_end}")
    if t_end == "error":
        rule = classify_h11_stricter(seg, theirs)
        if rule:
            return ("h11-stricter", rule)
        if o_end == "partial":
            verdict = completed.get(("ours", at))
            if verdict == "error":
                return ("agree", "rejected")
            if verdict is None or verdict == "partial":
                return ("undecided", "ours still incomplete: " + theirs["message"])
        return ("disagree", f"h11 '{theirs['message']}', ours {o_end}")
    return ("disagree", f"ours {o_end}, h11 {t_end} after {k} requests")


def collect(paths):
    files = []
    for p in paths:
        if os.path.isdir(p):
            files += [os.path.join(p, n) for n in sorted(os.listdir(p)) if not n.startswith(".")]
        elif os.path.isfile(p):
            files.append(p)
    return files


def main():
    binary, report_path, *inputs = sys.argv[1:]
    files = collect(inputs)
    datas = {f: open(f, "rb").read() for f in files}
    ours = ours_frame(binary, files)
    theirs = {f: h11_frame(datas[f]) for f in files}

    # Second pass: where one parser rejected and the other still waits, complete the input for the waiting one.
    completed = {}
    with tempfile.TemporaryDirectory() as tmp:
        pending = []
        for f in files:
            o, t = ours[f], theirs[f]
            k = min(len(o["requests"]), len(t["requests"]))
            at = o["requests"][k - 1]["end"] if k else 0
            if o["ending"] == "error" and t["ending"] == "partial" and len(t["requests"]) == k:
                verdicts = [h11_frame(datas[f][at:] + s) for s in COMPLETIONS]
                completed[(f, "h11", at)] = summarize(
                    ("accepted" if v["requests"] else v["ending"]) for v in verdicts)
            if t["ending"] == "error" and o["ending"] == "partial" and len(o["requests"]) == k:
                for j, s in enumerate(COMPLETIONS):
                    name = os.path.join(tmp, f"{len(pending)}-{j}")
                    with open(name, "wb") as out:
                        out.write(datas[f][at:] + s)
                    pending.append((f, at, name))
        if pending:
            framed = ours_frame(binary, [name for _, _, name in pending])
            outcomes = {}
            for f, at, name in pending:
                v = framed[name]
                outcomes.setdefault((f, "ours", at), []).append("accepted" if v["requests"] else v["ending"])
            for key, found in outcomes.items():
                completed[key] = summarize(found)

    verdicts = Counter()
    rules = {"agree": Counter(), "ours-stricter": Counter(), "h11-stricter": Counter(), "undecided": Counter()}
    failures = []
    for f in files:
        local = {(who, at): v for (g, who, at), v in completed.items() if g == f}
        verdict, detail = compare(datas[f], ours[f], theirs[f], local)
        verdicts[verdict] += 1
        if verdict in rules:
            rules[verdict][detail] += 1
        if verdict == "disagree":
            failures.append((f, detail))

    with open(report_path, "w") as report:
        for f, detail in failures:
            report.write(f"{f}\t{detail}\n")
    agree = rules["agree"]
    print(f"differential vs h11 {h11.__version__}: {len(files)} inputs")
    print(f"  agreed: {verdicts['agree']} (both accepted {agree['accepted']}, both rejected {agree['rejected']}, "
          f"both incomplete {agree['incomplete']})")
    for kind in ("ours-stricter", "h11-stricter"):
        listed = ", ".join(f"{r} {n}" for r, n in sorted(rules[kind].items(), key=lambda x: -x[1])) or "none"
        print(f"  expected {kind} (by rule): {verdicts[kind]} [{listed}]")
    if verdicts["undecided"]:
        listed = ", ".join(f"{r} {n}" for r, n in rules["undecided"].most_common(5))
        print(f"  undecided (one parser still waiting after completion): {verdicts['undecided']} [{listed}]")
    print(f"  disagreements: {len(failures)}" + (f" (listed in {report_path})" if failures else ""))
    for f, detail in failures[:10]:
        print(f"    {f}: {detail}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
