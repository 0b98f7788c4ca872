// lab-file.js turns the lab page's two boxes (the handler and the schema)
// into one handler file and back, and into a link that carries them. The
// file is the one `idemlab lab serve handler.js` runs (docs/lab-handler.md):
// the schema is its `const schema = `…`;`, the rest is the handler.

// compose writes one handler file from the two boxes.
export function compose(handler, schema) {
  const sql = (schema || '').replace(/\\/g, '\\\\').replace(/`/g, '\\`').replace(/\$\{/g, '\\${');
  return 'const schema = `\n' + sql.replace(/^\n+|\n+$/g, '') + '\n`;\n\n' + (handler || '').replace(/^\n+/, '');
}

// lineShift is how many lines compose puts before the handler's first
// line: a line n of the file is line n - lineShift of the handler's box.
export function lineShift(handler, schema) {
  const file = compose(handler, schema).split('\n').length;
  return file - String(handler || '').split('\n').length;
}

const SCHEMA = /(^|\n)[ \t]*const[ \t]+schema[ \t]*=[ \t]*`((?:[^`\\]|\\[\s\S])*)`[ \t]*;?[ \t]*(\n|$)/;

// split reads a handler file back into the two boxes. It throws when the
// file declares no transfer handler (what the page was given is then not
// a handler at all: a photo, a Python file).
export function split(text) {
  text = String(text || '').replace(/\r\n/g, '\n');
  if (!/async\s+function\s+transfer\s*\(/.test(text)) throw new Error('no async function transfer(req, db, pay)');
  const m = SCHEMA.exec(text);
  if (!m) return { handler: text, schema: '' };
  const schema = m[2].replace(/\\([\s\S])/g, '$1').replace(/^\n+|\n+$/g, '');
  const handler = (text.slice(0, m.index) + m[1] + text.slice(m.index + m[0].length)).replace(/^\n+/, '');
  return { handler, schema };
}

// A link carries {v, rung, handler, schema} as JSON, deflated and written
// in base64url after "#code=": about a third of the code's length. Browsers
// without CompressionStream write (and read) it undeflated, after "#raw=".
export async function toLink(base, payload) {
  const json = new TextEncoder().encode(JSON.stringify(Object.assign({ v: 1 }, payload)));
  if (typeof CompressionStream === 'function') {
    const packed = await new Response(new Blob([json]).stream().pipeThrough(new CompressionStream('deflate-raw'))).arrayBuffer();
    return base + '#code=' + b64url(new Uint8Array(packed));
  }
  return base + '#raw=' + b64url(json);
}

// fromHash reads a link's payload from location.hash, or returns null when
// the hash carries none. It throws when it carries one that is damaged.
export async function fromHash(hash) {
  const m = /^#(code|raw)=([A-Za-z0-9_-]+)$/.exec(hash || '');
  if (!m) return null;
  let bytes = unb64url(m[2]);
  if (m[1] === 'code') {
    if (typeof DecompressionStream !== 'function') throw new Error('this browser cannot unpack the link');
    bytes = new Uint8Array(
      await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate-raw'))).arrayBuffer(),
    );
  }
  const v = JSON.parse(new TextDecoder().decode(bytes));
  if (!v || typeof v.handler !== 'string' || typeof v.schema !== 'string') throw new Error('the link carries no handler');
  return { rung: typeof v.rung === 'string' ? v.rung : '', handler: v.handler, schema: v.schema };
}

function b64url(bytes) {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function unb64url(s) {
  const bin = atob(s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

// The code of each rung is kept in localStorage under idemlab.lab.RUNG as
// {handler, schema}. A browser with storage turned off keeps nothing; the
// page says so.
const PREFIX = 'idemlab.lab.';

export function load(rung) {
  try {
    const v = JSON.parse(localStorage.getItem(PREFIX + rung) || 'null');
    return v && typeof v.handler === 'string' ? { handler: v.handler, schema: String(v.schema || ''), at: Number(v.at) || 0 } : null;
  } catch {
    return null;
  }
}

export function save(rung, code) {
  try {
    localStorage.setItem(PREFIX + rung, JSON.stringify({ handler: code.handler, schema: code.schema, at: Date.now() }));
    return true;
  } catch {
    return false;
  }
}

export function forget(rung) {
  try {
    localStorage.removeItem(PREFIX + rung);
  } catch {}
}

// The rung the student was last on is kept under idemlab.labRung, so that
// the page opens there again (a rung named in the link's ?rung= wins).
const RUNG_KEY = 'idemlab.labRung';

export function loadRung() {
  try {
    return localStorage.getItem(RUNG_KEY) || '';
  } catch {
    return '';
  }
}

export function saveRung(rung) {
  try {
    localStorage.setItem(RUNG_KEY, rung);
  } catch {}
}

// The rungs whose last grade said done are kept under idemlab.labDone (a
// JSON list), so that the ladder shows which the student has reached.
const DONE_KEY = 'idemlab.labDone';

export function loadDone() {
  try {
    const v = JSON.parse(localStorage.getItem(DONE_KEY) || '[]');
    return new Set(Array.isArray(v) ? v.filter((x) => typeof x === 'string') : []);
  } catch {
    return new Set();
  }
}

export function saveDone(rung, done) {
  try {
    const all = loadDone();
    if (done) all.add(rung);
    else all.delete(rung);
    localStorage.setItem(DONE_KEY, JSON.stringify([...all]));
  } catch {}
}

// The bench a page held when the student changed the language (the page
// loads again) is kept for that one load under idemlab.labBench in the
// tab's sessionStorage: {chosen, scenario, acts, code}, played again by
// the new page when its code is the same; chosen, the scenario chosen in
// the list, is kept whether a bench was or not.
const BENCH_KEY = 'idemlab.labBench';

export function keepBench(place) {
  try {
    if (place) sessionStorage.setItem(BENCH_KEY, JSON.stringify(place));
    else sessionStorage.removeItem(BENCH_KEY);
  } catch {}
}

export function takeBench() {
  try {
    const v = JSON.parse(sessionStorage.getItem(BENCH_KEY) || 'null');
    sessionStorage.removeItem(BENCH_KEY);
    if (!v || typeof v !== 'object') return null;
    const bench =
      typeof v.scenario === 'string' && typeof v.code === 'string' && Array.isArray(v.acts) && v.acts.every((a) => typeof a === 'string');
    const chosen = typeof v.chosen === 'string' ? v.chosen : '';
    return bench ? { chosen, scenario: v.scenario, acts: v.acts, code: v.code } : chosen ? { chosen } : null;
  } catch {
    return null;
  }
}
