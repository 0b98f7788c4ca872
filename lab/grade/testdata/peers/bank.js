#!/usr/bin/env node
// The lab contract (docs/lab-contract.md) in Node.js with nothing but its
// own http and crypto modules, written the way a Node developer writes an
// idempotent endpoint: in-memory Maps, the key claimed synchronously (one
// event loop, so the check and the set cannot be split by another request),
// the payment awaited, the answer stored under the key.
//
// idemlab's grader tests run it correct and with one realistic mistake each:
//
//   node bank.js --port 0 [--payment-latency-ms N] [--retention S]
//                [--global-keys STATUS] [--store-2xx-only] [--hash ordered|raw]
//                [--no-retry-after] [--key-limit-counts-quotes] [--rerender-errors]
//
//   --global-keys STATUS      keys live in one namespace for all customers; a key
//                             another customer used is refused with STATUS (417, 409, 422)
//   --store-2xx-only          only successes are stored; a 402 or 404 releases the key
//   --hash ordered            the fingerprint is JSON.stringify(JSON.parse(body)):
//                             whitespace is ignored, the order of the members is not
//   --hash raw                the fingerprint is the body's bytes
//   --retention S             the retention published (and kept), in seconds
//   --no-retry-after          409 is sent without Retry-After
//   --key-limit-counts-quotes the 255-character limit is applied to the header value,
//                             quotes included
//   --rerender-errors         a stored refusal is rendered again on replay, with a new
//                             problem instance id
'use strict';

const http = require('http');
const crypto = require('crypto');

const opts = {
  port: 8091, paymentLatencyMs: 20, retention: 86400, globalKeys: 0, store2xxOnly: false,
  hash: 'canonical', retryAfter: true, keyLimitCountsQuotes: false, rerenderErrors: false,
};
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const next = () => argv[++i];
  switch (a) {
    case '--port': opts.port = Number(next()); break;
    case '--payment-latency-ms': opts.paymentLatencyMs = Number(next()); break;
    case '--retention': opts.retention = Number(next()); break;
    case '--global-keys': opts.globalKeys = Number(next()); break;
    case '--store-2xx-only': opts.store2xxOnly = true; break;
    case '--hash': opts.hash = next(); break;
    case '--no-retry-after': opts.retryAfter = false; break;
    case '--key-limit-counts-quotes': opts.keyLimitCountsQuotes = true; break;
    case '--rerender-errors': opts.rerenderErrors = true; break;
    default:
      process.stderr.write(`bank.js: unknown flag ${a}\n`);
      process.exit(2);
  }
}

const ACCOUNT = /^[A-Za-z0-9._-]{1,64}$/;
// An RFC 8941 sf-string: printable ASCII, with \" and \\ the only escapes.
const SF_STRING = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/;

const accounts = new Map(); // id → balance
const keys = new Map(); // scope → {customer, fp, state, status, body, createdAt}
let transfers = 0;

function problem(status, slug, detail) {
  return {
    status,
    type: 'application/problem+json',
    body: JSON.stringify({ type: '/problems/' + slug, title: slug.replace(/-/g, ' '), status, detail }),
  };
}

function send(res, answer, extra = {}) {
  const headers = { 'Content-Type': answer.type || 'application/json', ...extra };
  if (answer.status === 409 && opts.retryAfter) headers['Retry-After'] = '1';
  res.writeHead(answer.status, headers);
  res.end(answer.body);
}

// canonical writes a parsed JSON value with object members sorted by name
// and no whitespace: close enough to RFC 8785 for the lab's bodies.
function canonical(v) {
  if (Array.isArray(v)) return '[' + v.map(canonical).join(',') + ']';
  if (v && typeof v === 'object') {
    return '{' + Object.keys(v).sort().map((k) => JSON.stringify(k) + ':' + canonical(v[k])).join(',') + '}';
  }
  return JSON.stringify(v);
}

function fingerprint(raw, parsed) {
  let text;
  if (opts.hash === 'raw') text = raw;
  else if (opts.hash === 'ordered') text = JSON.stringify(parsed);
  else text = canonical(parsed);
  return crypto.createHash('sha256').update('POST /transfers\n' + text).digest('hex');
}

function parseKey(values) {
  if (!values || values.length !== 1) return null;
  const v = values[0];
  if (opts.keyLimitCountsQuotes && v.length > 255) return null;
  const m = SF_STRING.exec(v);
  if (!m) return null;
  const key = m[1].replace(/\\(["\\])/g, '$1');
  return key.length >= 1 && key.length <= 255 ? key : null;
}

function parseTransfer(raw) {
  let t;
  try {
    t = JSON.parse(raw);
  } catch {
    return [null, problem(400, 'body-invalid', 'the body is not valid JSON')];
  }
  if (!t || typeof t !== 'object' || Array.isArray(t) || Object.keys(t).sort().join() !== 'amount,from,to') {
    return [null, problem(400, 'field-invalid', 'send exactly from, to and amount')];
  }
  if (!Number.isSafeInteger(t.amount) || t.amount <= 0) {
    return [null, problem(400, 'amount-invalid', 'amount must be a positive whole number')];
  }
  if (typeof t.from !== 'string' || !ACCOUNT.test(t.from) || typeof t.to !== 'string' || !ACCOUNT.test(t.to)) {
    return [null, problem(400, 'account-id-invalid', 'from and to must be account ids')];
  }
  if (t.from === t.to) return [null, problem(400, 'same-account', 'from and to must differ')];
  return [t, null];
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// pay calls the payment network, then moves the money: synchronously, so
// no other request sees half of it.
async function pay(t) {
  if (opts.paymentLatencyMs > 0) await sleep(opts.paymentLatencyMs);
  if (!accounts.has(t.from) || !accounts.has(t.to)) {
    return problem(404, 'account-not-found', 'unknown account; nothing moved');
  }
  const balance = accounts.get(t.from);
  if (balance < t.amount) {
    return problem(402, 'insufficient-funds', `the balance is ${balance} won; nothing moved`);
  }
  accounts.set(t.from, balance - t.amount);
  accounts.set(t.to, accounts.get(t.to) + t.amount);
  transfers++;
  return {
    status: 201,
    body: JSON.stringify({
      transfer_id: 'tr_' + String(transfers).padStart(6, '0'), from: t.from, to: t.to, amount: t.amount,
      balance_after: balance - t.amount, created_at: new Date().toISOString(),
    }),
  };
}

function replay(rec) {
  if (opts.rerenderErrors && rec.status >= 400) {
    // Rendered again through the error handler: the same problem, a new
    // instance id, other bytes.
    const p = JSON.parse(rec.body);
    p.instance = '/errors/' + crypto.randomUUID();
    return { status: rec.status, type: 'application/problem+json', body: JSON.stringify(p) };
  }
  return { status: rec.status, type: rec.type, body: rec.body };
}

async function transfer(req, raw) {
  const customer = req.headers['x-customer-id'];
  if (!customer) return [problem(401, 'customer-missing', 'send X-Customer-ID')];
  const key = parseKey(req.headersDistinct['idempotency-key']);
  if (key === null) return [problem(400, 'idempotency-key-malformed', 'send Idempotency-Key: "<1 to 255 printable characters>"')];
  const [t, err] = parseTransfer(raw);
  if (err) return [err];
  const fp = fingerprint(raw, t);
  const scope = opts.globalKeys ? key : customer + '\n' + key;
  let rec = keys.get(scope);
  if (rec && opts.retention > 0 && rec.createdAt + opts.retention * 1000 <= Date.now()) {
    keys.delete(scope);
    rec = undefined;
  }
  if (rec) {
    if (opts.globalKeys && rec.customer !== customer) {
      return [problem(opts.globalKeys, 'idempotency-key-taken', 'this key is already in use')];
    }
    if (rec.fp !== fp) return [problem(422, 'idempotency-key-reused', 'this key was used for a different request')];
    if (rec.state === 'in_progress') return [problem(409, 'idempotency-key-in-progress', 'the first request is still running')];
    return [replay(rec), { 'Idempotent-Replayed': 'true' }];
  }
  // Claimed before the first await: no other request runs in between.
  rec = { customer, fp, state: 'in_progress', createdAt: Date.now() };
  keys.set(scope, rec);
  let answer;
  try {
    answer = await pay(t);
  } catch (e) {
    keys.delete(scope); // an exception, not an answer: release the claim
    throw e;
  }
  if (opts.store2xxOnly && (answer.status < 200 || answer.status > 299)) {
    keys.delete(scope);
  } else {
    Object.assign(rec, { state: 'completed', status: answer.status, type: answer.type, body: answer.body });
  }
  return [answer];
}

const server = http.createServer((req, res) => {
  const chunks = [];
  let size = 0;
  req.on('data', (c) => {
    size += c.length;
    if (size <= 65536) chunks.push(c);
  });
  req.on('end', async () => {
    try {
      const raw = Buffer.concat(chunks).toString('utf8');
      const path = req.url;
      if (req.method === 'GET' && path === '/') {
        return send(res, { status: 200, body: JSON.stringify({ retention_seconds: opts.retention }) });
      }
      const m = /^\/accounts\/([^/]+)$/.exec(path);
      if (m) {
        const id = decodeURIComponent(m[1]);
        if (!ACCOUNT.test(id)) return send(res, problem(400, 'account-id-invalid', 'bad account id'));
        if (req.method === 'GET') {
          if (!accounts.has(id)) return send(res, problem(404, 'account-not-found', 'unknown account'));
          return send(res, { status: 200, body: JSON.stringify({ id, balance: accounts.get(id) }) });
        }
        if (req.method === 'PUT') {
          let b;
          try {
            b = JSON.parse(raw).balance;
          } catch {
            b = undefined;
          }
          if (!Number.isSafeInteger(b) || b < 0) return send(res, problem(400, 'amount-invalid', 'send {"balance": n}'));
          accounts.set(id, b);
          return send(res, { status: 200, body: JSON.stringify({ id, balance: b }) });
        }
        return send(res, problem(405, 'method-not-allowed', 'GET or PUT'));
      }
      if (path === '/transfers' && req.method === 'POST') {
        if (size > 65536) return send(res, problem(413, 'body-too-large', 'too large'));
        const [answer, extra] = await transfer(req, raw);
        return send(res, answer, extra);
      }
      return send(res, problem(404, 'not-found', 'no such path'));
    } catch (e) {
      return send(res, problem(500, 'internal', 'something went wrong'));
    }
  });
});
server.on('clientError', (err, socket) => socket.destroy());
server.listen(opts.port, '127.0.0.1', () => {
  process.stdout.write(`listening on http://127.0.0.1:${server.address().port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
