#!/usr/bin/env python3
"""The lab contract as a WSGI app behind an idempotency middleware, standard library only.

Written the way such middleware is usually written: a class that wraps any WSGI app,
reads the Idempotency-Key header, fingerprints the body, keeps its records in memory
under a lock, and replays what the app answered. Its default key is the header alone,
as middleware that knows nothing about customers has it; the bank configures it with a
key function that adds the customer, which is what the lab contract asks.

idemlab's grader tests run it correct and with one realistic mistake each:

    python3 middleware_bank.py --port 0 [--payment-latency-ms N] [--retention S]
        [--key-by-header-alone] [--mismatch-status STATUS] [--store-2xx-only]
        [--hash ordered|raw] [--no-retry-after] [--store-bad-requests]

    --key-by-header-alone  the middleware's default: one key list for every customer
    --mismatch-status S    the status for a used key with another body (422 in the
                           contract; 409 and 417 are seen in the wild)
    --store-2xx-only       only successes are stored; any other answer releases the key
    --hash ordered         json.dumps(json.loads(body)) without sort_keys: whitespace is
                           ignored, the order of the members is not
    --hash raw             the body's bytes
    --retention S          the retention published (and kept), in seconds
    --no-retry-after       409 goes out without Retry-After
    --store-bad-requests   a 400 or 401 from the app is stored under the key like any
                           answer (the middleware's default), so a repaired request
                           under the same key gets it again; the contract answers them
                           before anything is claimed
"""
import argparse
import hashlib
import io
import json
import re
import socketserver
import threading
import time
from datetime import datetime, timezone
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

ACCOUNT = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
SF_STRING = re.compile(r'^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$')
STATUS_TEXT = {200: "OK", 201: "Created", 400: "Bad Request", 401: "Unauthorized",
               402: "Payment Required", 404: "Not Found", 405: "Method Not Allowed",
               409: "Conflict", 413: "Content Too Large", 417: "Expectation Failed",
               422: "Unprocessable Content", 500: "Internal Server Error"}


def status_line(code):
    return "%d %s" % (code, STATUS_TEXT.get(code, "Unknown"))


def problem(code, slug, detail):
    body = json.dumps({"type": "/problems/" + slug, "title": slug.replace("-", " "),
                       "status": code, "detail": detail}).encode()
    return code, [("Content-Type", "application/problem+json")], body


def header_key(environ):
    return environ.get("HTTP_IDEMPOTENCY_KEY")


class IdempotencyMiddleware:
    """Makes POST requests that carry Idempotency-Key safe to retry.

    key_func(environ) names the record (the header alone by default); the first
    request under a name is claimed in_progress, runs, and its answer is stored;
    a retry gets the stored answer, a request still running gets 409, one with
    another body gets mismatch_status. Records live retention seconds. Safe for
    concurrent use: the records are read and written under one lock.
    """

    def __init__(self, app, key_func=header_key, retention=86400, mismatch_status=422,
                 store_2xx_only=False, hash_mode="canonical", retry_after=True, store_bad_requests=True):
        self.app, self.key_func, self.retention = app, key_func, retention
        self.mismatch_status, self.store_2xx_only = mismatch_status, store_2xx_only
        self.hash_mode, self.retry_after = hash_mode, retry_after
        self.store_bad_requests = store_bad_requests
        self.records, self.lock = {}, threading.Lock()

    def fingerprint(self, raw):
        if self.hash_mode == "raw":
            text = raw
        else:
            try:
                parsed = json.loads(raw)
            except ValueError:
                return None
            if self.hash_mode == "ordered":
                text = json.dumps(parsed, separators=(",", ":")).encode()
            else:
                text = json.dumps(parsed, sort_keys=True, separators=(",", ":")).encode()
        return hashlib.sha256(b"POST\n/transfers\n" + text).hexdigest()

    def answer(self, start_response, code, headers, body):
        headers = list(headers) + [("Content-Length", str(len(body)))]
        if code == 409 and self.retry_after:
            headers.append(("Retry-After", "1"))
        start_response(status_line(code), headers)
        return [body]

    def __call__(self, environ, start_response):
        if environ["REQUEST_METHOD"] != "POST":
            return self.app(environ, start_response)
        raw = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        environ["wsgi.input"] = io.BytesIO(raw)  # the app reads the body again
        value = header_key(environ)
        if value is None:
            return self.app(environ, start_response)  # the app decides what a keyless request gets
        m = SF_STRING.match(value)
        if not m or not 1 <= len(m.group(1)) <= 255:
            return self.answer(start_response, *problem(400, "idempotency-key-malformed",
                                                          'send Idempotency-Key: "<key>"'))
        name, fp = self.key_func(environ), self.fingerprint(raw)
        now = time.time()
        with self.lock:
            rec = self.records.get(name)
            if rec is not None and self.retention and rec["created"] + self.retention <= now:
                rec = None
            if rec is not None:
                if rec["fp"] != fp:
                    return self.answer(start_response, *problem(self.mismatch_status, "idempotency-key-reused",
                                                                  "this key was used for another request"))
                if rec["state"] == "in_progress":
                    return self.answer(start_response, *problem(409, "idempotency-key-in-progress",
                                                                  "the first request is still running"))
                code, headers, body = rec["answer"]
                return self.answer(start_response, code, headers + [("Idempotent-Replayed", "true")], body)
            self.records[name] = {"fp": fp, "state": "in_progress", "created": now}
        captured = {}

        def capture(status, headers, exc_info=None):
            captured["code"], captured["headers"] = int(status.split()[0]), headers
            return lambda data: None

        try:
            body = b"".join(self.app(environ, capture))
        except Exception:
            with self.lock:
                self.records.pop(name, None)  # an exception is no answer: release the claim
            raise
        code = captured["code"]
        headers = [(k, v) for k, v in captured["headers"] if k.lower() == "content-type"]
        with self.lock:
            if self.store_2xx_only and not 200 <= code < 300:
                self.records.pop(name, None)
            elif not self.store_bad_requests and code in (400, 401):
                # The app refused the request itself (its body, its customer):
                # nothing was decided, so the repaired request is a new one.
                self.records.pop(name, None)
            else:
                self.records[name].update(state="completed", answer=(code, headers, body))
        return self.answer(start_response, code, headers, body)


class Bank:
    """The bank itself, a plain WSGI app that knows nothing of keys."""

    def __init__(self, retention, latency_ms):
        self.retention, self.latency_ms = retention, latency_ms
        self.accounts, self.lock, self.count = {}, threading.Lock(), 0

    def __call__(self, environ, start_response):
        code, headers, body = self.route(environ)
        start_response(status_line(code), headers + [("Content-Length", str(len(body)))])
        return [body]

    def route(self, environ):
        method, path = environ["REQUEST_METHOD"], environ.get("PATH_INFO", "")
        if method == "GET" and path == "/":
            return 200, [("Content-Type", "application/json")], json.dumps({"retention_seconds": self.retention}).encode()
        m = re.match(r"^/accounts/([^/]+)$", path)
        if m:
            if not ACCOUNT.match(m.group(1)):
                return problem(400, "account-id-invalid", "bad account id")
            return self.account(method, m.group(1), environ)
        if path == "/transfers" and method == "POST":
            return self.transfer(environ)
        return problem(404, "not-found", "no such path")

    def account(self, method, acct, environ):
        if method == "GET":
            with self.lock:
                bal = self.accounts.get(acct)
            if bal is None:
                return problem(404, "account-not-found", "unknown account")
            return 200, [("Content-Type", "application/json")], json.dumps({"id": acct, "balance": bal}).encode()
        if method == "PUT":
            raw = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
            try:
                bal = json.loads(raw)["balance"]
                ok = isinstance(bal, int) and not isinstance(bal, bool) and bal >= 0
            except (ValueError, KeyError, TypeError):
                ok = False
            if not ok:
                return problem(400, "amount-invalid", 'send {"balance": n}')
            with self.lock:
                self.accounts[acct] = bal
            return 200, [("Content-Type", "application/json")], json.dumps({"id": acct, "balance": bal}).encode()
        return problem(405, "method-not-allowed", "GET or PUT")

    def transfer(self, environ):
        if not environ.get("HTTP_X_CUSTOMER_ID"):
            return problem(401, "customer-missing", "send X-Customer-ID")
        if environ.get("HTTP_IDEMPOTENCY_KEY") is None:
            return problem(400, "idempotency-key-missing", "send Idempotency-Key")
        try:
            t = json.loads(environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0)))
        except ValueError:
            return problem(400, "body-invalid", "the body is not valid JSON")
        if not isinstance(t, dict) or set(t) != {"from", "to", "amount"}:
            return problem(400, "field-invalid", "send exactly from, to and amount")
        a = t["amount"]
        if not isinstance(a, int) or isinstance(a, bool) or a <= 0:
            return problem(400, "amount-invalid", "amount must be a positive whole number")
        if not all(isinstance(t[f], str) and ACCOUNT.match(t[f]) for f in ("from", "to")):
            return problem(400, "account-id-invalid", "from and to must be account ids")
        if t["from"] == t["to"]:
            return problem(400, "same-account", "from and to must differ")
        time.sleep(self.latency_ms / 1000)  # the payment network
        with self.lock:
            if t["from"] not in self.accounts or t["to"] not in self.accounts:
                return problem(404, "account-not-found", "unknown account; nothing moved")
            bal = self.accounts[t["from"]]
            if bal < a:
                return problem(402, "insufficient-funds", "the balance is %d won; nothing moved" % bal)
            self.accounts[t["from"]] = bal - a
            self.accounts[t["to"]] += a
            self.count += 1
            tid = self.count
        now = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
        body = json.dumps({"transfer_id": "tr_%06d" % tid, "from": t["from"], "to": t["to"], "amount": a,
                           "balance_after": bal - a, "created_at": now}).encode()
        return 201, [("Content-Type", "application/json")], body


def customer_and_key(environ):
    return (environ.get("HTTP_X_CUSTOMER_ID", ""), "POST /transfers", header_key(environ))


class ThreadingServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True
    # socketserver listens with a backlog of 5: sixteen clients connecting at
    # once overflow it, and the dropped connections wait a second for their
    # SYN to be sent again. A production server listens with hundreds.
    request_queue_size = 128

    def handle_error(self, request, client_address):
        pass  # the grader cuts connections on purpose


class QuietHandler(WSGIRequestHandler):
    def log_message(self, *args):
        pass


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, default=8092)
    p.add_argument("--payment-latency-ms", type=int, default=20)
    p.add_argument("--retention", type=int, default=86400)
    p.add_argument("--key-by-header-alone", action="store_true")
    p.add_argument("--mismatch-status", type=int, default=422)
    p.add_argument("--store-2xx-only", action="store_true")
    p.add_argument("--hash", default="canonical", choices=["canonical", "ordered", "raw"])
    p.add_argument("--no-retry-after", action="store_true")
    p.add_argument("--store-bad-requests", action="store_true")
    args = p.parse_args()
    app = IdempotencyMiddleware(
        Bank(args.retention, args.payment_latency_ms),
        key_func=header_key if args.key_by_header_alone else customer_and_key,
        retention=args.retention, mismatch_status=args.mismatch_status,
        store_2xx_only=args.store_2xx_only, hash_mode=args.hash, retry_after=not args.no_retry_after,
        store_bad_requests=args.store_bad_requests)
    srv = make_server("127.0.0.1", args.port, app, server_class=ThreadingServer, handler_class=QuietHandler)
    print("listening on http://127.0.0.1:%d" % srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
