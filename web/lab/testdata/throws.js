// throws: an exception inside the transaction, at a known line (5).
async function transfer(req, db, pay) {
  await db.begin();
  await db.run("INSERT INTO transfers (from_id, to_id, amount, created_at) VALUES ('alice', 'bob', 1, 0)");
  throw new Error('boom');
}
