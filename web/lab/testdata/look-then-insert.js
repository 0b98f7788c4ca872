// look-then-insert: looks for the key, and when it is absent inserts it.
// The table has no key constraint: the SELECT is the only guard, and two
// simultaneous retries both see "absent".
const schema = `
CREATE TABLE idem_keys (
  customer TEXT NOT NULL, idem_key TEXT NOT NULL, state TEXT NOT NULL,
  status INTEGER, headers TEXT, body TEXT
);`;

const retentionSeconds = 86400;

async function transfer(req, db, pay) {
  if (!req.customer) return lab.problem(401, 'Missing X-Customer-ID');
  const key = lab.parseKey(req.key);
  if (!key) return lab.problem(400, 'Invalid Idempotency-Key');
  const t = lab.parseTransfer(req.body);
  if (!t) return lab.problem(400, 'Invalid transfer');
  const seen = await db.get('SELECT state, status, headers, body FROM idem_keys WHERE customer = ? AND idem_key = ?', req.customer, key);
  if (seen) {
    if (seen.state !== 'completed') return lab.problem(409, 'In progress', undefined, { 'Retry-After': '1' });
    return { status: seen.status, headers: Object.assign(JSON.parse(seen.headers), { 'Idempotent-Replayed': 'true' }), body: seen.body };
  }
  await db.run("INSERT INTO idem_keys (customer, idem_key, state) VALUES (?, ?, 'in_progress')", req.customer, key);
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
  const answer = lab.json(201, { transfer_id: 'tr_' + ins.lastInsertRowid, from: t.from, to: t.to, amount: t.amount, created_at: req.now });
  await db.run(
    "UPDATE idem_keys SET state = 'completed', status = ?, headers = ?, body = ? WHERE customer = ? AND idem_key = ?",
    answer.status,
    JSON.stringify(answer.headers),
    answer.body,
    req.customer,
    key,
  );
  await db.commit();
  return answer;
}
