// lab-model.js turns a run of the student's own handler (the lab runner's
// state: attempts and trace, web/lab/runner.js) into the race view's input
// (race-model.js buildRace), so that the lab's lanes are drawn by the same
// view as the lessons' benches.
//
// The student's statements are theirs, not the engine's phases, so each is
// read for what it did to the lab's own tables and to a key: an INSERT into
// a table of the student's that wrote a row is a claim, one refused by a
// constraint is a duplicate (the verdict the lessons teach), an INSERT that
// wrote nothing was ignored; a row written into transfers moves money when
// its transaction commits (at once outside a transaction); pay is the call
// to the network, charged or answered with its first charge. Everything
// else is a step named by its statement. The words come from the SQL only
// to tell these apart; what moved is read from the runner's typed fields
// (rows, last_insert_rowid, charge_id, amount, status).

const LAB_TABLES = /^\s*insert\s+(?:or\s+\w+\s+)?into\s+["`[]?(accounts|transfers)\b/i;
const INSERT = /^\s*insert\b/i;

// labRaceInput returns buildRace's input for a runner state (and the
// verdict when every attempt has ended).
export function labRaceInput(state) {
  const events = [];
  const inTx = new Map(); // lane → in a transaction
  const pending = new Map(); // lane → [{amount, id}] transfers not committed yet
  const transfers = [];
  // The rows of the lab's tables now (the runner's dump after the step):
  // a committed transfer is read from its row, whatever the order of the
  // student's columns.
  const tables = (state.db && state.db.tables) || {};
  const rows = new Map((tables.transfers || []).map((r) => [r.id, r]));
  const paid = (e, lane, list) => {
    for (const tr of list) {
      const id = 'tr_' + tr.id;
      transfers.push({ transfer_id: id, from: tr.from, to: tr.to, amount: tr.amount });
      events.push(Object.assign(base(e), { phase: 'commit', outcome: 'committed', amount: tr.amount, transfer_id: id }));
    }
  };
  const base = (e) => ({
    seq: events.length + 1,
    lane: e.lane,
    intent: e.intent,
    customer: e.customer,
    key: e.key,
    sql: e.sql || '',
    note: e.line ? 'line ' + e.line : '',
  });
  for (const e of state.trace || []) {
    const lane = e.lane;
    const sql = e.sql || '';
    switch (e.phase) {
      case 'start':
        events.push(Object.assign(base(e), { phase: 'receive', outcome: 'ok', body: e.body }));
        continue;
      case 'wait':
        events.push(Object.assign(base(e), { phase: 'db', outcome: 'busy' }));
        continue;
      case 'crash':
        pending.delete(lane);
        inTx.delete(lane);
        events.push(Object.assign(base(e), { phase: 'respond', outcome: 'crashed' }));
        continue;
      case 'fault':
        events.push(Object.assign(base(e), { phase: 'respond', outcome: e.outcome }));
        continue;
      case 'answer':
        pending.delete(lane);
        inTx.delete(lane);
        events.push(
          Object.assign(base(e), {
            phase: 'respond',
            outcome: e.outcome === 'answered' ? 'delivered' : e.outcome,
            status: e.status,
            replayed: !!e.replayed,
          }),
        );
        continue;
      case 'exception':
        pending.delete(lane);
        inTx.delete(lane);
        events.push(Object.assign(base(e), { phase: 'respond', outcome: 'error', status: 500 }));
        continue;
      case 'pay':
        events.push(
          Object.assign(base(e), {
            phase: 'execute',
            outcome: e.outcome === 'charged' || e.outcome === 'replayed' ? 'executed' : 'error',
            charge: e.outcome === 'charged' || e.outcome === 'replayed' ? e.outcome : '',
            charge_id: e.charge_id || '',
            amount: e.amount || 0,
            sql: 'pay(' + JSON.stringify((e.params && e.params[0]) || {}) + ')',
          }),
        );
        continue;
    }
    // A db call.
    const op = e.op;
    if (e.outcome === 'constraint' && INSERT.test(sql) && !LAB_TABLES.test(sql)) {
      events.push(Object.assign(base(e), { phase: 'claim', outcome: 'duplicate' }));
      continue;
    }
    if (e.outcome === 'error' || e.outcome === 'constraint') {
      events.push(Object.assign(base(e), { phase: 'db', outcome: 'error' }));
      continue;
    }
    if (op === 'begin') inTx.set(lane, true);
    if (op === 'rollback') {
      inTx.delete(lane);
      pending.delete(lane);
    }
    if (op === 'run' && LAB_TABLES.test(sql) && /transfers/i.test(sql.match(LAB_TABLES)[1]) && e.rows > 0) {
      const row = rows.get(e.last_insert_rowid) || {};
      const tr = { id: e.last_insert_rowid, from: String(row.from_id ?? ''), to: String(row.to_id ?? ''), amount: Number(row.amount) || 0 };
      if (inTx.get(lane)) {
        if (!pending.has(lane)) pending.set(lane, []);
        pending.get(lane).push(tr);
        events.push(Object.assign(base(e), { phase: 'db', outcome: 'ok' }));
      } else {
        paid(e, lane, [tr]);
      }
      continue;
    }
    if (op === 'run' && INSERT.test(sql) && !LAB_TABLES.test(sql)) {
      events.push(Object.assign(base(e), { phase: 'claim', outcome: 'claimed', rows: e.rows }));
      continue;
    }
    if (op === 'commit') {
      inTx.delete(lane);
      const list = pending.get(lane) || [];
      pending.delete(lane);
      if (list.length) {
        paid(e, lane, list);
        continue;
      }
    }
    events.push(Object.assign(base(e), { phase: op === 'commit' ? 'commit' : 'db', outcome: 'ok', sql: sql || op.toUpperCase() }));
  }
  const violations = [];
  const report = state.verdict && state.verdict.report;
  for (const r of (report && report.rules) || []) for (const v of r.violations || []) violations.push(Object.assign({ rule: r.rule }, v));
  const lanes = (state.attempts || []).map((a) => ({
    id: a.id,
    intent: a.intent,
    customer: a.customer,
    key: a.key,
    state: a.state === 'parked' ? (a.waiting ? 'waiting' : 'running') : a.state === 'answered' ? 'done' : a.state,
    next_phase: a.next && a.state === 'parked' ? (a.next.op === 'pay' ? 'pay' : 'db.' + a.next.op) : '',
    next_part: a.waiting ? 'lock' : '',
  }));
  const accounts = (tables.accounts || []).map((r) => ({ id: r.id, balance: r.balance }));
  return { events, lanes, violations, transfers, accounts, clock: 'step', policy: { in_progress: 'two-phase' } };
}
