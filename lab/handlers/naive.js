// naive: the first rung. The handler checks the request and moves the
// money. It keeps no keys: every request is a new transfer, so a retry pays
// again, simultaneous retries all pay, and a corrected amount pays too.
// The next rung (unique) remembers the key.

// A handler that keeps keys says for how long, so that a client knows how
// long a retry is safe: const retentionSeconds = N (rule 7). naive keeps
// no key, so it says nothing yet.

async function transfer(req, db, pay) {
  // Check the request before anything happens (401, 415, 400).
  if (req.customer === null) return lab.problem(401, 'X-Customer-ID header is required');
  if (req.contentType !== null && !/^application\/([\w.-]+\+)?json\s*(;|$)/i.test(req.contentType)) return lab.problem(415, 'Content-Type must be application/json');
  const t = lab.parseTransfer(req.body);
  if (t === null) return lab.problem(400, 'The body is not a transfer', 'send {"from": "...", "to": "...", "amount": N}');

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
