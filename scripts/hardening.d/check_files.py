#!/usr/bin/env python3
"""Checks that every file under a token-broker data directory parses.

accounts/*.json   JSON objects with provider, uid and a sealed access_token (chacha20-poly1305)
flows/*.json      JSON objects with a state
broker-secret, encryption-key   non-empty
Temporary files (*.tmp.<16 hex>) and claimed flows (*.taken.<16 hex>) are counted, not parsed:
they are never read as records, and start-up removes those in accounts/ and flows/.
Prints one JSON line; exit status 1 when a record does not parse.
Usage: check_files.py DATA_DIR [--no-sentinel TEXT]...
"""
import json
import os
import re
import sys

LEFTOVER = re.compile(r"\.(tmp|taken)\.[0-9a-f]{16}$")


def main():
    root = sys.argv[1]
    sentinels = [sys.argv[i + 1] for i, a in enumerate(sys.argv) if a == "--no-sentinel"]
    report = {"accounts": 0, "flows": 0, "leftovers": 0, "root_leftovers": 0, "bad": [], "plaintext": []}
    for directory, _, names in os.walk(root):
        for name in names:
            path = os.path.join(directory, name)
            rel = os.path.relpath(path, root)
            with open(path, "rb") as f:
                data = f.read()
            for s in sentinels:
                if s.encode() in data:
                    report["plaintext"].append(rel)
            if LEFTOVER.search(name) or name.startswith(".probe"):
                # Record directories are cleaned at start-up; the root holds only key-file temporaries.
                report["leftovers" if os.sep in rel else "root_leftovers"] += 1
                continue
            if rel in ("broker-secret", "encryption-key"):
                if not data:
                    report["bad"].append(rel + ": empty")
                continue
            try:
                record = json.loads(data)
            except ValueError as e:
                report["bad"].append(f"{rel}: {e}")
                continue
            top = rel.split(os.sep)[0]
            if top == "accounts":
                sealed = isinstance(record.get("access_token"), dict) and record.get("encryption") == "chacha20-poly1305"
                if not (record.get("provider") and record.get("uid") and sealed):
                    report["bad"].append(rel + ": not a sealed account record")
                report["accounts"] += 1
            elif top == "flows":
                if not record.get("state"):
                    report["bad"].append(rel + ": not a flow record")
                report["flows"] += 1
            else:
                report["bad"].append(rel + ": unexpected file")
    print(json.dumps(report))
    return 1 if report["bad"] or report["plaintext"] else 0


if __name__ == "__main__":
    sys.exit(main())
