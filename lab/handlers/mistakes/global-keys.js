// mistakes/global-keys: scoped, with one mistake: the key table has no
// customer, so every customer's keys share one namespace.
// What breaks: a customer who uses a key string another customer used
// (both number their orders "order-1") is refused 422, or handed the other
// customer's answer (rule 5, and rule 4: a success with no transfer of
// theirs). Fix: the customer in the key table's primary key and in every
// WHERE.

const schema = `
CREATE TABLE idem_keys (
  endpoint    TEXT NOT NULL,
  idem_key    TEXT NOT NULL,
  fingerprint TEXT NOT NULL,     -- SHA-256 of the route and the canonical body
  state       TEXT NOT NULL,     -- 'in_progress' or 'completed'
  owner       TEXT NOT NULL,     -- the attempt that holds the claim
  claimed_at  INTEGER NOT NULL,  -- Unix ms, for the lease
  status      INTEGER,           -- the stored answer, once completed
  type        TEXT,              -- its Content-Type
  body        TEXT,
  created_at  INTEGER NOT NULL,  -- Unix ms, for the retention
  PRIMARY KEY (endpoint, idem_key)                 -- THE MISTAKE: no customer
);`;

const retentionSeconds = 86400;

const ENDPOINT = 'POST /transfers';
const LEASE_SECONDS = 30; // longer than any transfer takes

async function transfer(req, db, pay) {
  // 1. Check the request before anything is stored (401, 400 for the key, 415, 400 for the body).
  if (req.customer === null) return lab.problem(401, 'X-Customer-ID header is required');
  const key = lab.parseKey(req.key);
  if (key === null) return lab.problem(400, 'Idempotency-Key is not a valid key', 'send one string in double quotes: Idempotency-Key: "order-1"');
  if (req.contentType !== null && !/^application\/([\w.-]+\+)?json\s*(;|$)/i.test(req.contentType)) return lab.problem(415, 'Content-Type must be application/json');
  const t = lab.parseTransfer(req.body);
  if (t === null) return lab.problem(400, 'The body is not a transfer', 'send {"from": "...", "to": "...", "amount": N}');
  const fingerprint = lab.sha256(ENDPOINT + '\n' + lab.canonical(req.body));
  const scope = [ENDPOINT, key];

  // 2. Claim the key: one INSERT. The primary key decides; a constraint
  //    error means the key exists.
  try {
    await db.run(`INSERT INTO idem_keys (endpoint, idem_key, fingerprint, state, owner, claimed_at, created_at)
                  VALUES (?, ?, ?, 'in_progress', ?, ?, ?)`, ...scope, fingerprint, req.attempt, req.now, req.now);
  } catch (e) {
    if (e.name !== 'ConstraintError') throw e;
    // An expired key is taken over in one statement, never read-then-delete.
    let took = await db.run(`UPDATE idem_keys SET fingerprint = ?, state = 'in_progress', owner = ?, claimed_at = ?, created_at = ?,
                                    status = NULL, type = NULL, body = NULL
                              WHERE endpoint = ? AND idem_key = ? AND created_at < ?`,
      fingerprint, req.attempt, req.now, req.now, ...scope, req.now - retentionSeconds * 1000);
    // So is a claim of the same request whose lease ran out: its attempt died.
    if (took.changes === 0) {
      took = await db.run(`UPDATE idem_keys SET owner = ?, claimed_at = ?
                            WHERE endpoint = ? AND idem_key = ? AND state = 'in_progress'
                              AND fingerprint = ? AND claimed_at < ?`,
        req.attempt, req.now, ...scope, fingerprint, req.now - LEASE_SECONDS * 1000);
    }
    if (took.changes === 0) {
      const row = await db.get(`SELECT fingerprint, state, status, type, body FROM idem_keys
                                 WHERE endpoint = ? AND idem_key = ?`, ...scope);
      if (row.fingerprint !== fingerprint) return lab.problem(422, 'This key was used for a different request', 'use a new key for a new request');
      if (row.state === 'in_progress') return lab.problem(409, 'A request with this key is still being processed', 'retry in a second', { 'Retry-After': '1' });
      // The first answer, byte for byte.
      return { status: row.status, headers: { 'Content-Type': row.type, 'Idempotent-Replayed': 'true' }, body: row.body };
    }
  }

  // 3. Move the money and complete the key (complete, below). An exception
  //    is not an answer: the claim is released, so that the client's retry
  //    starts afresh instead of getting 409 for ever.
  try {
    return await complete(req, db, pay, t, key, scope);
  } catch (e) {
    await db.rollback().catch(() => {}); // the transaction, if one is open
    await db.run(`DELETE FROM idem_keys WHERE endpoint = ? AND idem_key = ? AND owner = ? AND state = 'in_progress'`, ...scope, req.attempt);
    throw e;
  }
}

// complete moves the money, and completes the key with the answer in the
// same transaction. A refusal (404, 402) is an answer too: stored, replayed.
async function complete(req, db, pay, t, key, scope) {
  let answer;
  const from = await db.get('SELECT balance FROM accounts WHERE id = ?', t.from);
  const to = await db.get('SELECT id FROM accounts WHERE id = ?', t.to);
  if (!from || !to) answer = lab.problem(404, 'Account not found', `account "${from ? t.to : t.from}" does not exist; nothing moved`);
  else if (from.balance < t.amount) answer = lab.problem(402, 'Insufficient funds', `the balance is ${from.balance} won; nothing moved`);
  else await pay({ from: t.from, to: t.to, amount: t.amount, key: JSON.stringify([req.customer, key]) });

  await db.begin();
  if (!answer) {
    const debit = await db.run('UPDATE accounts SET balance = balance - ? WHERE id = ? AND balance >= ?', t.amount, t.from, t.amount);
    if (debit.changes === 0) {
      answer = lab.problem(402, 'Insufficient funds', 'the balance changed meanwhile; nothing moved');
    } else {
      await db.run('UPDATE accounts SET balance = balance + ? WHERE id = ?', t.amount, t.to);
      const tr = await db.run('INSERT INTO transfers (from_id, to_id, amount, created_at) VALUES (?, ?, ?, ?)', t.from, t.to, t.amount, req.now);
      const after = await db.get('SELECT balance FROM accounts WHERE id = ?', t.from);
      answer = lab.json(201, { transfer_id: 'tr_' + tr.lastInsertRowid, from: t.from, to: t.to, amount: t.amount,
          balance_after: after.balance, created_at: new Date(req.now).toISOString() });
    }
  }
  const done = await db.run(`UPDATE idem_keys SET state = 'completed', status = ?, type = ?, body = ?
                              WHERE endpoint = ? AND idem_key = ? AND owner = ? AND state = 'in_progress'`,
    answer.status, answer.headers['Content-Type'], answer.body, ...scope, req.attempt);
  if (done.changes === 0) {
    // Someone took the claim over: our transfer must not count.
    await db.rollback();
    return lab.problem(409, 'Another attempt took this key over', 'retry to get its answer', { 'Retry-After': '1' });
  }
  await db.commit();
  return answer;
}
