#!/usr/bin/env python3
"""Checks that every file under a token-broker data directory parses.

accounts.snapshot.jsonl, accounts.journal.<G>.jsonl   the account store, replayed as start-up does
                  (account_store.py): every live account has provider, uid and a sealed access_token
                  (chacha20-poly1305); "accounts" counts the live accounts; only the last line of the newest journal
                  may be torn; journals older than the snapshot's are leftovers start-up deletes
accounts/*.json   the former layout (one file per account): the live accounts when there is no snapshot yet;
                  beside a snapshot (a migration cut short) and in accounts.migrated/ the layout kept after migration:
                  counted as "migrated", not read
backups/*.snapshot.jsonl  snapshots written by POST /backup: parsed like the store's ("backups", "backup_accounts")
flows/journal.jsonl  one JSON object a line: {"put": {flow with a state}} or {"take": state}; only the
                  last line may be torn (no newline: a write a kill cut short, ignored at start-up)
flows/*.json      JSON objects with a state (per-flow files of older versions, imported at start-up)
webhooks/outbox.jsonl  one JSON object a line: {"put": {webhook delivery with an id and a body}} or {"done": id};
                  only the last line may be torn
broker-secret, encryption-key   non-empty
A torn last journal line is counted ("torn"), not an error. Temporary files (*.tmp.<16 hex>) and claimed flows
(*.taken.<16 hex>) are counted, not parsed: they are never read as records. "leftovers" counts those start-up removes
(in accounts/ and flows/, accounts.snapshot.jsonl.tmp.* and old journals in the root); "root_leftovers" the key-file
temporaries of the root, "backup_leftovers" those in backups/; "compaction_leftovers" the snapshot temporaries and old
journals a compaction cut short leaves. "generation" is the newest account journal's, "snapshot_journal" the snapshot's G.
Prints one JSON line; exit status 1 when a record does not parse.
Usage: check_files.py DATA_DIR [--no-sentinel TEXT]...
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import account_store  # noqa: E402

LEFTOVER = re.compile(r"\.(tmp|taken)\.[0-9a-f]{16}$")


def main():
    root = sys.argv[1]
    sentinels = [sys.argv[i + 1] for i, a in enumerate(sys.argv) if a == "--no-sentinel"]
    report = {"accounts": 0, "flows": 0, "deliveries": 0, "torn": 0, "leftovers": 0, "root_leftovers": 0,
              "migrated": 0, "backups": 0, "backup_accounts": 0, "backup_leftovers": 0, "generation": 0,
              "snapshot_journal": 0, "compaction_leftovers": 0, "bad": [], "plaintext": []}
    store = check_accounts(root, report)
    for directory, _, names in os.walk(root):
        for name in names:
            path = os.path.join(directory, name)
            rel = os.path.relpath(path, root)
            top = rel.split(os.sep)[0]
            with open(path, "rb") as f:
                data = f.read()
            for s in sentinels:
                if s.encode() in data:
                    report["plaintext"].append(rel)
            if top == account_store.MIGRATED or (top == account_store.FORMER and store["layout"] != "former"):
                report["migrated"] += 1  # the former layout kept after migration: never read again
                continue
            if top == account_store.FORMER or rel == account_store.SNAPSHOT or account_store.JOURNAL.match(rel):
                continue  # read by check_accounts
            if top == "backups":
                check_backup(rel, path, report)
                continue
            if account_store.SNAPSHOT_TEMPORARY.match(rel):
                report["leftovers"] += 1  # a snapshot a kill cut short: start-up removes it
                report["compaction_leftovers"] += 1
                continue
            if LEFTOVER.search(name) or name.startswith(".probe"):
                # Record directories are cleaned at start-up; the root holds only key-file temporaries.
                report["leftovers" if os.sep in rel else "root_leftovers"] += 1
                continue
            if rel == os.path.join("flows", "journal.jsonl"):
                check_journal(rel, data, report)
                continue
            if rel == os.path.join("webhooks", "outbox.jsonl"):
                check_outbox(rel, data, report)
                continue
            if rel == "accounts.sealed":
                # The mark of a sealed store (every record sealed; a plaintext one stops start-up).
                if data != b'{"sealed":"chacha20-poly1305"}\n':
                    report["bad"].append(rel + ": not the sealed-store mark")
                continue
            if rel == "broker.lock":
                # The data directory lock: the last owner's pid, or empty if it was killed while writing it.
                if data and not re.fullmatch(rb"[0-9]+\n", data):
                    report["bad"].append(rel + ": not a pid")
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
            if top == "flows":
                if not record.get("state"):
                    report["bad"].append(rel + ": not a flow record")
                report["flows"] += 1
            else:
                report["bad"].append(rel + ": unexpected file")
    print(json.dumps(report))
    return 1 if report["bad"] or report["plaintext"] else 0


def sealed_problem(record):
    """Why a record is not a sealed account record, or None."""
    sealed = isinstance(record.get("access_token"), dict) and record.get("encryption") == "chacha20-poly1305"
    return None if record.get("provider") and record.get("uid") and sealed else "not a sealed account record"


def check_accounts(root, report):
    """Replays the account store; every live account must be a sealed record. Returns the store's report."""
    accounts, store = account_store.load(root)
    report["bad"] += store["bad"]
    report["torn"] += store["torn"]
    report["leftovers"] += store["former_leftovers"] + len(store["stale_journals"])
    report["compaction_leftovers"] += len(store["stale_journals"])
    report["generation"], report["snapshot_journal"] = store["generation"], store["snapshot_journal"]
    for account_id, record in sorted(accounts.items()):
        problem = sealed_problem(record)
        if problem:
            report["bad"].append(f"account {json.dumps(account_id)}: {problem}")
    report["accounts"] = len(accounts)
    return store


def check_backup(rel, path, report):
    """A backup snapshot parses like the store's, with sealed records; its temporaries are counted."""
    if LEFTOVER.search(rel):
        report["backup_leftovers"] += 1
        return
    if not rel.endswith(".snapshot.jsonl"):
        report["bad"].append(rel + ": unexpected file")
        return
    records, _, bad = account_store.read_snapshot(path, rel)
    report["bad"] += bad
    for number, record in enumerate(records, 2):
        problem = sealed_problem(record)
        if problem:
            report["bad"].append(f"{rel}:{number}: {problem}")
    report["backups"] += 1
    report["backup_accounts"] += len(records)


def check_journal(rel, data, report):
    """Counts the flows a journal leaves pending; every complete line must be a put, a take, or an outcome
    (how a flow ended: no secret, nothing pending)."""
    lines = data.split(b"\n")
    torn = lines.pop()  # after the last newline: empty, or a record whose write was cut short
    if torn:
        report["torn"] += 1
    pending = set()
    for number, line in enumerate(lines, 1):
        try:
            record = json.loads(line)
        except ValueError as e:
            report["bad"].append(f"{rel}:{number}: {e}")
            continue
        put, take, outcome = (
            (record.get("put"), record.get("take"), record.get("outcome")) if isinstance(record, dict) else (None, None, None))
        if isinstance(put, dict) and put.get("state") and take is None and outcome is None:
            pending.add(put["state"])
        elif isinstance(take, str) and put is None and outcome is None:
            pending.discard(take)
        elif isinstance(outcome, dict) and outcome.get("state") and outcome.get("status") and put is None and take is None:
            pass
        else:
            report["bad"].append(f"{rel}:{number}: neither a put, a take nor an outcome")
    report["flows"] += len(pending)


def check_outbox(rel, data, report):
    """Counts the deliveries the webhook outbox holds; every complete line must be a put (staged or not), a commit
    of a staged delivery, or a done."""
    lines = data.split(b"\n")
    if lines.pop():
        report["torn"] += 1
    live = set()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as e:
            report["bad"].append(f"{rel}:{number}: {e}")
            continue
        if not isinstance(record, dict):
            record = {}
        put, stage, commit, done = (record.get(k) for k in ("put", "stage", "commit", "done"))
        staged_ok = stage is None or (isinstance(stage, dict) and isinstance(stage.get("account"), str))
        if isinstance(put, dict) and put.get("id") and isinstance(put.get("body"), str) and staged_ok \
                and commit is None and done is None:
            live.add(put["id"])
        elif isinstance(commit, str) and put is None and stage is None and done is None:
            pass
        elif isinstance(done, str) and put is None and stage is None and commit is None:
            live.discard(done)
        else:
            report["bad"].append(f"{rel}:{number}: neither a put, a stage, a commit nor a done")
    report["deliveries"] += len(live)


if __name__ == "__main__":
    sys.exit(main())
