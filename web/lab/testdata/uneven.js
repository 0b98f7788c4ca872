// uneven: naive (every attempt pays, so every schedule of two retries or
// more breaks rule 1), but once it has paid it looks for each of the
// three transfers it does not find made yet, one statement each: how long
// a schedule is depends on how the attempts interleave. The shortest has
// every attempt commit before any of them counts.
async function transfer(req, db, pay) {
  const t = lab.parseTransfer(req.body);
  if (!t) return lab.problem(400, 'Invalid transfer');
  await db.begin();
  const from = await db.get('SELECT balance FROM accounts WHERE id = ?', t.from);
  if (!from || from.balance < t.amount) {
    await db.rollback();
    return lab.problem(from ? 402 : 404, from ? 'Insufficient funds' : 'Unknown account');
  }
  await db.run('UPDATE accounts SET balance = balance - ? WHERE id = ?', t.amount, t.from);
  await db.run('UPDATE accounts SET balance = balance + ? WHERE id = ?', t.amount, t.to);
  const ins = await db.run(
    'INSERT INTO transfers (from_id, to_id, amount, created_at) VALUES (?, ?, ?, ?)',
    t.from,
    t.to,
    t.amount,
    req.now,
  );
  await db.commit();
  await pay({ from: t.from, to: t.to, amount: t.amount });
  const made = await db.get('SELECT count(*) AS n FROM transfers');
  for (let i = made.n + 1; i <= 3; i++) await db.get('SELECT id FROM transfers WHERE id = ?', i);
  return lab.json(201, {
    transfer_id: 'tr_' + ins.lastInsertRowid,
    from: t.from,
    to: t.to,
    amount: t.amount,
    balance_after: from.balance - t.amount,
    created_at: req.now,
  });
}
