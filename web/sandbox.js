// sandbox.js draws the sandbox's knobs: one select per knob of the
// policy, the level's own value marked when changed. Flipping one calls
// onChange(knob, value); the player flips it alone (every other knob back
// to the level's), so whatever breaks next is that knob's doing.

import { t } from './strings.js';
import { el } from './dom.js';

const KNOBS = ['claim', 'fingerprint', 'in_progress', 'replay', 'scope', 'lock', 'retention', 'lease', 'downstream_key', 'recovery_points'];

// DURATION_CHOICES are the retention and lease values the sandbox offers
// beside the policy's own: forever (0s), the lower rungs' 5 minutes, an
// hour (the lab clients' retry horizon) and the published 24 hours.
const DURATION_CHOICES = {
  retention: ['0s', '5m0s', '1h0m0s', '24h0m0s'],
  lease: ['0s', '30s', '5m0s'],
};

function knobChoices(knob, current, base, known) {
  const list = ((known && known[knob]) || DURATION_CHOICES[knob] || []).slice();
  for (const v of [current, base && base[knob]]) {
    if (v !== undefined && v !== null && !list.includes(v)) list.push(v);
  }
  return list;
}

// shown remembers what each box of knobs was drawn from.
const shown = new WeakMap();

// renderKnobs draws the knobs of policy into box; base is the level's own
// policy, known the values the engine offers per knob. Knobs that already
// show this policy are left alone: the bench calls it after every step,
// and each select drawn anew cost the step its options' layout and, in
// Chromium, a form-change task of 20-160 ms that laid the page out again.
export function renderKnobs(box, policy, { base, known, onChange }) {
  const from = JSON.stringify([policy, base, known]);
  if (shown.get(box) === from && [...box.querySelectorAll('select[data-knob]')].every((s) => s.value === String(policy[s.dataset.knob])))
    return;
  shown.set(box, from);
  box.replaceChildren(
    ...KNOBS.filter((k) => k in policy).map((knob) => {
      const changed = base && JSON.stringify(base[knob]) !== JSON.stringify(policy[knob]);
      const id = 'knob-' + knob;
      return el(
        'div',
        { class: 'knob' + (changed ? ' changed' : ''), 'data-knob': knob, 'data-changed': changed ? 'true' : 'false' },
        el('label', { for: id, text: t('knob_' + knob) }),
        el(
          'select',
          { id, 'data-knob': knob, onchange: (e) => onChange(knob, e.target.value) },
          knobChoices(knob, policy[knob], base, known).map((v) => el('option', { value: v, selected: v === policy[knob] }, String(v))),
        ),
        changed ? el('span', { class: 'tag' }, '⚙ ' + t('sandboxChanged')) : null,
      );
    }),
  );
}
