// teach.js: the projector. The instructor signs in with the token from the
// start-up link, opens a room, fires storms and asks the class to predict;
// every trace event of every request arrives over the room's websocket and
// is drawn as it comes (teach-race.js), with the verdict and the vote
// beside it (teach-verdict.js). This module signs in, opens the room,
// hands its messages on and runs the controls. All user text is set as
// text, never as markup.
import { connect, showConnection } from './room.js';
import { $, el } from '/dom.js';
import { t, translatePage, lang } from './words.js';
import { setLang } from '/strings.js';
import { RoomRace, measure } from './teach-race.js';
import { renderReport, renderVote } from './teach-verdict.js';

// The page is the presenter (controls, and a small picture) unless it is
// opened as the room's screen (?view=screen), the audience view that the
// projector shows: the join screen, then the race filling the screen.
const SCREEN = new URLSearchParams(location.search).get('view') === 'screen';
// race owns the race view's state: the ledger shown, its events, the player.
const race = new RoomRace({ screen: SCREEN });

let room = null;
let filled = false;

async function api(path, body, method) {
  const res = await fetch(path, {
    method: method || (body === undefined ? 'GET' : 'POST'),
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
  });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(data.detail || data.title || res.statusText);
  return data;
}

document.body.classList.toggle('screen-view', SCREEN);
translatePage();
setLang(lang); // the race view's words (web/strings.js), in the page's language

// show puts one part of the page on screen: the sign-in, the lobby or the
// room. The first two share the gate's main landmark, the room is its own;
// the page never shows two mains.
function show(part) {
  for (const id of ['signin', 'lobby', 'room']) $(id).hidden = id !== part;
  $('gate').hidden = part === 'room';
}

async function init() {
  const m = location.hash.match(/signin=([^&]+)/);
  if (m) {
    // The start-up link's one-time code is traded for a session cookie and
    // dropped from the address bar; the server forgets the code as it is
    // used, so the copy in the browser's history signs nobody in.
    history.replaceState(null, '', location.pathname + location.search);
    try {
      await api('/classroom/api/session', { signin: decodeURIComponent(m[1]) });
    } catch (e) {
      $('signin-error').textContent = e.message;
    }
  }
  const s = await api('/classroom/api/session').catch(() => ({ instructor: false }));
  if (!s.instructor) {
    show('signin');
    return;
  }
  $('signout').hidden = false;
  const c = new URLSearchParams(location.search).get('room');
  if (c) enter(c);
  else show('lobby');
}

// The instructor's secret is typed into a password field, never put in a
// URL, so no history, bookmark or projected address bar keeps it.
$('signin-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const secret = $('secret').value;
  $('secret').value = '';
  try {
    await api('/classroom/api/session', { token: secret });
    $('signin-error').textContent = '';
    init();
  } catch (e) {
    $('signin-error').textContent = e.message;
  }
});

$('signout').addEventListener('click', async () => {
  await api('/classroom/api/session', undefined, 'DELETE').catch(() => {});
  if (room) room.stop();
  room = null;
  $('signout').hidden = true;
  show('signin');
});

$('create').addEventListener('click', async () => {
  try {
    const r = await api('/classroom/api/rooms', {});
    history.replaceState(null, '', '/classroom/teach?room=' + encodeURIComponent(r.code) + (lang !== 'en' ? '&lang=' + lang : ''));
    enter(r.code);
  } catch (e) {
    $('lobby-error').textContent = e.message;
  }
});

function enter(c) {
  race.setCode(c);
  show('room');
  $('code').textContent = c;
  $('join-url').textContent = location.origin + '/classroom/';
  $('qr').src = '/classroom/api/rooms/' + encodeURIComponent(c) + '/qr.png';
  $('open-screen').href = '/classroom/teach?view=screen&room=' + encodeURIComponent(c) + (lang !== 'en' ? '&lang=' + lang : '');
  $('open-screen').title = t('screenHelp');
  $('open-screen').hidden = false;
  race.showStage(false);
  room = connect(c, 'projector', {
    onMessage,
    onStatus(s) {
      showConnection(s, t(s));
      // The verdict's count (data-duplicates) stands for what the room
      // said over this connection: once it is lost, only the verdict the
      // room sends again after its welcome sets it.
      if (s === 'reconnecting') delete $('tally').dataset.duplicates;
      if (s === 'gone') {
        show('lobby');
        $('lobby-error').textContent = t('roomGoneProjector', { code: c });
      }
    },
  });
}

function onMessage(msg) {
  switch (msg.type) {
    case 'welcome':
      // A (re)connection: the room sends its current ledger's storm,
      // events and verdict after this, so the picture is rebuilt from
      // nothing rather than added to what this page still shows.
      fillControls(msg.state);
      // The address is read aloud and typed: with its scheme (typed
      // without https://, a proxy's TLS port answers 400) and without the
      // room (the code beside it says it); the QR code has all.
      if (msg.join_url) $('join-url').textContent = msg.join_url.replace(/\?.*$/, '');
      race.newRun(-1, msg.state.level, '');
      renderState(msg.state);
      break;
    case 'state':
      renderState(msg);
      break;
    case 'storm':
      if (msg.policy) race.announcePolicy(msg.spec.level, msg.policy);
      race.newRun(
        msg.run,
        msg.spec.level,
        t('stormLabel', { clients: msg.spec.clients, attempts: msg.spec.attempts, level: msg.spec.level, fault: msg.spec.fault }),
      );
      $('fire').disabled = true;
      // The room watches the storm, not the form: the panel folds away
      // and the join card becomes a strip above the view.
      $('storm-panel').open = false;
      keepFocusOnPanel();
      race.showStage(true);
      break;
    case 'events':
      race.receive(msg.events);
      break;
    case 'report': {
      // The page's own figure of a finished storm drawn (make bench reads
      // it): the last events recorded, the verdict, the view built and drawn.
      const t0 = performance.now();
      race.drainNow();
      renderReport(msg, race, SCREEN);
      $('race').getBoundingClientRect(); // the layout is part of the cost
      measure('idemlab-projector-report', t0);
      break;
    }
    case 'error':
      $('control-error').textContent = msg.detail;
      setTimeout(() => ($('control-error').textContent = ''), 5000);
      break;
  }
}

// keepFocusOnPanel gives the focus to the storm panel's summary when what
// held it, the Fire button, was disabled or folded away with the panel: a
// keyboard user would otherwise find it on the page's body and start again
// from the top. The summary is where the panel opens again.
function keepFocusOnPanel() {
  const panel = $('storm-panel');
  const summary = panel.querySelector('summary');
  const a = document.activeElement;
  const lost = a === document.body ? firedHere : panel.contains(a) && a !== summary && (a.disabled || !panel.open);
  if (lost) summary.focus();
  firedHere = false;
}

// firedHere is set when this page fired a storm and not yet seen it start.
let firedHere = false;

function fillControls(s) {
  if (filled) return;
  filled = true;
  const opts = (sel, items) => items.forEach((v) => sel.append(el('option', { value: v, text: v })));
  opts($('level'), s.levels);
  opts($('fault'), s.faults);
  opts($('phase'), s.phases);
  $('phase').value = 'execute';
  $('level').value = s.level;
  // The form as the instructor last fired it: a reload keeps it.
  let saved = null;
  try {
    saved = JSON.parse(localStorage.getItem(FORM_KEY) || 'null');
  } catch {
    saved = null;
  }
  if (saved && typeof saved === 'object') {
    for (const id of ['level', 'clients', 'keys', 'attempts', 'fault', 'phase', 'latency', 'slow']) {
      const v = saved[id];
      if (typeof v === 'string' && [...($(id).options || [])].every((o) => o.value !== v) && $(id).tagName === 'SELECT') continue;
      if (typeof v === 'string') $(id).value = v;
    }
    $('change').checked = saved.change === true;
    $('phase').disabled = !($('fault').value === 'crash' || $('fault').value === 'client-timeout');
  }
}

const FORM_KEY = 'idemlab.classroom.storm-form';

function renderState(s) {
  $('online').textContent =
    t('onlineCount', { online: s.online, students: s.students }) + (s.dropped ? ' · ' + t('dropped', { n: s.dropped }) : '');
  $('online').dataset.online = String(s.online);
  $('fire').disabled = s.storming;
  if (s.storming) keepFocusOnPanel();
  // The roster comes only when it changed: a state without one keeps it.
  if (s.roster) race.setRoster(s.roster);
  renderRoster(s);
  // The join screen names who is in: the newest first, as they arrive.
  if (s.roster) {
    const names = s.roster
      .filter((r) => r.online)
      .map((r) => r.nickname)
      .reverse();
    $('joined-names').replaceChildren(
      ...(names.length ? names.slice(0, 40).map((n) => el('li', { text: n })) : [el('li', { class: 'muted', text: t('noneYet') })]),
    );
  }
  if (s.run !== race.shownRun() && s.run > race.shownRun()) race.newRun(s.run, s.level, t('levelLabel', { level: s.level }));
  $('interrupted').hidden = !s.interrupted;
  renderVote(s.vote, SCREEN, race.laneLabel);
}

$('fault').addEventListener('change', () => {
  const f = $('fault').value;
  $('phase').disabled = !(f === 'crash' || f === 'client-timeout');
});

$('storm-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const num = (id) => parseInt($(id).value, 10) || 0;
  const fault = $('fault').value;
  const spec = {
    level: $('level').value,
    clients: num('clients'),
    keys: num('keys'),
    attempts: num('attempts'),
    fault,
    latency_ms: num('latency'),
    slow_ms: num('slow'),
  };
  if (fault === 'crash' || fault === 'client-timeout') spec.phase = $('phase').value;
  if ($('change').checked) spec.change_amount = true;
  room.send({ type: 'storm', storm: spec });
  firedHere = true;
  try {
    const form = { change: $('change').checked };
    for (const id of ['level', 'clients', 'keys', 'attempts', 'fault', 'phase', 'latency', 'slow']) form[id] = $(id).value;
    localStorage.setItem(FORM_KEY, JSON.stringify(form));
  } catch {
    // storage refused: the form resets on reload, nothing else
  }
});
// The question is about the next storm, at the level the form will fire.
$('ask').addEventListener('click', () => room.send({ type: 'ask', level: $('level').value }));
$('reveal').addEventListener('click', () => room.send({ type: 'reveal' }));
$('reset').addEventListener('click', () => room.send({ type: 'level', level: $('level').value }));

init();

// --- keeping the room the class's --------------------------------------------

// renderRoster lists the students, each with a button that removes them
// (a kicked student's secret and address add no one to the room again),
// and shows whether the room is locked to new students.
function renderRoster(s) {
  renderLock(s.locked);
  renderAdmission(s);
  if (!s.roster) return;
  const ul = $('roster');
  ul.replaceChildren(
    ...s.roster.map((r) => {
      const kick = el('button', {
        type: 'button',
        class: 'kick presenter-only',
        text: '✕',
        'aria-label': t('kick') + ' ' + r.nickname,
        title: t('kick') + ' ' + r.nickname,
      });
      kick.addEventListener('click', () => room && room.send({ type: 'kick', student: r.id }));
      return el(
        'li',
        { class: r.online ? '' : 'offline', 'data-student': r.id },
        el('span', { text: r.nickname + (r.online ? '' : ' ' + t('away')) }),
        kick,
      );
    }),
  );
}

function renderLock(locked) {
  $('lock').textContent = locked ? t('unlockRoom') : t('lockRoom');
  $('lock').setAttribute('aria-pressed', locked ? 'true' : 'false');
  $('lock').dataset.locked = locked ? 'true' : 'false';
  $('locked').hidden = !locked;
}

// renderAdmission shows the room's class size and the phones it turned
// away in the last minute, why, and a button that lets the waiting in:
// the size raised to fit those a full room refused, the room unlocked.
// The phones ask again on their own every few seconds.
let waiting = { size: 0, unlock: false };
function renderAdmission(s) {
  const size = $('class-size');
  if (document.activeElement !== size && s.class_size) size.value = String(s.class_size);
  size.dataset.size = String(s.class_size || '');
  const by = s.refused || {};
  const reasons = ['full', 'locked', 'paced', 'network'].filter((r) => by[r] > 0);
  const n = reasons.reduce((sum, r) => sum + by[r], 0);
  const note = $('refused-note');
  note.hidden = n === 0;
  note.dataset.refused = String(n);
  note.textContent = n ? t('refusedCount') + ' ' + reasons.map((r) => t('refusedBy_' + r, { n: by[r] })).join(' · ') : '';
  // A phone refused while the room was locked needs a seat too.
  waiting = { size: by.full || by.locked ? s.students + (by.full || 0) + (by.locked || 0) : 0, unlock: !!(by.locked && s.locked) };
  $('make-room').hidden = !(waiting.size > (s.class_size || 0) || waiting.unlock);
}

$('size-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const n = parseInt($('class-size').value, 10);
  if (room && n >= 1) room.send({ type: 'size', size: n });
});

$('make-room').addEventListener('click', () => {
  if (!room) return;
  if (waiting.size > Number($('class-size').dataset.size || 0)) {
    const size = Math.min(1500, waiting.size);
    room.send({ type: 'size', size });
    $('class-size').value = String(size); // focused next, the field is not refilled from the room's state
  }
  if (waiting.unlock) room.send({ type: 'unlock' });
  // The button hides once they are let in: the focus stays in the form.
  $('class-size').focus();
});

$('lock').addEventListener('click', () => {
  if (room) room.send({ type: $('lock').dataset.locked === 'true' ? 'unlock' : 'lock' });
});
