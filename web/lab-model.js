// lab-model.js turns a run of the student's own handler (the lab runner's
// state: attempts and trace, web/lab/runner.js) into the race view's input
// (race-model.js buildRace), so that the lab's lanes are drawn by the same
// view as the lessons' benches.
//
// The student's statements are theirs, not the engine's phases, so each is
// read for what it did to the lab's own tables and to a key: an INSERT into
// a table of the student's that wrote a row is a claim, one refused by a
// constraint is a duplicate (the verdict the lessons teach), an UPDATE
// that gave the key's row to another attempt and left its state as it was
// is a takeover; a row written into transfers moves money when its
// transaction commits (at once outside a transaction); pay is the call to
// the network, charged or answered with its first charge. Everything else
// is a step named by its statement. The words come from the SQL only to
// tell these apart; what moved is read from the runner's typed fields
// (rows, changed, last_insert_rowid, charge_id, amount, status), and the key's row
// is what the student's own tables hold (key_rows, keyRowOf), never what
// the SQL's words suggest.

const LAB_TABLES = /^\s*insert\s+(?:or\s+\w+\s+)?into\s+["`[]?(accounts|transfers)\b/i;
const INSERT = /^\s*insert\b/i;
const UPDATE = /^\s*update\b/i;

// STATE_COLUMN names a column that says a key row's state ('status',
// 'state', 'claim_state', …); STORED_STATUS one that may hold the stored
// answer's HTTP status ('status', 'resp_status', 'status_code').
const STATE_COLUMN = [/^(state|status)$/i, /_(state|status)$/i];
const STORED_STATUS = /status/i;

// keyRowOf is the key's row as the race view draws it (buildRace's
// key_row), from the committed rows that hold the key after a step
// (key_rows) and those before it: null when no row holds it, else the row
// the step changed (or the first, when a step only took one away) with
// its state column's value ('' when its table has none), the answer's
// status stored in it (0 when none), how many rows hold the key, and the
// attempt that wrote the row as it stands (by: '' when it was there
// before the run). sigs are the rows' contents, one string a row; sig
// tells one content of the rows from another.
function keyRowOf(now, before) {
  if (!now.length) return null;
  const old = new Set(before);
  const sigs = now.map((r) => r.table + '\u0000' + JSON.stringify(r.row));
  const k = Math.max(
    0,
    sigs.findIndex((x) => !old.has(x)),
  );
  const { table, row, by } = now[k];
  const cols = Object.keys(row);
  let column = '';
  for (const re of STATE_COLUMN) {
    column = cols.find((c) => re.test(c) && typeof row[c] === 'string') || '';
    if (column) break;
  }
  const stored = cols.find((c) => c !== column && STORED_STATUS.test(c) && Number.isInteger(row[c]) && row[c] >= 100 && row[c] <= 599);
  return {
    table,
    column,
    value: column ? row[column] : '',
    stored: stored ? row[stored] : 0,
    rows: now.length,
    by: by || '',
    sigs,
    sig: sigs.join('\n'),
  };
}

// labRaceInput returns buildRace's input for a runner state (and the
// verdict when every attempt has ended). lineOf turns the runner's line
// of a call into the line the handler's box shows (the file as run may
// have lines above the student's).
export function labRaceInput(state, lineOf = (n) => n) {
  const events = [];
  // Whose each attempt is, and whether the student's key table keeps one
  // customer's key apart from another's (scopedKeys): then each
  // customer's key is a key row of its own, holding only the rows that
  // customer's attempts wrote.
  const customerOf = new Map((state.attempts || []).map((a) => [a.id, a.customer || '']));
  const scoped = scopedKeys(state.trace || [], customerOf);
  const ownRows = (e) => (scoped ? e.key_rows.filter((r) => !r.by || customerOf.get(r.by) === (e.customer || '')) : e.key_rows);
  const rowKey = (e) => (scoped ? (e.customer || '') + '\t' + e.key : e.key);
  // Per key: the key row drawn from the rows that held it after its last
  // traced step, and the attempt whose step wrote it; per runner event
  // (its seq), the key row after it.
  const lastRow = new Map();
  const rowAfter = new Map();
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
  const base = (e) => {
    const ev = {
      seq: events.length + 1,
      lane: e.lane,
      intent: e.intent,
      customer: e.customer,
      key: e.key,
      sql: e.sql || '',
      note: e.line ? 'line ' + lineOf(e.line) : '',
    };
    // The runner's step count, on the events that are steps (a call run,
    // a crash): the axis counts steps as the explorer does, not columns.
    if ((e.phase === 'db' || e.phase === 'pay' || e.phase === 'crash') && e.step) ev.tick = e.step;
    if (rowAfter.has(e.seq)) ev.key_row = rowAfter.get(e.seq);
    return ev;
  };
  for (const e of state.trace || []) {
    const lane = e.lane;
    const sql = e.sql || '';
    switch (e.phase) {
      case 'start':
        // at: the scenario's clock when the attempt was sent (a retry ten
        // minutes later), which the step axis marks as a break.
        events.push(Object.assign(base(e), { phase: 'receive', outcome: 'ok', body: e.body, at: e.now }));
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
            // A call the network failed after it charged (its answer lost):
            // the step failed for the handler, and the charge stands.
            charge:
              e.outcome === 'charged' || e.outcome === 'replayed' ? e.outcome : e.charge_id ? (e.replayed ? 'replayed' : 'charged') : '',
            charge_id: e.charge_id || '',
            amount: e.amount || 0,
            sql: 'pay(' + JSON.stringify((e.params && e.params[0]) || {}) + ')',
          }),
        );
        continue;
    }
    // A db call, and what the key's row is after it.
    const op = e.op;
    let rowChanged = false;
    let tookOver = false;
    if (Array.isArray(e.key_rows) && e.key) {
      const prev = lastRow.get(rowKey(e)) || null;
      const kr = keyRowOf(ownRows(e), prev && prev.row ? prev.row.sigs : []);
      rowChanged = (kr ? kr.sig : '') !== (prev && prev.row ? prev.row.sig : '');
      // Another attempt's row made this one's, in the same state: taken over.
      tookOver =
        rowChanged && !!kr && !!prev && !!prev.row && prev.lane !== lane && kr.value === prev.row.value && kr.rows === prev.row.rows;
      if (rowChanged) lastRow.set(rowKey(e), { lane, row: kr });
      rowAfter.set(e.seq, kr);
    }
    if (e.outcome === 'constraint' && INSERT.test(sql) && !LAB_TABLES.test(sql)) {
      events.push(Object.assign(base(e), { phase: 'claim', outcome: 'duplicate' }));
      continue;
    }
    if (e.outcome === 'error' || e.outcome === 'constraint') {
      events.push(Object.assign(base(e), { phase: 'db', outcome: 'error' }));
      continue;
    }
    // A statement that writes, given to run or to get or all (an INSERT
    // … RETURNING), and the rows it changed.
    const writes = op === 'run' || ((op === 'get' || op === 'all') && (INSERT.test(sql) || UPDATE.test(sql)));
    const written = op === 'run' ? e.rows || 0 : e.changed || 0;
    if (op === 'begin') inTx.set(lane, true);
    if (op === 'rollback') {
      inTx.delete(lane);
      pending.delete(lane);
    }
    if (writes && LAB_TABLES.test(sql) && /transfers/i.test(sql.match(LAB_TABLES)[1]) && written > 0) {
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
    // An INSERT outside a transaction that wrote a row but left the key's
    // rows as they were claimed nothing (a log of the student's, say);
    // inside one, its row is not committed yet, and the INSERT is the
    // claim the handler made. One that wrote nothing is drawn as ignored.
    const keyless = writes && written > 0 && !rowChanged && !inTx.get(lane) && Array.isArray(e.key_rows);
    if (writes && INSERT.test(sql) && !LAB_TABLES.test(sql) && !keyless) {
      events.push(Object.assign(base(e), { phase: 'claim', outcome: 'claimed', rows: written }));
      continue;
    }
    if (writes && tookOver && UPDATE.test(sql) && !LAB_TABLES.test(sql)) {
      events.push(Object.assign(base(e), { phase: 'claim', outcome: 'taken-over', rows: written }));
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
    response: a.answer ? a.answer.body : '',
  }));
  const accounts = (tables.accounts || []).map((r) => ({ id: r.id, balance: r.balance }));
  // The key rows are the tables' (keyRows: 'read'); the answers are the
  // handler's own, drawn as sent (answers: 'as-sent'); the processor's
  // row stays once it has charged (keepProcessor).
  return {
    events,
    lanes,
    violations,
    transfers,
    accounts,
    clock: 'step',
    policy: scoped ? { scope: 'customer-endpoint' } : {},
    keyRows: 'read',
    answers: 'as-sent',
    keepProcessor: true,
  };
}

// scopedKeys says whether the student's tables kept one customer's key
// apart from another's: at some step, the rows holding one key string
// were written by attempts of two customers (each got a row of its own).
// A table of global keys lets only the first customer's row in.
function scopedKeys(trace, customerOf) {
  for (const e of trace) {
    if (!Array.isArray(e.key_rows)) continue;
    const customers = new Set(e.key_rows.filter((r) => r.by).map((r) => customerOf.get(r.by)));
    if (customers.size > 1) return true;
  }
  return false;
}
