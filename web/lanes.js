// lanes.js draws client attempts as lanes: one row per attempt, its trace
// events as a path of phases, its answer and a verdict shown as an icon and
// a word (never colour alone). The player and the classroom both use it.
//
// API (plain data in, DOM out; no framework, no global state):
//
//   import { drawLanes, lanesFromEvents } from './lanes.js';
//
//   drawLanes(container, lanes, options)
//     Replaces container's children with one <li class="lane"> per lane.
//     lanes: [{id, intent, customer, key, state, next_phase, next_part, fault,
//              events: [engine trace events], response: {status, header, body},
//              delivered, verdict: 'ok'|'info'|'fail'|'pending', verdict_text}]
//       (the shape of State.lanes from the engine module; every field but
//        id and events may be missing).
//     options (all optional):
//       selected: lane id to mark as "moves next"
//       onSelect(laneId): makes each lane choosable (a radio button), called on choice
//       onEvent(event): makes each phase chip a button, called on click
//       t(key, vars): string lookup (default: the player's strings.js)
//       showResponse: true to show each finished lane's answer (default true)
//
//   lanesFromEvents(events) → lanes
//     Groups a flat stream of trace events (seq, lane, intent, customer, key,
//     phase, sql, outcome, status, note) by lane, for views that see only
//     traces (the classroom's websocket). A lane's verdict comes from its
//     last event: delivered → ok, lost / timed-out / crashed → info when
//     money moved for it, else pending until it ends.
//
// Each element carries data-lane, data-verdict and data-phase attributes so
// tests and stylesheets can find them without depending on the words.

import { t as defaultT } from './strings.js';

// Icons are characters that common system fonts carry (no emoji, which a
// classroom machine may draw as empty boxes); each comes with its word.
const VERDICT_ICON = { ok: '✔', info: 'ℹ', fail: '✘', pending: '…' };

const OUTCOME_ICON = {
  ok: '✓', skipped: '·', rejected: '⊘', claimed: '◆', duplicate: '≡', 'taken-over': '↻',
  mismatch: '≠', conflict: '‖', replayed: '↺', executed: '→', committed: '■', declined: '⊘',
  stored: '▤', crashed: '✸', lost: '✂', 'timed-out': '✗', delivered: '✉', error: '⚠',
};

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k.startsWith('data-') || k.startsWith('aria-') || k === 'role' || k === 'title' || k === 'type' ||
      k === 'name' || k === 'value' || k === 'for' || k === 'id' || k === 'tabindex') e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// verdictBadge returns the icon-and-word badge for a verdict, usable on its own.
export function verdictBadge(verdict, text, t = defaultT) {
  const v = VERDICT_ICON[verdict] ? verdict : 'pending';
  const word = t('verdict' + v[0].toUpperCase() + v.slice(1));
  const long = text || t('verdict' + v[0].toUpperCase() + v.slice(1) + 'Text');
  return el('span', { class: 'verdict verdict-' + v, 'data-verdict': v },
    el('span', { class: 'verdict-icon', 'aria-hidden': 'true', text: VERDICT_ICON[v] }), ' ',
    el('strong', { class: 'verdict-word', text: word }),
    el('span', { class: 'verdict-text', text: ' — ' + long }));
}

function stateWord(state, t) {
  switch (state) {
    case 'waiting': return t('laneWaiting');
    case 'running': return t('laneRunning');
    case 'crashed': return t('laneCrashed');
    case 'done': return t('laneDone');
  }
  return state || '';
}

function phaseChip(ev, onEvent) {
  const label = [
    el('span', { class: 'chip-phase', text: ev.phase }),
    el('span', { class: 'chip-outcome' },
      el('span', { 'aria-hidden': 'true', text: (OUTCOME_ICON[ev.outcome] || '•') + ' ' }),
      ev.outcome + (ev.status ? ' ' + ev.status : '')),
  ];
  const title = [ev.note, ev.sql].filter(Boolean).join('\n');
  const attrs = {
    class: 'chip outcome-' + ev.outcome + (ev.sql ? ' has-sql' : ''),
    'data-phase': ev.phase, 'data-outcome': ev.outcome, 'data-seq': ev.seq, title: title || undefined,
  };
  if (onEvent) {
    return el('li', {}, el('button', Object.assign(attrs, { type: 'button', onclick: () => onEvent(ev) }), label));
  }
  return el('li', attrs, label);
}

// drawLanes renders lanes into container (see the top of this file).
export function drawLanes(container, lanes, options = {}) {
  const t = options.t || defaultT;
  const showResponse = options.showResponse !== false;
  const items = (lanes || []).map((lane, i) => {
    const verdict = lane.verdict || 'pending';
    const selected = options.selected === lane.id;
    const head = el('div', { class: 'lane-head' });
    if (options.onSelect) {
      const id = 'lane-pick-' + lane.id;
      const finished = lane.state === 'done' || lane.state === 'crashed';
      head.append(el('input', {
        type: 'radio', name: 'next-lane', id, value: lane.id, checked: selected, disabled: finished,
        'aria-label': t('chooseLane') + ': ' + lane.id, onchange: () => options.onSelect(lane.id),
      }));
      head.append(el('label', { for: id, class: 'lane-id' }, el('span', { class: 'lane-num', text: String(i + 1) }), lane.id));
    } else {
      head.append(el('span', { class: 'lane-id' }, lane.id));
    }
    head.append(el('span', { class: 'lane-meta' },
      lane.intent ? el('span', {}, t('laneIntent') + ' ', el('code', { text: lane.intent })) : null,
      lane.customer ? el('span', {}, t('laneCustomer') + ' ', el('code', { text: lane.customer })) : null,
      el('span', {}, t('laneKey') + ' ', lane.key ? el('code', { text: lane.key }) : t('laneNoKey'))));
    head.append(verdictBadge(verdict, lane.verdict_text, t));
    if (selected) head.append(el('span', { class: 'moves-next', text: '▶ ' + t('movesNext') }));

    const path = el('ol', { class: 'lane-path', 'aria-label': lane.id });
    for (const ev of lane.events || []) path.append(phaseChip(ev, options.onEvent));
    if (lane.state === 'running' || lane.state === 'waiting') {
      if (lane.next_phase) {
        path.append(el('li', { class: 'chip chip-next', 'data-phase': lane.next_phase },
          el('span', { class: 'chip-phase', text: t('laneNext', { phase: lane.next_phase + (lane.next_part ? ' (' + lane.next_part + ')' : '') }) }),
          el('span', { class: 'chip-outcome', text: stateWord(lane.state, t) })));
      }
    }
    if (!(lane.events || []).length && !lane.next_phase) {
      path.append(el('li', { class: 'chip chip-empty', text: t('noEvents') }));
    }

    // A lane still on its way says so on its next phase already.
    const onItsWay = (lane.state === 'running' || lane.state === 'waiting') && lane.next_phase;
    const foot = el('div', { class: 'lane-foot' },
      onItsWay ? null : el('span', { class: 'lane-state', 'data-state': lane.state || '' }, stateWord(lane.state, t)));
    if (lane.fault && lane.fault.kind) {
      foot.append(el('span', { class: 'lane-fault' }, '⚡ ' + t('laneScriptedFault', { kind: lane.fault.kind, phase: lane.fault.phase })));
    }
    if (showResponse && lane.response && lane.response.status) {
      const replayed = (lane.response.header || []).some((h) => /^idempotent-replayed$/i.test(h.name));
      foot.append(el('details', { class: 'lane-response' },
        el('summary', {},
          el('strong', { class: 'status status-' + String(lane.response.status)[0] + 'xx', text: String(lane.response.status) }),
          ' ' + t('showResponse'),
          replayed ? el('span', { class: 'tag', text: ' ↺ ' + t('laneReplayed') }) : null,
          lane.delivered === false ? el('span', { class: 'tag tag-lost', text: ' ✂ ' + t('laneNotDelivered') }) : null),
        el('pre', { class: 'response-text' },
          (lane.response.header || []).map((h) => h.name + ': ' + h.value).join('\n') + '\n\n' + (lane.response.body || ''))));
    }
    return el('li', {
      class: 'lane verdict-' + verdict + (selected ? ' selected' : ''),
      'data-lane': lane.id, 'data-verdict': verdict, 'data-state': lane.state || '',
    }, head, path, foot);
  });
  container.replaceChildren(...items);
}

// lanesFromEvents groups a flat stream of trace events into lanes (see the
// top of this file).
export function lanesFromEvents(events) {
  const byId = new Map();
  for (const ev of events || []) {
    let lane = byId.get(ev.lane);
    if (!lane) {
      lane = { id: ev.lane, intent: ev.intent, customer: ev.customer, key: ev.key, events: [], state: 'running', verdict: 'pending' };
      byId.set(ev.lane, lane);
    }
    lane.events.push(ev);
  }
  for (const lane of byId.values()) {
    lane.events.sort((a, b) => a.seq - b.seq);
    const moved = lane.events.some((e) => e.outcome === 'committed');
    const last = lane.events[lane.events.length - 1];
    if (last.phase === 'respond' || last.outcome === 'crashed' || last.outcome === 'rejected') {
      lane.state = last.outcome === 'crashed' ? 'crashed' : 'done';
      const unheard = last.outcome === 'lost' || last.outcome === 'timed-out' || last.outcome === 'crashed';
      lane.verdict = unheard ? (moved ? 'info' : 'pending') : 'ok';
      if (last.status) lane.response = { status: last.status, header: [], body: '' };
      lane.delivered = !unheard;
    }
  }
  return [...byId.values()];
}
