// unique: the second rung. naive, plus a key table whose primary key is
// the key: the first request INSERTs its key, and a retry's INSERT fails
// with a constraint error, so a retry no longer pays again.
// What it still gets wrong: the key is written before the work and means
// "done", so every later request under it gets a generic "already
// processed": a corrected amount is told success, a retry never gets the
// first answer back. Keys are one namespace for every customer, and they
// are kept five minutes. The next rung (fingerprint) remembers the request.

const schema = `
CREATE TABLE idem_keys (
  idem_key    TEXT PRIMARY KEY,
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

  // NEW: claim the key with one INSERT. The primary key decides; a
  // constraint error means the key was used.
  try {
    await db.run('INSERT INTO idem_keys (idem_key, created_at) VALUES (?, ?)', key, req.now);
  } catch (e) {
    if (e.name !== 'ConstraintError') throw e;
    // An expired key is taken over in one statement, never read-then-delete.
    const took = await db.run('UPDATE idem_keys SET created_at = ? WHERE idem_key = ? AND created_at < ?',
      req.now, key, req.now - retentionSeconds * 1000);
    if (took.changes === 0) {
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
