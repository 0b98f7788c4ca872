// tile.js: one figure of a tally (a value over its label), the view the
// projector's live tally (teach-race.js) and its verdict (teach-verdict.js)
// both draw with. It takes data and returns DOM.
import { el } from '/dom.js';

export function tile(label, value, cls = '') {
  return el(
    'div',
    { class: 'tile ' + cls },
    el('div', { class: 'tval', text: String(value) }),
    el('div', { class: 'tlabel', text: label }),
  );
}
