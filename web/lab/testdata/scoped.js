// scoped: the claim is one INSERT whose primary key is the scope
// (customer, endpoint, key); SQLite's constraint error is the verdict. A
// fingerprint of the canonical request tells a retry from a different
// request; the claim is committed before the payment, which carries a key
// of its own; the transfer, the money and the stored answer commit
// together; a replay is the stored answer, byte for byte; keys are kept
// for a published day, longer than the clients' hour of retries.
const schema = `
CREATE TABLE idem_keys (
  customer    TEXT NOT NULL,
  endpoint    TEXT NOT NULL,
  idem_key    TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  state       TEXT NOT NULL CHECK (state IN ('in_progress', 'completed')),
  status      INTEGER,
  headers     TEXT,
  body        TEXT,
  created_at  INTEGER NOT NULL,
  PRIMARY KEY (customer, endpoint, idem_key)
);`;

const retentionSeconds = 86400;

const ENDPOINT = 'POST /transfers';

async function transfer(req, db, pay) {
  if (!req.customer) return lab.problem(401, 'Missing X-Customer-ID');
  const key = lab.parseKey(req.key);
  if (!key) return lab.problem(400, 'Invalid Idempotency-Key', 'one quoted string of 1 to 255 characters');
  const t = lab.parseTransfer(req.body);
  if (!t) return lab.problem(400, 'Invalid transfer');
  const fingerprint = lab.sha256('POST\n/transfers\n' + lab.canonical(req.body));

  // Keys older than the retention are forgotten.
  await db.run('DELETE FROM idem_keys WHERE created_at < ?', req.now - retentionSeconds * 1000);
  try {
    await db.run(
      "INSERT INTO idem_keys (customer, endpoint, idem_key, fingerprint, state, created_at) VALUES (?, ?, ?, ?, 'in_progress', ?)",
      req.customer,
      ENDPOINT,
      key,
      fingerprint,
      req.now,
    );
  } catch (e) {
    if (e.name !== 'ConstraintError') throw e;
    const row = await db.get(
      'SELECT fingerprint, state, status, headers, body FROM idem_keys WHERE customer = ? AND endpoint = ? AND idem_key = ?',
      req.customer,
      ENDPOINT,
      key,
    );
    if (!row || row.state !== 'completed') {
      return lab.problem(409, 'A request with this key is in progress', undefined, { 'Retry-After': '1' });
    }
    if (row.fingerprint !== fingerprint) return lab.problem(422, 'This key was used for another request');
    return { status: row.status, headers: Object.assign(JSON.parse(row.headers), { 'Idempotent-Replayed': 'true' }), body: row.body };
  }

  const from = await db.get('SELECT balance FROM accounts WHERE id = ?', t.from);
  const to = await db.get('SELECT id FROM accounts WHERE id = ?', t.to);
  if (!from || !to || from.balance < t.amount) {
    const answer = !from || !to ? lab.problem(404, 'Unknown account') : lab.problem(402, 'Insufficient funds');
    await complete(db, req, key, answer);
    return answer;
  }
  await pay({ from: t.from, to: t.to, amount: t.amount, key: JSON.stringify([req.customer, key]) });
  await db.begin();
  await db.run('UPDATE accounts SET balance = balance - ? WHERE id = ?', t.amount, t.from);
  await db.run('UPDATE accounts SET balance = balance + ? WHERE id = ?', t.amount, t.to);
  const ins = await db.run(
    'INSERT INTO transfers (from_id, to_id, amount, created_at) VALUES (?, ?, ?, ?)',
    t.from,
    t.to,
    t.amount,
    req.now,
  );
  const after = await db.get('SELECT balance FROM accounts WHERE id = ?', t.from);
  const answer = lab.json(201, {
    transfer_id: 'tr_' + ins.lastInsertRowid,
    from: t.from,
    to: t.to,
    amount: t.amount,
    balance_after: after.balance,
    created_at: req.now,
  });
  await complete(db, req, key, answer);
  await db.commit();
  return answer;
}

// complete stores the answer with the key: inside the transfer's own
// transaction when one is open, so that the two commit together.
async function complete(db, req, key, answer) {
  await db.run(
    "UPDATE idem_keys SET state = 'completed', status = ?, headers = ?, body = ? WHERE customer = ? AND endpoint = ? AND idem_key = ?",
    answer.status,
    JSON.stringify(answer.headers),
    answer.body,
    req.customer,
    ENDPOINT,
    key,
  );
}
