// hung: an endless loop before the first call. The page must stop it.
async function transfer(req, db, pay) {
  await db.get('SELECT 1');
  while (true) {}
}
