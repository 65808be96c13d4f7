#!/usr/bin/env python3
"""Reads token-broker's account store the way start-up does, for the hardening scripts.

The layout (BROKER_DATA_DIR, see the file store's journal and snapshot contract):
  accounts.snapshot.jsonl        optional; line 1 the header
                                 {"snapshot":"token-broker accounts","version":1,"journal":G,"accounts":N},
                                 then N compact record lines sorted by id (UTF-8 byte order); never torn
  accounts.journal.<G>.jsonl     one compact line per change: {"put":<record>} or {"delete":"<id>"};
                                 journals with a generation >= the snapshot's G are replayed from lowest to highest,
                                 older ones are leftovers (start-up deletes them)
  accounts/<encoded id>.json     the former layout (one pretty-printed record per file), read only when there is no
                                 snapshot, as a broker of the previous version leaves it
Only the last line of the newest journal may be torn (no final newline, or not JSON): it is ignored and counted.
Any other bad line is an error naming file:line.

  load(data_dir) -> (accounts, report)   accounts: id -> record (dict); report: see Report below
  read_snapshot(path) -> (records, header, bad)   one snapshot file (also a backup), without journals

CLI: account_store.py DATA_DIR   prints the report as one JSON line; exit status 1 when "bad" is not empty.
"""
import hashlib
import json
import os
import re
import sys

SNAPSHOT = "accounts.snapshot.jsonl"
SNAPSHOT_TEMPORARY = re.compile(r"^accounts\.snapshot\.jsonl\.tmp\.[0-9a-f]{16}$")
JOURNAL = re.compile(r"^accounts\.journal\.([1-9][0-9]*)\.jsonl$")
HEADER_MEMBERS = ["snapshot", "version", "journal", "accounts"]
FORMER = "accounts"
MIGRATED = "accounts.migrated"
FORMER_LEFTOVER = re.compile(r"\.tmp\.[0-9a-f]{16}$")
WHITESPACE = frozenset(b" \t\r\n")


def journal_name(generation):
    return f"accounts.journal.{generation}.jsonl"


def id_key(account_id):
    """Ids sort and compare on their UTF-8 bytes."""
    return account_id.encode("utf-8", "surrogatepass")


def compact(line):
    """Whether a JSON text has no whitespace outside its strings."""
    if b" " not in line and b"\t" not in line and b"\r" not in line:
        return True  # the usual line, checked without a byte-by-byte scan (a line never holds a newline)
    inside = escaped = False
    for byte in line:
        if inside:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:
                inside = False
        elif byte == 0x22:
            inside = True
        elif byte in WHITESPACE:
            return False
    return True


def record_problem(record):
    """Why a decoded record is not an account record, or None."""
    if not isinstance(record, dict):
        return "not a JSON object"
    if not isinstance(record.get("id"), str) or not record["id"]:
        return "no id"
    return None


def parse_line(line):
    """(value, None) or (None, reason) for one complete line (without its newline)."""
    try:
        value = json.loads(line)
    except ValueError as e:  # UnicodeDecodeError included
        return None, f"not JSON ({e})"
    if not compact(line):
        return None, "not compact JSON (whitespace outside strings)"
    return value, None


def read_snapshot(path, name=None):
    """Parses one snapshot file: (records in file order, header dict or None, bad list)."""
    name = name or os.path.basename(path)
    bad, records = [], []
    with open(path, "rb") as f:
        data = f.read()
    if not data.endswith(b"\n"):
        bad.append(f"{name}: does not end with a newline (a snapshot is never torn)")
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    if not lines:
        return records, None, [f"{name}:1: no header"]
    header, reason = parse_line(lines[0])
    if reason is None and (not isinstance(header, dict) or list(header) != HEADER_MEMBERS):
        reason = "not a header with the members " + ",".join(HEADER_MEMBERS) + " in that order"
    elif reason is None and (header["snapshot"] != "token-broker accounts" or header["version"] != 1):
        reason = f"unknown snapshot kind or version ({header['snapshot']!r}, {header['version']!r})"
    elif reason is None and not (is_count(header["journal"]) and header["journal"] >= 1 and is_count(header["accounts"])):
        reason = f"journal {header['journal']!r} or accounts {header['accounts']!r} is not a count"
    if reason:
        return records, None, [f"{name}:1: {reason}"]
    if header["accounts"] != len(lines) - 1:
        bad.append(f"{name}:1: the header says {header['accounts']} accounts, {len(lines) - 1} record lines follow")
    previous = None
    for number, line in enumerate(lines[1:], 2):
        record, reason = parse_line(line)
        reason = reason or record_problem(record)
        if reason:
            bad.append(f"{name}:{number}: {reason}")
            continue
        key = id_key(record["id"])
        if previous is not None and key <= previous:
            bad.append(f"{name}:{number}: id not after the previous line's in UTF-8 byte order (unsorted or twice)")
        previous = key
        records.append(record)
    return records, header, bad


def is_count(value):
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def former_name(account_id):
    """The former layout's file name of an id: percent-encoded bytes, or ~<SHA-256 hex>.json when too long."""
    name = ""
    for byte in id_key(account_id):
        c = chr(byte)
        name += c if (c.isascii() and (c.isalnum() or c in "._-")) else f"%{byte:02X}"
        if len(name) + 5 > 200:
            return "~" + hashlib.sha256(id_key(account_id)).hexdigest() + ".json"
    return name + ".json"


def read_former(directory, rel):
    """The records of a former-layout directory: (id -> record, leftovers, bad)."""
    accounts, leftovers, bad = {}, 0, []
    for name in sorted(os.listdir(directory)):
        if FORMER_LEFTOVER.search(name):
            leftovers += 1
            continue
        path = os.path.join(directory, name)
        if not name.endswith(".json") or not os.path.isfile(path):
            bad.append(f"{rel}/{name}: not a record file")
            continue
        try:
            with open(path, "rb") as f:
                record = json.loads(f.read())
        except ValueError as e:
            bad.append(f"{rel}/{name}: not JSON ({e})")
            continue
        reason = record_problem(record)
        if reason is None and former_name(record["id"]) != name:
            reason = f"the file name does not match the account id {record['id']!r}"
        if reason:
            bad.append(f"{rel}/{name}: {reason}")
            continue
        accounts[record["id"]] = record
    return accounts, leftovers, bad


def journals(data_dir):
    """Generation -> file name of every journal in the data directory."""
    found = {}
    if not os.path.isdir(data_dir):
        return found  # not created yet: a broker killed before it made its data directory
    for name in os.listdir(data_dir):
        match = JOURNAL.match(name)
        if match:
            found[int(match.group(1))] = name
    return found


def replay_journal(path, name, newest, accounts, report):
    """Applies one journal's lines to accounts; returns how many lines it applied."""
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    tail = lines.pop()  # after the last newline: empty, or a line whose write was cut short
    applied = 0
    for number, line in enumerate(lines, 1):
        change, reason = parse_line(line)
        if reason is None:
            reason = apply(change, accounts)
        if reason is None:
            applied += 1
        elif newest and not tail and number == len(lines) and reason.startswith("not JSON"):
            report["torn"] += 1  # the last line, complete in length but not in content
        else:
            report["bad"].append(f"{name}:{number}: {reason}")
    if tail and newest:
        report["torn"] += 1
    elif tail:
        report["bad"].append(f"{name}:{len(lines) + 1}: no final newline in a journal that is not the newest")
    return applied


def apply(change, accounts):
    """Applies one journal change; returns why it is not one, or None."""
    if not isinstance(change, dict) or len(change) != 1:
        return "neither {\"put\":record} nor {\"delete\":id}"
    if "put" in change:
        reason = record_problem(change["put"])
        if reason:
            return "put: " + reason
        accounts[change["put"]["id"]] = change["put"]
        return None
    if "delete" in change and isinstance(change["delete"], str) and change["delete"]:
        accounts.pop(change["delete"], None)
        return None
    return "neither {\"put\":record} nor {\"delete\":id}"


def load(data_dir):
    """Replays the account store of data_dir: (id -> record, report).

    report: layout ("snapshot", "former", "journal" or "empty"), count (live accounts), torn (0 or 1),
    snapshot_bytes, snapshot_journal (the header's G, 0 without a snapshot), journals ([{generation, bytes, lines}]
    replayed), generation (the newest journal's, 0 without one), stale_journals (generations below G: leftovers),
    former (records read from accounts/), former_leftovers, bad (["file:line: reason"]).
    """
    report = {"layout": "empty", "count": 0, "torn": 0, "snapshot_bytes": 0, "snapshot_journal": 0, "journals": [],
              "generation": 0, "stale_journals": [], "former": 0, "former_leftovers": 0, "bad": []}
    accounts = {}
    first = 1
    snapshot = os.path.join(data_dir, SNAPSHOT)
    former = os.path.join(data_dir, FORMER)
    if os.path.isfile(snapshot):
        report["layout"] = "snapshot"
        report["snapshot_bytes"] = os.path.getsize(snapshot)
        records, header, bad = read_snapshot(snapshot, SNAPSHOT)
        report["bad"] += bad
        accounts = {record["id"]: record for record in records}
        if header:
            first = report["snapshot_journal"] = header["journal"]
    elif os.path.isdir(former):
        report["layout"] = "former"
        accounts, report["former_leftovers"], bad = read_former(former, FORMER)
        report["former"] = len(accounts)
        report["bad"] += bad
    found = journals(data_dir)
    replayed = sorted(g for g in found if g >= first)
    report["stale_journals"] = sorted(g for g in found if g < first)
    if replayed and report["layout"] == "empty":
        report["layout"] = "journal"
    for generation in replayed:
        name = found[generation]
        path = os.path.join(data_dir, name)
        lines = replay_journal(path, name, generation == replayed[-1], accounts, report)
        report["journals"].append({"generation": generation, "bytes": os.path.getsize(path), "lines": lines})
    report["generation"] = max(found) if found else 0
    report["count"] = len(accounts)
    return accounts, report


def main():
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        print("usage: account_store.py DATA_DIR", file=sys.stderr)
        return 2
    _, report = load(sys.argv[1])
    print(json.dumps(report))
    return 1 if report["bad"] else 0


if __name__ == "__main__":
    sys.exit(main())
