// fingerprint: the third rung. unique, plus the request's fingerprint
// beside its key: the SHA-256 of the route and the body's canonical JSON
// (members sorted, no spaces), so a re-spaced or reordered retry is the
// same request and a corrected amount is not. A different request under a
// used key gets 422 and moves nothing.
// What it still gets wrong: the key means "done" from the moment it is
// written, so a retry gets a generic "already processed", even while the
// first attempt is still paying. Keys are still global and kept five
// minutes. The next rung (in-progress) says when the work is not done yet.

const schema = `
CREATE TABLE idem_keys (
  idem_key    TEXT PRIMARY KEY,
  fingerprint TEXT NOT NULL,     -- SHA-256 of the route and the canonical body
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
  // NEW: what the request is, however the client spaced or ordered it.
  const fingerprint = lab.sha256('POST /transfers\n' + lab.canonical(req.body));

  // Claim the key with one INSERT. The primary key decides; a constraint
  // error means the key was used.
  try {
    await db.run('INSERT INTO idem_keys (idem_key, fingerprint, created_at) VALUES (?, ?, ?)', key, fingerprint, req.now);
  } catch (e) {
    if (e.name !== 'ConstraintError') throw e;
    // An expired key is taken over in one statement, never read-then-delete.
    const took = await db.run('UPDATE idem_keys SET fingerprint = ?, created_at = ? WHERE idem_key = ? AND created_at < ?',
      fingerprint, req.now, key, req.now - retentionSeconds * 1000);
    if (took.changes === 0) {
      // NEW: a different request under a used key is refused.
      const row = await db.get('SELECT fingerprint FROM idem_keys WHERE idem_key = ?', key);
      if (row.fingerprint !== fingerprint) return lab.problem(422, 'This key was used for a different request', 'use a new key for a new request');
      return lab.json(200, { status: 'already_processed', detail: 'a request with this key was already processed' });
    }
  }

  // A transfer that cannot happen is answered without calling the network.
  const from = await db.get('SELECT balance FROM accounts WHERE id = ?', t.from);
  const to = await db.get('SELECT id FROM accounts WHERE id = ?', t.to);
  if (!from || !to) return lab.problem(404, 'Account not found', `account "${from ? t.to : t.from}" does not exist; nothing moved`);
  if (from.balance < t.amount) return lab.problem(402, 'Insufficient funds', `the balance is ${from.balance} won; nothing moved`);
  await pay({ from: t.from, to: t.to, amount: t.amount });

  // Move the money in one transaction.
  await db.begin();
  const debit = await db.run('UPDATE accounts SET balance = balance - ? WHERE id = ? AND balance >= ?', t.amount, t.from, t.amount);
  if (debit.changes === 0) {
    await db.rollback();
    return lab.problem(402, 'Insufficient funds', 'the balance changed meanwhile; nothing moved');
  }
  await db.run('UPDATE accounts SET balance = balance + ? WHERE id = ?', t.amount, t.to);
  const tr = await db.run('INSERT INTO transfers (from_id, to_id, amount, created_at) VALUES (?, ?, ?, ?)', t.from, t.to, t.amount, req.now);
  const after = await db.get('SELECT balance FROM accounts WHERE id = ?', t.from);
  await db.commit();
  return lab.json(201, { transfer_id: 'tr_' + tr.lastInsertRowid, from: t.from, to: t.to, amount: t.amount,
      balance_after: after.balance, created_at: new Date(req.now).toISOString() });
}
