// naive: 첫 단계. 핸들러는 요청을 검사하고 돈을 옮깁니다. 키는 전혀
// 기억하지 않습니다. 그래서 모든 요청이 새 송금이 되고, 재시도는 한 번 더
// 결제되며, 동시에 온 재시도는 모두 결제되고, 금액을 고친 요청도 결제됩니다.
// 다음 단계(unique)에서 키를 기억하게 됩니다.

// 키를 보관하는 핸들러는 얼마 동안 보관하는지 밝혀서, 클라이언트가 언제까지
// 안전하게 재시도할 수 있는지 알게 합니다: const retentionSeconds = N
// (규칙 7). naive는 키를 보관하지 않으니 아직 밝힐 것이 없습니다.

async function transfer(req, db, pay) {
  // 무엇을 하든 그 전에 요청부터 검사합니다(401, 415, 400).
  if (req.customer === null) return lab.problem(401, 'X-Customer-ID header is required');
  if (req.contentType !== null && !/^application\/([\w.-]+\+)?json\s*(;|$)/i.test(req.contentType)) return lab.problem(415, 'Content-Type must be application/json');
  const t = lab.parseTransfer(req.body);
  if (t === null) return lab.problem(400, 'The body is not a transfer', 'send {"from": "...", "to": "...", "amount": N}');

  // 할 수 없는 송금에는 결제망을 부르지 않고 바로 답합니다.
  const from = await db.get('SELECT balance FROM accounts WHERE id = ?', t.from);
  const to = await db.get('SELECT id FROM accounts WHERE id = ?', t.to);
  if (!from || !to) return lab.problem(404, 'Account not found', `account "${from ? t.to : t.from}" does not exist; nothing moved`);
  if (from.balance < t.amount) return lab.problem(402, 'Insufficient funds', `the balance is ${from.balance} won; nothing moved`);
  await pay({ from: t.from, to: t.to, amount: t.amount });

  // 돈은 트랜잭션 하나 안에서 옮깁니다.
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
