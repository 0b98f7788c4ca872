// join.js: a student's phone. It joins a room with a nickname and a secret
// kept in localStorage (so a reload is the same student), sends transfers,
// loses their answers in the "basement", retries, votes, and draws its own
// attempts from the room's trace events in the race view (web/race.js, the
// lessons' and the projector's), and, on request, the room's last storm.
// All text is set as text.
import { connect, showConnection } from './room.js';
import { $, el, won } from '/dom.js';
import { buildRace, drawRace } from '/race.js';
import { t, translatePage, choiceWord, lang } from './words.js';
import { setLang, extraPayments } from '/strings.js';

const STORE = 'idemlab.classroom.student';
translatePage();
setLang(lang); // the race view's words (web/strings.js), in the page's language

let room = null;
let me = null;
let code = '';
let run = 0;
let mine = []; // this phone's trace events in the current ledger
let roomEvents = []; // every event of the current ledger's storm, for the room's view
let stormRun = 0; // the ledger of the last storm announced
let policy = {};
let level = '';
let lastResult = null; // what this phone's last transfer got
let myVote = ''; // this phone's choice in the current vote
// A phone keeps at most this many of a storm's events (1,000 clients × 5
// attempts is about 45,000); the room's view is drawn only when opened.
const MAX_ROOM_EVENTS = 60000;

function identity() {
  let id = null;
  try {
    id = JSON.parse(localStorage.getItem(STORE) || 'null');
  } catch {
    id = null;
  }
  if (!id || typeof id.secret !== 'string' || !/^[0-9a-f]{32,128}$/.test(id.secret)) {
    const b = new Uint8Array(16);
    crypto.getRandomValues(b);
    id = { secret: Array.from(b, (x) => x.toString(16).padStart(2, '0')).join(''), nickname: '', room: '' };
  }
  return id;
}

function save(id) {
  localStorage.setItem(STORE, JSON.stringify(id));
}

function start() {
  const id = identity();
  const params = new URLSearchParams(location.search);
  const fromURL = (params.get('room') || '').toUpperCase();
  $('room-code').value = fromURL || id.room || '';
  $('nickname').value = id.nickname || '';
  if (fromURL && id.nickname && id.room === fromURL) {
    join(fromURL, id.nickname); // a reload: straight back in as the same student
  }
}

$('join-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const c = $('room-code').value.trim().toUpperCase();
  const nick = $('nickname').value.trim();
  if (!c || !nick) return;
  history.replaceState(null, '', '/classroom/?room=' + encodeURIComponent(c));
  join(c, nick);
});

function join(c, nick) {
  const id = identity();
  id.nickname = nick;
  id.room = c;
  save(id);
  code = c;
  if (room) room.stop();
  room = connect(c, '', {
    onOpen() {
      room.send({ type: 'join', nickname: nick, secret: id.secret });
    },
    onMessage,
    onStatus(s, info) {
      showConnection(s, t(s === 'refused' ? 'refusedPill' : s));
      if (s === 'refused') {
        showRefusal(info);
        if (!info.wait) room = null;
        return;
      }
      if (s === 'gone') {
        showRefusal(null);
        room = null;
        $('client').hidden = true;
        $('enter').hidden = false;
        $('enter-error').textContent = t('roomGone', { code: c });
      }
    },
  });
}

// The server's refusals, by the limit that refused: the phone says which
// in its own language, and when it asks again.
const REFUSALS = new Set(['full', 'locked', 'paced', 'network', 'codes', 'kicked', 'replaced']);
let countdown = 0;

// showRefusal writes why this phone is not in the room, in words, with a
// count down to its next try (none when it will not try again on its
// own: removed, or replaced by another page); null hides it.
function showRefusal(info) {
  clearInterval(countdown);
  const box = $('refused');
  if (!info) {
    box.hidden = true;
    box.replaceChildren();
    delete box.dataset.reason;
    return;
  }
  const reason = REFUSALS.has(info.reason) ? info.reason : 'network';
  box.hidden = false;
  box.dataset.reason = reason;
  const words = el('span', { text: t('refused_' + reason, { wait: info.wait }) });
  const next = el('span', { class: 'next-try' });
  box.replaceChildren(words, ' ', next);
  if (!info.wait) return;
  let left = info.wait;
  const tickDown = () => {
    next.textContent = t('tryingIn', { n: left });
    left = Math.max(0, left - 1);
  };
  tickDown();
  countdown = setInterval(tickDown, 1000);
}

function onMessage(msg) {
  switch (msg.type) {
    case 'welcome':
      // A (re)connection: the room's current ledger follows (its storm,
      // events and verdict); what this phone drew is drawn again from it.
      run = 0;
      mine = [];
      roomEvents = [];
      stormRun = 0;
      renderState(msg.state);
      break;
    case 'joined':
      showRefusal(null);
      me = msg;
      // How many times the room has let this phone in (a reconnection
      // counts again); tests wait on it to know a rejoin is done.
      $('client').dataset.joins = String(Number($('client').dataset.joins || 0) + 1);
      $('enter').hidden = true;
      $('client').hidden = false;
      $('enter-error').textContent = '';
      $('me').textContent = msg.nickname;
      $('room-label').textContent = code;
      $('level-label').textContent = msg.level;
      setLevel(msg.level);
      $('send').textContent = msg.retrying ? t('sendAgain') : t('send');
      myVote = msg.vote || '';
      break;
    case 'state':
      renderState(msg);
      break;
    case 'result':
      renderResult(msg);
      break;
    case 'voted':
      myVote = msg.choice;
      $('voted').textContent = t('yourVote', { choice: choiceWord(msg.choice) });
      for (const b of $('choices').querySelectorAll('button')) b.setAttribute('aria-pressed', String(b.dataset.choice === myVote));
      break;
    case 'storm':
      stormRun = msg.run;
      roomEvents = [];
      if (msg.policy) policy = msg.policy;
      level = msg.spec.level;
      $('room-storm').hidden = true;
      $('room-verdict').hidden = false;
      $('room-verdict').textContent = t('roomVerdict', { verdict: t('running') });
      break;
    case 'report':
      if (msg.storm && msg.run === stormRun) {
        $('room-storm').hidden = false;
        if ($('room-storm').open) drawRoom();
        renderVerdict(msg);
      }
      if (msg.vote) renderVote(msg.vote, false);
      break;
    case 'events':
      if (!me) return;
      for (const e of msg.events) {
        if (e.run !== run) {
          run = e.run;
          mine = [];
        }
        if (e.lane.startsWith(me.id + '.')) mine.push(e);
        if (e.run === stormRun && roomEvents.length < MAX_ROOM_EVENTS) roomEvents.push(e);
      }
      drawMine();
      renderResultBox();
      break;
    case 'error':
      if (REFUSALS.has(msg.code)) {
        // The room turned this phone away and closes its socket: the close
        // is that refusal, said in words, and the phone asks again after
        // retry_after (a full or locked room, a busy network) or, removed
        // or replaced by another page, not at all.
        room.hold({ reason: msg.code, wait: msg.retry_after || 0 });
        if (!me || msg.code === 'kicked' || msg.code === 'replaced') {
          me = null;
          $('client').hidden = true;
          $('enter').hidden = false;
        }
        break;
      }
      if (msg.code !== 'wait') $('send').disabled = false;
      $('client-error').textContent = msg.detail;
      setTimeout(() => ($('client-error').textContent = ''), 4000);
      break;
  }
}

function renderState(s) {
  $('level-label').textContent = s.level;
  setLevel(s.level);
  renderVote(s.vote, s.storming);
}

// renderVote shows the room's question: buttons while it is open (this
// phone's own choice pressed), the room's answers once revealed, with this
// phone's choice marked and whether it was right.
function renderVote(v, storming) {
  const box = $('vote');
  box.hidden = !(v.open || v.revealed || (v.question && storming));
  if (!v.question) myVote = '';
  $('question').textContent = v.question ? t('question') : '';
  const choices = $('choices');
  const list = v.choices || [];
  if (v.open) {
    // The buttons stay the same elements while the vote is open (a state
    // message comes with every join): one is never replaced under a thumb.
    const shown = [...choices.querySelectorAll('button')].map((b) => b.dataset.choice).join();
    if (shown !== list.join()) {
      choices.replaceChildren(
        ...list.map((c) => {
          const b = el('button', { type: 'button', 'data-choice': c, text: choiceWord(c) });
          b.addEventListener('click', () => room.send({ type: 'vote', choice: c }));
          return b;
        }),
      );
    }
    for (const b of choices.querySelectorAll('button')) b.setAttribute('aria-pressed', String(b.dataset.choice === myVote));
  } else if (v.revealed && v.counts) {
    choices.replaceChildren(
      ...list.map((c) =>
        el(
          'div',
          { class: 'hrow' + (c === myVote ? ' mine' : ''), 'data-choice': c },
          el('span', { class: 'hlabel', text: (c === myVote ? '➜ ' : '') + choiceWord(c) }),
          el('span', {
            class: 'hcount',
            text: String(v.counts[c] || 0) + (v.actual && v.actual.choice === c ? ' ← ' + t('whatHappened') : ''),
          }),
        ),
      ),
    );
  } else {
    choices.replaceChildren();
  }
  const voted = $('voted');
  voted.className = 'muted';
  if (v.revealed && v.actual && v.actual.choice && myVote) {
    const right = v.actual.choice === myVote;
    voted.className = right ? 'right' : 'wrong';
    voted.textContent = right
      ? t('votedRight', { choice: choiceWord(myVote) })
      : t('votedWrong', { choice: choiceWord(myVote), actual: choiceWord(v.actual.choice) });
  } else if (storming && v.question) {
    voted.textContent = t('votesLockedPhone') + (myVote ? ' ' + t('yourVote', { choice: choiceWord(myVote) }) : '');
  } else if (v.open && myVote) {
    voted.textContent = t('yourVote', { choice: choiceWord(myVote) });
  } else {
    voted.textContent = '';
  }
}

// renderVerdict says in one line what the room's storm did.
function renderVerdict(msg) {
  const s = msg.report.summary;
  let verdict;
  if (s.duplicates > 0) verdict = extraPayments(s.duplicates, s.paid_twice);
  else if (s.intents > s.transfers) verdict = t('verdictNoPay', { n: s.intents - s.transfers });
  else verdict = t('verdictHeld');
  const p = $('room-verdict');
  p.hidden = false;
  p.className = 'room-verdict ' + (s.duplicates > 0 ? 'fail' : s.intents > s.transfers ? 'info' : 'ok');
  p.textContent = t('roomVerdict', { verdict });
}

// setLevel remembers the room's level: the race view names the key row's
// states after its policy (a storm announces it; naive keeps no key table).
function setLevel(l) {
  if (l === level) return;
  level = l;
  policy = l === 'naive' ? { claim: 'none' } : {};
}

// myLabel names this phone's attempts: "#1", "#2", … in the order sent.
function myLabel(lane) {
  const m = /\.(\d+)$/.exec(lane);
  return m ? '#' + m[1] : lane;
}

// drawMine draws this phone's attempts in the current ledger as the race
// view, compact: a second payment is a red block that says "paid again".
function drawMine() {
  const box = $('mylanes');
  if (!mine.length) {
    box.replaceChildren();
    return;
  }
  const model = buildRace({ events: mine, policy, clock: 'time', labelOf: myLabel });
  drawRace(box, model, { compact: true, width: box.clientWidth || 360, collapseOver: 8, maxRows: 20 });
}

// drawRoom draws the room's last storm, collapsed: the winner of each key
// and one counted row for each kind of answer the others got.
function drawRoom() {
  const box = $('room-race');
  if (!roomEvents.length) {
    box.replaceChildren(el('p', { class: 'muted', text: t('noStormHere') }));
    return;
  }
  const model = buildRace({
    events: roomEvents,
    policy,
    clock: 'time',
    labelOf: (l) => (me && l.startsWith(me.id + '.') ? 'you ' + myLabel(l) : l),
  });
  drawRace(box, model, { compact: true, width: box.clientWidth || 360, collapseOver: 2, maxRows: 14 });
}
$('room-storm').addEventListener('toggle', () => $('room-storm').open && drawRoom());

// paymentsFor lists the amounts this phone's events show paid for one wish
// (a commit's event carries the amount it moved).
function paymentsFor(intent) {
  return mine.filter((e) => e.intent === intent && e.phase === 'commit' && e.outcome === 'committed').map((e) => e.amount || 0);
}

function renderResult(r) {
  $('send').disabled = false;
  lastResult = r;
  renderResultBox();
  $('send').textContent = r.retrying ? t('sendAgain') : t('send');
}

// renderResultBox says what the last transfer got and, once the trace
// shows it, whether the wish's money moved more than once: the answer and the
// trace arrive separately, so both redraw it.
function renderResultBox() {
  const r = lastResult;
  if (!r) return;
  const box = $('result');
  box.className = 'result';
  // What the phone heard, in words: the money first (the trace says how
  // many times this wish was paid), then the answer.
  const paid = paymentsFor(r.intent);
  let text;
  let cls;
  if (paid.length > 1) {
    cls = 'fail';
    text = t('chargedTwice', {
      times: paid.length === 2 ? t('twice') : t('nTimes', { n: paid.length }),
      amount: won(paid[0]),
      n: paid.length,
    });
  } else if (!r.delivered) {
    cls = 'info';
    text = t('noAnswer', { n: r.attempt }) + ' ' + (r.level === 'naive' ? t('noAnswerNaive') : t('noAnswerRetry'));
  } else if (r.status === 409) {
    cls = 'info';
    text = t('inProgress409');
  } else if (r.replayed) {
    cls = 'ok';
    text = t('replayedOnce', { status: r.status });
  } else if (r.status === 200) {
    cls = 'info';
    text = t('alreadyProcessed');
  } else if (r.status >= 200 && r.status < 300) {
    cls = 'ok';
    text = t('chargedOnce', { amount: won(paid[0] || 10000), answer: r.status });
  } else {
    cls = 'fail';
    text = t('refused', { status: r.status, summary: summarize(r.body) });
  }
  box.classList.add(cls);
  box.dataset.outcome = paid.length > 1 ? 'paid-twice' : cls;
  box.replaceChildren(paid.length > 1 ? el('strong', { class: 'paid-twice', 'data-paid': paid.length, text }) : text);
}

// summarize is a problem's title or detail instead of its raw JSON.
function summarize(body) {
  try {
    const p = JSON.parse(body);
    return p.detail || p.title || body;
  } catch {
    return body;
  }
}

$('send').addEventListener('click', () => {
  if (room && room.send({ type: 'send', basement: $('basement').checked })) {
    $('send').disabled = true;
    $('result').textContent = t('sending');
    $('result').className = 'result';
  }
});

start();
