#!/usr/bin/env python3
"""Checks account_store.py and check_files.py on data directories built here by hand.

Run: python3 scripts/hardening.d/account_store_test.py   (no broker needed; exit status 1 on a failure)
"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import account_store  # noqa: E402


def record(account_id, token="c2VhbGVk"):
    provider, _, uid = account_id.partition(":")
    return {"access_token": {"ciphertext": token, "key": "k1", "nonce": "bm9uY2U"}, "encryption": "chacha20-poly1305",
            "id": account_id, "provider": provider, "uid": uid}


def line(value):
    return json.dumps(value, separators=(",", ":")).encode() + b"\n"


def snapshot(records, journal=1, count=None):
    records = sorted(records, key=lambda r: account_store.id_key(r["id"]))
    header = {"snapshot": "token-broker accounts", "version": 1, "journal": journal,
              "accounts": len(records) if count is None else count}
    return line(header) + b"".join(line(r) for r in records)


class AccountStoreTest(unittest.TestCase):
    def setUp(self):
        self.temporary = tempfile.TemporaryDirectory()
        self.dir = self.temporary.name

    def tearDown(self):
        self.temporary.cleanup()

    def write(self, name, data):
        path = os.path.join(self.dir, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)

    def check_files(self):
        run = subprocess.run([sys.executable, os.path.join(HERE, "check_files.py"), self.dir], capture_output=True, text=True)
        return run.returncode, json.loads(run.stdout)

    def test_snapshot_then_journals_replay_puts_and_deletes_and_tolerate_a_torn_last_line(self):
        self.write("accounts.snapshot.jsonl", snapshot([record("weibo:1"), record("weibo:2"), record("weibo:3")], journal=2))
        self.write(account_store.journal_name(1), line({"delete": "weibo:1"}))  # below G: a leftover, not replayed
        self.write(account_store.journal_name(2), line({"put": record("weibo:4")}) + line({"delete": "weibo:2"}))
        self.write(account_store.journal_name(3), line({"put": record("weibo:3", "bmV3")}) + b'{"put":{"access_tok')
        accounts, report = account_store.load(self.dir)
        self.assertEqual(report["bad"], [])
        self.assertEqual(sorted(accounts), ["weibo:1", "weibo:3", "weibo:4"])
        self.assertEqual(accounts["weibo:3"]["access_token"]["ciphertext"], "bmV3")
        self.assertEqual((report["count"], report["torn"], report["generation"]), (3, 1, 3))
        self.assertEqual(report["stale_journals"], [1])
        self.assertEqual([j["generation"] for j in report["journals"]], [2, 3])
        status, files = self.check_files()
        self.assertEqual((status, files["accounts"], files["torn"], files["bad"]), (0, 3, 1, []))

    def test_a_complete_last_line_that_is_not_json_is_torn_too(self):
        self.write(account_store.journal_name(1), line({"put": record("weibo:1")}) + b"\0\0\0\0\n")
        accounts, report = account_store.load(self.dir)
        self.assertEqual((list(accounts), report["torn"], report["bad"], report["layout"]), (["weibo:1"], 1, [], "journal"))

    def test_a_bad_middle_line_or_a_torn_older_journal_is_an_error_naming_file_and_line(self):
        self.write("accounts.snapshot.jsonl", snapshot([record("weibo:1")]))
        self.write(account_store.journal_name(1), line({"put": record("weibo:2")}) + b"{oops\n" + line({"delete": "weibo:1"})
                   + b'{"put":')
        self.write(account_store.journal_name(2), line({"put": record("weibo:5")}))
        accounts, report = account_store.load(self.dir)
        self.assertEqual(report["bad"][0].split(": ")[0], "accounts.journal.1.jsonl:2")
        self.assertTrue(report["bad"][1].startswith("accounts.journal.1.jsonl:4: no final newline"), report["bad"])
        self.assertEqual((len(report["bad"]), report["torn"]), (2, 0))
        self.assertEqual(sorted(accounts), ["weibo:2", "weibo:5"])
        status, files = self.check_files()
        self.assertEqual(status, 1)
        self.assertIn("accounts.journal.1.jsonl:2", files["bad"][0])

    def test_a_change_of_another_shape_or_not_compact_is_an_error(self):
        self.write(account_store.journal_name(1), line({"put": record("weibo:1"), "delete": "weibo:1"})
                   + b'{"delete": "weibo:1"}\n' + line({"put": {"provider": "weibo"}}) + line({"delete": 7}) + line({"put": record("weibo:9")}))
        _, report = account_store.load(self.dir)
        self.assertEqual([b.split(": ")[0] for b in report["bad"]], [f"accounts.journal.1.jsonl:{n}" for n in (1, 2, 3, 4)])

    def test_whitespace_inside_strings_is_compact(self):
        self.write(account_store.journal_name(1), line({"put": record('weibo:a "b"\tc\\ d')}))
        accounts, report = account_store.load(self.dir)
        self.assertEqual((report["bad"], list(accounts)), ([], ['weibo:a "b"\tc\\ d']))

    def test_a_snapshot_is_checked_header_count_order_and_final_newline(self):
        self.write("accounts.snapshot.jsonl", snapshot([record("weibo:1"), record("weibo:2")], count=3))
        self.assertIn("accounts.snapshot.jsonl:1: the header says 3", account_store.load(self.dir)[1]["bad"][0])
        header = b'{"version":1,"snapshot":"token-broker accounts","journal":1,"accounts":0}\n'
        self.write("accounts.snapshot.jsonl", header)
        self.assertIn("in that order", account_store.load(self.dir)[1]["bad"][0])
        unsorted = snapshot([]).replace(b'"accounts":0', b'"accounts":2') + line(record("weibo:2")) + line(record("weibo:1"))
        self.write("accounts.snapshot.jsonl", unsorted)
        self.assertIn("accounts.snapshot.jsonl:3: id not after", account_store.load(self.dir)[1]["bad"][0])
        self.write("accounts.snapshot.jsonl", snapshot([record("weibo:1")])[:-1])
        self.assertIn("does not end with a newline", account_store.load(self.dir)[1]["bad"][0])

    def test_ids_sort_on_utf8_bytes(self):
        # U+FF5E sorts after U+00E9 in UTF-8 bytes, and "weibo:é" (0xC3) after "weibo:z".
        ids = ["weibo:z", "weibo:\u00e9", "weibo:\uff5e"]
        self.write("accounts.snapshot.jsonl", snapshot([record(i) for i in ids]))
        accounts, report = account_store.load(self.dir)
        self.assertEqual((report["bad"], sorted(accounts, key=account_store.id_key)), ([], ids))

    def test_a_former_layout_directory_is_read_when_there_is_no_snapshot(self):
        long_id = "weibo:" + "/" * 80
        for account_id in ("weibo:1", "weibo:a/b", long_id):
            self.write("accounts/" + account_store.former_name(account_id), json.dumps(record(account_id), indent=2).encode())
        self.write("accounts/weibo%3A1.json.tmp.0123456789abcdef", b'{"acc')
        self.assertTrue(account_store.former_name(long_id).startswith("~" + hashlib.sha256(long_id.encode()).hexdigest()[:8]))
        self.assertEqual(account_store.former_name("weibo:a/b"), "weibo%3Aa%2Fb.json")
        self.write(account_store.journal_name(1), line({"delete": "weibo:1"}))
        accounts, report = account_store.load(self.dir)
        self.assertEqual((report["layout"], report["former"], report["former_leftovers"], report["bad"]), ("former", 3, 1, []))
        self.assertEqual(sorted(accounts), sorted(["weibo:a/b", long_id]))
        self.write("accounts/weibo%3A2.json", json.dumps(record("weibo:3")).encode())
        self.assertIn("does not match", account_store.load(self.dir)[1]["bad"][0])

    def test_check_files_counts_migrated_backups_and_snapshot_temporaries(self):
        self.write("accounts.snapshot.jsonl", snapshot([record("weibo:1")]))
        self.write("accounts.snapshot.jsonl.tmp.0123456789abcdef", b'{"snapshot":"tok')
        self.write("accounts.migrated/weibo%3A1.json", json.dumps(record("weibo:1"), indent=2).encode())
        self.write("accounts.migrated/weibo%3A2.json.tmp.0123456789abcdef", b"{")
        self.write("backups/accounts-20261201T000000Z.snapshot.jsonl", snapshot([record("weibo:1"), record("weibo:2")]))
        self.write("broker-secret", b"s")
        status, files = self.check_files()
        self.assertEqual((status, files["bad"]), (0, []))
        self.assertEqual((files["accounts"], files["migrated"], files["backups"], files["backup_accounts"], files["leftovers"]),
                         (1, 2, 1, 2, 1))
        self.write("backups/accounts-20261202T000000Z.snapshot.jsonl", snapshot([{"id": "weibo:3", "provider": "weibo"}]))
        status, files = self.check_files()
        self.assertEqual(status, 1)
        self.assertIn("backups/accounts-20261202T000000Z.snapshot.jsonl:2: not a sealed account record", files["bad"])

    def test_check_files_wants_every_live_record_sealed(self):
        self.write("accounts.snapshot.jsonl", snapshot([record("weibo:1")]))
        self.write(account_store.journal_name(1), line({"put": {"id": "weibo:1", "provider": "weibo", "uid": "1",
                                                                "access_token": "plain"}}))
        status, files = self.check_files()
        self.assertEqual(status, 1)
        self.assertIn("weibo:1", files["bad"][0])


if __name__ == "__main__":
    unittest.main()
