// day.js draws a replayed day of traffic as a picture: the day's clock in
// columns, each column's attempts stacked by outcome (paid once, paid
// again, 409, 422, replayed, lost, refused), the money moved more than once as it
// piles up, and the causes of loss. The picture itself is drawn in Go
// (lab.Picture.SVG, the same one `idemlab day replay --svg` writes and the
// classroom shows after a storm); this module puts it on the page, makes
// each column a button, and opens the attempts of a chosen moment in the
// race view.

import { el } from './dom.js';
import { t } from './strings.js';
import { buildRace, drawRace } from './race.js';

// showPicture puts the day's SVG into box and makes its columns choosable:
// onMoment(bucket) is called with the picture's bucket (its attempts are
// bucket.sample). The SVG comes from idemlab's own Go code and is drawn
// with presentation attributes only, so the page's style policy allows it.
export function showPicture(box, picture, svgText, onMoment) {
  const doc = new DOMParser().parseFromString(svgText, 'image/svg+xml');
  const root = doc.documentElement;
  if (!root || root.nodeName !== 'svg') {
    box.replaceChildren(el('p', { class: 'empty', text: t('dayNoPicture') }));
    return null;
  }
  const svgEl = document.importNode(root, true);
  svgEl.setAttribute('role', 'group');
  svgEl.setAttribute('aria-label', t('dayPictureLabel'));
  svgEl.removeAttribute('width');
  svgEl.removeAttribute('height');
  svgEl.classList.add('day-picture-svg');
  const buckets = new Map((picture.buckets || []).map((b) => [String(b.n), b]));
  for (const g of svgEl.querySelectorAll('g[data-bucket]')) {
    const b = buckets.get(g.dataset.bucket);
    if (!b || !b.attempts) continue;
    const choose = () => {
      for (const o of svgEl.querySelectorAll('g[data-bucket].chosen')) o.classList.remove('chosen');
      g.classList.add('chosen');
      onMoment(b);
    };
    g.setAttribute('role', 'button');
    g.setAttribute('tabindex', '0');
    g.setAttribute('aria-label', t('dayMoment', { from: fmtClock(b.from_ms), n: b.attempts }));
    g.addEventListener('click', choose);
    g.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        choose();
      }
    });
  }
  box.replaceChildren(svgEl);
  return svgEl;
}

// momentEvents turns a moment's attempts (what the day recorded of each:
// when it was sent, what it got, whether it paid) into trace events the
// race view draws: sent, what decided it, what the client heard.
export function momentEvents(bucket) {
  const out = [];
  let seq = 0;
  const sorted = (bucket.sample || []).slice().sort((a, b) => a.sent_ms - b.sent_ms || a.index - b.index);
  for (const a of sorted) {
    const base = { lane: a.lane, intent: a.intent, customer: a.customer, key: a.key };
    const at = (ms) => Object.assign({ seq: ++seq, t_us: Math.round(ms * 1000) }, base);
    out.push(Object.assign(at(a.sent_ms), { phase: 'receive', outcome: 'ok' }));
    const decided = at(a.sent_ms + 1);
    switch (a.outcome) {
      case 'paid-once':
      case 'paid-again':
        out.push(Object.assign(decided, { phase: 'commit', outcome: 'committed', status: 201, paid_again: a.outcome === 'paid-again' }));
        break;
      case '409':
        out.push(Object.assign(decided, { phase: 'claim', outcome: 'conflict', status: 409 }));
        break;
      case '422':
        out.push(Object.assign(decided, { phase: 'compare', outcome: 'mismatch', status: 422 }));
        break;
      case 'replayed':
        out.push(Object.assign(decided, { phase: 'compare', outcome: 'replayed', status: a.status }));
        break;
      default:
        break;
    }
    const heard = at(a.sent_ms + 2);
    if (!a.delivered || !a.status) out.push(Object.assign(heard, { phase: 'respond', outcome: 'lost', status: a.status || 0 }));
    else if (a.outcome === 'refused') out.push(Object.assign(heard, { phase: 'respond', outcome: 'rejected', status: a.status }));
    else out.push(Object.assign(heard, { phase: 'respond', outcome: 'delivered', status: a.status }));
  }
  return out;
}

// showMoment draws a moment's attempts in the race view, on the day's clock.
export function showMoment(box, bucket, opts = {}) {
  const model = buildRace({ events: momentEvents(bucket), clock: 'time', policy: opts.policy || {} });
  const head = el(
    'p',
    { class: 'day-moment-head', 'data-bucket': bucket.n },
    t('dayMomentHead', { from: fmtClock(bucket.from_ms), to: fmtClock(bucket.to_ms), n: bucket.attempts }),
    bucket.sample && bucket.sample.length < bucket.attempts ? ' ' + t('dayMomentSample', { n: bucket.sample.length }) : '',
  );
  const view = el('div', { class: 'race-box' });
  box.replaceChildren(head, view);
  box.hidden = false;
  return drawRace(view, model, { width: opts.width || box.clientWidth || 900, collapseOver: 8 });
}

function fmtClock(ms) {
  const s = Math.floor(ms / 1000);
  if (s < 60) return (ms / 1000).toFixed(ms < 10000 ? 2 : 0) + ' s';
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return String(h).padStart(2, '0') + ':' + String(m).padStart(2, '0');
}
