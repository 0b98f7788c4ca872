// replay: the fifth rung. in-progress, plus the answer: the status, its
// Content-Type and the body are stored on the key in the transaction that
// moves the money, and a retry gets them back byte for byte, with
// Idempotent-Replayed: true. A 402 or 404 is stored and replayed like a
// 201: the client may already have shown it.
// What it still gets wrong: keys are one namespace for every customer (a
// customer who numbers orders like another is refused 422, or handed the
// other's answer) and kept five minutes, less than the clients' hour of
// retries. The next rung (scoped) fixes both.

const schema = `
CREATE TABLE idem_keys (
  idem_key    TEXT PRIMARY KEY,
  fingerprint TEXT NOT NULL,     -- SHA-256 of the route and the canonical body
  state       TEXT NOT NULL,     -- 'in_progress' or 'completed'
  owner       TEXT NOT NULL,     -- the attempt that holds the claim
  status      INTEGER,           -- the stored answer, once completed
  type        TEXT,              -- its Content-Type
  body        TEXT,
  created_at  INTEGER NOT NULL   -- Unix ms, for the retention
);`;

const retentionSeconds = 300;

async function transfer(req, db, pay) {
  // Check the request before anything is stored (401, 400 for the key, 415, 400 for the body).
  if (req.customer === null) return lab.problem(401, 'X-Customer-ID header is required');
  const key = lab.parseKey(req.key);
  if (key === null) return lab.problem(400, 'Idempotency-Key is not a valid key', 'send one string in double quotes: Idempotency-Key: "order-1"');
  if (req.contentType !== null && !/^application\/([\w.-]+\+)?json\s*(;|$)/i.test(req.contentType)) return lab.problem(415, 'Content-Type must be application/json');
  const t = lab.parseTransfer(req.body);
  if (t === null) return lab.problem(400, 'The body is not a transfer', 'send {"from": "...", "to": "...", "amount": N}');
  const fingerprint = lab.sha256('POST /transfers\n' + lab.canonical(req.body));

  // Claim the key with one INSERT, as in_progress, owned by this attempt.
  try {
    await db.run(`INSERT INTO idem_keys (idem_key, fingerprint, state, owner, created_at)
                  VALUES (?, ?, 'in_progress', ?, ?)`, key, fingerprint, req.attempt, req.now);
  } catch (e) {
    if (e.name !== 'ConstraintError') throw e;
    // An expired key is taken over in one statement, never read-then-delete.
    const took = await db.run(`UPDATE idem_keys SET fingerprint = ?, state = 'in_progress', owner = ?, created_at = ?,
                                      status = NULL, type = NULL, body = NULL
                                WHERE idem_key = ? AND created_at < ?`,
      fingerprint, req.attempt, req.now, key, req.now - retentionSeconds * 1000);
    if (took.changes === 0) {
      const row = await db.get('SELECT fingerprint, state, status, type, body FROM idem_keys WHERE idem_key = ?', key);
      if (row.fingerprint !== fingerprint) return lab.problem(422, 'This key was used for a different request', 'use a new key for a new request');
      if (row.state === 'in_progress') return lab.problem(409, 'A request with this key is still being processed', 'retry in a second', { 'Retry-After': '1' });
      // NEW: the first answer, byte for byte.
      return { status: row.status, headers: { 'Content-Type': row.type, 'Idempotent-Replayed': 'true' }, body: row.body };
    }
  }

  // Move the money and complete the key (complete, below). An exception
  // is not an answer: the claim is released, so that the client's retry
  // starts afresh instead of getting 409 for ever.
  try {
    return await complete(req, db, pay, t, key);
  } catch (e) {
    await db.rollback().catch(() => {}); // the transaction, if one is open
    await db.run(`DELETE FROM idem_keys WHERE idem_key = ? AND owner = ? AND state = 'in_progress'`, key, req.attempt);
    throw e;
  }
}

// complete moves the money, and completes the key with the answer in the
// same transaction. A refusal (404, 402) is an answer too: stored, replayed.
async function complete(req, db, pay, t, key) {
  let answer;
  const from = await db.get('SELECT balance FROM accounts WHERE id = ?', t.from);
  const to = await db.get('SELECT id FROM accounts WHERE id = ?', t.to);
  if (!from || !to) answer = lab.problem(404, 'Account not found', `account "${from ? t.to : t.from}" does not exist; nothing moved`);
  else if (from.balance < t.amount) answer = lab.problem(402, 'Insufficient funds', `the balance is ${from.balance} won; nothing moved`);
  else await pay({ from: t.from, to: t.to, amount: t.amount });

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
  // Completed, only if the claim is still ours, NEW: with the answer.
  const done = await db.run(`UPDATE idem_keys SET state = 'completed', status = ?, type = ?, body = ?
                              WHERE idem_key = ? AND owner = ? AND state = 'in_progress'`,
    answer.status, answer.headers['Content-Type'], answer.body, key, req.attempt);
  if (done.changes === 0) {
    // Someone took the claim over: our transfer must not count.
    await db.rollback();
    return lab.problem(409, 'Another attempt took this key over', 'retry to get its answer', { 'Retry-After': '1' });
  }
  await db.commit();
  return answer;
}
