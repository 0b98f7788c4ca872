#!/usr/bin/env python3
"""The lab contract in Python's standard library: http.server + sqlite3.

This is what a student typically writes for the idemlab lab (docs/lab-contract.md):
one SQLite file in WAL mode with synchronous=NORMAL, a key table whose primary key is
(customer, endpoint, key), the failed INSERT as the verdict (sqlite3.IntegrityError),
a canonical fingerprint, an in_progress state, stored responses replayed byte for byte.

idemlab uses it two ways: `make bench` measures it beside idemlab's own server under the
same load, and the grader's tests grade it, correct and with planted bugs:

    python3 bank.py --port 8090 --db /tmp/bank.db [--bug NAME] [--payment-latency-ms N]

NAME is one of: key-only, check-then-insert, raw-bytes, no-in-progress, recompute,
global-keys, memory-lock, memory-cache. Each plants the bug the lesson of that name is
about; the last two are lesson 8's, correct in one process and wrong in two: memory-lock
guards check-then-insert with a lock in the process's memory, memory-cache keeps the keys
in a dict instead of the table. Run two replicas over one database file to see them fail:

    python3 bank.py --port 8091 --db /tmp/bank.db --bug memory-lock &
    python3 bank.py --port 8092 --db /tmp/bank.db --bug memory-lock &
    idemlab grade http://127.0.0.1:8091 http://127.0.0.1:8092
"""
import argparse
import hashlib
import json
import re
import sqlite3
import threading
import time
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ACCOUNT = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
KEY = re.compile(r'^"([\x20\x21\x23-\x5b\x5d-\x7e]{1,255})"$')  # sf-string without escapes
SCHEMA = """
CREATE TABLE IF NOT EXISTS accounts (id TEXT PRIMARY KEY, balance INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS transfers (id INTEGER PRIMARY KEY AUTOINCREMENT, from_id TEXT,
    to_id TEXT, amount INTEGER, created_at TEXT);
CREATE TABLE IF NOT EXISTS idem_keys (scope TEXT NOT NULL, key TEXT NOT NULL,
    fingerprint TEXT NOT NULL, state TEXT NOT NULL, status INTEGER, body BLOB,
    transfer_id INTEGER, created_at REAL NOT NULL, PRIMARY KEY (scope, key));
"""

ARGS = None
LOCAL = threading.local()
# The memory-lock and memory-cache bugs: what they keep lives in this
# process only, so a second replica has its own.
MEMORY = threading.Lock()
KEY_LOCKS = {}
KEY_CACHE = {}


def db():
    conn = getattr(LOCAL, "conn", None)
    if conn is None:
        conn = sqlite3.connect(ARGS.db, timeout=10, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        LOCAL.conn = conn
    return conn


def problem(status, slug, detail):
    body = json.dumps({"type": "/problems/" + slug, "title": slug.replace("-", " "),
                       "status": status, "detail": detail}).encode()
    return status, "application/problem+json", body


def fingerprint(raw):
    if ARGS.bug == "raw-bytes":
        return hashlib.sha256(raw).hexdigest()
    canon = json.dumps(json.loads(raw), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(("POST\n/transfers\n" + canon).encode()).hexdigest()


def parse_transfer(raw):
    try:
        obj = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None, problem(400, "body-invalid", "the body is not valid JSON")
    if not isinstance(obj, dict) or set(obj) != {"from", "to", "amount"}:
        return None, problem(400, "field-invalid", "send exactly from, to and amount")
    a = obj["amount"]
    if not isinstance(a, int) or isinstance(a, bool) or a <= 0 or a > 2**53 - 1:
        return None, problem(400, "amount-invalid", "amount must be a positive whole number")
    for f in ("from", "to"):
        if not isinstance(obj[f], str) or not ACCOUNT.match(obj[f]):
            return None, problem(400, "account-id-invalid", f + " is not an account id")
    if obj["from"] == obj["to"]:
        return None, problem(400, "same-account", "from and to must differ")
    return obj, None


def execute(conn, t):
    """Calls the payment network, then moves the money in one transaction;
    returns (status, body, transfer_id)."""
    if ARGS.payment_latency_ms > 0:
        time.sleep(ARGS.payment_latency_ms / 1000)
    conn.execute("BEGIN IMMEDIATE")
    try:
        row = conn.execute("SELECT balance FROM accounts WHERE id = ?", (t["from"],)).fetchone()
        to = conn.execute("SELECT 1 FROM accounts WHERE id = ?", (t["to"],)).fetchone()
        if row is None or to is None:
            conn.execute("ROLLBACK")
            return problem(404, "account-not-found", "unknown account")[::2] + (None,)
        if row[0] < t["amount"]:
            conn.execute("ROLLBACK")
            return problem(402, "insufficient-funds", "insufficient funds")[::2] + (None,)
        conn.execute("UPDATE accounts SET balance = balance - ? WHERE id = ?", (t["amount"], t["from"]))
        conn.execute("UPDATE accounts SET balance = balance + ? WHERE id = ?", (t["amount"], t["to"]))
        now = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
        cur = conn.execute("INSERT INTO transfers(from_id, to_id, amount, created_at) VALUES (?,?,?,?)",
                           (t["from"], t["to"], t["amount"], now))
        tid = cur.lastrowid
        conn.execute("COMMIT")
    except Exception:
        conn.execute("ROLLBACK")
        raise
    return 201, render(tid, t, row[0] - t["amount"], now), tid


def render(tid, t, balance, created_at):
    return json.dumps({"transfer_id": "tr_%06d" % tid, "from": t["from"], "to": t["to"],
                       "amount": t["amount"], "balance_after": balance, "created_at": created_at}).encode()


def transfer(headers, raw):
    customer = headers.get("X-Customer-ID")
    if not customer:
        return problem(401, "customer-missing", "send X-Customer-ID")
    # Two Idempotency-Key lines are a list, not one key: get() would read
    # only the first.
    keys = headers.get_all("Idempotency-Key") or []
    m = len(keys) == 1 and KEY.match(keys[0])
    if not m:
        return problem(400, "idempotency-key-malformed", 'send Idempotency-Key: "<key>"')
    t, err = parse_transfer(raw)
    if err:
        return err
    key, fp, conn = m.group(1), fingerprint(raw), db()
    scope = "*" if ARGS.bug == "global-keys" else customer + " POST /transfers"
    state = "completed" if ARGS.bug == "no-in-progress" else "in_progress"
    if ARGS.bug == "memory-cache":
        return cached(scope, key, fp, t)
    if ARGS.bug == "memory-lock":
        with MEMORY:
            lock = KEY_LOCKS.setdefault((scope, key), threading.Lock())
        with lock:
            if conn.execute("SELECT 1 FROM idem_keys WHERE scope = ? AND key = ?", (scope, key)).fetchone() is None:
                time.sleep(0.02)  # the gap between the look and the write, as in check-then-insert
                conn.execute("INSERT OR REPLACE INTO idem_keys VALUES (?,?,?,?,NULL,NULL,NULL,?)",
                             (scope, key, fp, state, time.time()))
                return finish(conn, scope, key, t)
            return replay(conn, scope, key, fp)
    if ARGS.bug == "check-then-insert":
        if conn.execute("SELECT 1 FROM idem_keys WHERE scope = ? AND key = ?", (scope, key)).fetchone() is None:
            # The gap between the look and the write, as a busy server has
            # it: without it two simultaneous retries meet in it only when the
            # scheduler happens to switch threads there, and the planted bug
            # would be found on some runs and missed on others.
            time.sleep(0.02)
            conn.execute("INSERT OR REPLACE INTO idem_keys VALUES (?,?,?,?,NULL,NULL,NULL,?)",
                         (scope, key, fp, state, time.time()))
            return finish(conn, scope, key, t)
        return replay(conn, scope, key, fp)
    try:
        conn.execute("INSERT INTO idem_keys VALUES (?,?,?,?,NULL,NULL,NULL,?)", (scope, key, fp, state, time.time()))
    except sqlite3.IntegrityError:
        return replay(conn, scope, key, fp)
    return finish(conn, scope, key, t)


def cached(scope, key, fp, t):
    """The memory-cache bug: the keys and their answers in this process's dict."""
    with MEMORY:
        entry = KEY_CACHE.get((scope, key))
        if entry is None:
            entry = KEY_CACHE[(scope, key)] = {"fp": fp, "answer": None}
            mine = True
        else:
            mine = False
    if not mine:
        if entry["fp"] != fp:
            return problem(422, "idempotency-key-reused", "this key was used for a different request")
        if entry["answer"] is None:
            return problem(409, "idempotency-key-in-progress", "the first request is still running")
        return entry["answer"] + (True,)
    status, body, _ = execute(db(), t)
    ctype = "application/json" if status == 201 else "application/problem+json"
    entry["answer"] = (status, ctype, body)
    return status, ctype, body


def finish(conn, scope, key, t):
    status, body, tid = execute(conn, t)
    conn.execute("UPDATE idem_keys SET state = 'completed', status = ?, body = ?, transfer_id = ? "
                 "WHERE scope = ? AND key = ?", (status, body, tid, scope, key))
    ctype = "application/json" if status == 201 else "application/problem+json"
    return status, ctype, body


def replay(conn, scope, key, fp):
    row = conn.execute("SELECT fingerprint, state, status, body, transfer_id FROM idem_keys "
                       "WHERE scope = ? AND key = ?", (scope, key)).fetchone()
    if row is None:
        return problem(409, "idempotency-key-in-progress", "retry")
    if ARGS.bug != "key-only" and row[0] != fp:
        return problem(422, "idempotency-key-reused", "this key was used for a different request")
    if row[1] == "in_progress":
        return problem(409, "idempotency-key-in-progress", "the first request is still running")
    if row[2] is None:
        return 200, "application/json", b'{"status":"already_processed"}'
    if ARGS.bug == "recompute" and row[4] is not None:
        tr = conn.execute("SELECT from_id, to_id, amount FROM transfers WHERE id = ?", (row[4],)).fetchone()
        bal = conn.execute("SELECT balance FROM accounts WHERE id = ?", (tr[0],)).fetchone()[0]
        now = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
        return 201, "application/json", render(row[4], {"from": tr[0], "to": tr[1], "amount": tr[2]}, bal, now)
    ctype = "application/json" if row[2] < 400 else "application/problem+json"
    return row[2], ctype, bytes(row[3]), True


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; without this, Nagle's algorithm
    # holds the body until the client's delayed ACK, 40 ms per request.
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def answer(self, status, ctype, body, replayed=False):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        if replayed:
            self.send_header("Idempotent-Replayed", "true")
        if status == 409:
            self.send_header("Retry-After", "1")
        self.end_headers()
        self.wfile.write(body)

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n > 65536:
            return None
        return self.rfile.read(n)

    def do_GET(self):
        if self.path == "/":
            return self.answer(200, "application/json", json.dumps({"retention_seconds": 86400}).encode())
        m = re.match(r"^/accounts/([A-Za-z0-9._-]{1,64})$", self.path)
        row = m and db().execute("SELECT balance FROM accounts WHERE id = ?", (m.group(1),)).fetchone()
        if not row:
            return self.answer(*problem(404, "account-not-found", "unknown account"))
        self.answer(200, "application/json", json.dumps({"id": m.group(1), "balance": row[0]}).encode())

    def do_PUT(self):
        m = re.match(r"^/accounts/([A-Za-z0-9._-]{1,64})$", self.path)
        raw = self.body()
        try:
            bal = json.loads(raw)["balance"]
            assert isinstance(bal, int) and bal >= 0
        except Exception:
            return self.answer(*problem(400, "amount-invalid", "send {\"balance\": n}"))
        if not m:
            return self.answer(*problem(400, "account-id-invalid", "bad account id"))
        db().execute("INSERT INTO accounts VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET balance = excluded.balance",
                     (m.group(1), bal))
        self.answer(200, "application/json", json.dumps({"id": m.group(1), "balance": bal}).encode())

    def do_POST(self):
        if self.path != "/transfers":
            return self.answer(*problem(404, "not-found", "no such path"))
        raw = self.body()
        if raw is None:
            return self.answer(*problem(413, "body-too-large", "too large"))
        self.answer(*transfer(self.headers, raw))


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, default=8090)
    p.add_argument("--db", default="bank.db")
    p.add_argument("--payment-latency-ms", type=int, default=0,
                   help="how long the simulated payment-network call takes")
    p.add_argument("--bug", default="", choices=["", "key-only", "check-then-insert", "raw-bytes",
                                                 "no-in-progress", "recompute", "global-keys",
                                                 "memory-lock", "memory-cache"])
    ARGS = p.parse_args()
    db().executescript(SCHEMA)
    srv = ThreadingHTTPServer(("127.0.0.1", ARGS.port), Handler)
    print("listening on http://127.0.0.1:%d" % srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
