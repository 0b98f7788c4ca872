// pay-args: pay called with arguments it cannot take, each caught, and
// once as the contract says. Both runtimes (the browser's runner and
// idemlab lab serve) refuse the same ones with PaymentError.
async function transfer(req, db, pay) {
  const said = [];
  for (const args of [
    { from: 'alice', to: 'bob', amount: '200000' }, // the amount a string
    { from: 'alice', to: 'bob', amount: 0 },
    { from: 'alice', to: 'bob', amount: 1.5 },
    { from: 'alice', to: 'bob', amount: 5, key: '' },
    { from: 1, to: 'bob', amount: 5 },
    { from: 'alice', to: 'bob', amount: 5, key: 'k-1' },
  ]) {
    try {
      await pay(args);
      said.push('charged');
    } catch (e) {
      said.push(e.name);
    }
  }
  return lab.json(200, { said });
}
