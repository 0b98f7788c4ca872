// dom.js is the one DOM helper of every page: el builds an HTML element,
// svg an SVG one. Text is always set as text, never parsed as markup, so a
// nickname or a key from the network can be shown as it is.
//
//   el('p', { class: 'note', 'data-lane': 'A1', onclick: fn }, 'text', child)
//
// Attributes: class, text (the text content), on* (event listeners), the
// boolean properties checked/disabled/selected/hidden/open, and anything
// else as an attribute. A null, undefined or false value (or child) is
// skipped.

const SVG_NS = 'http://www.w3.org/2000/svg';
const BOOL_PROPS = new Set(['checked', 'disabled', 'selected', 'hidden', 'open']);

function fill(e, attrs, children) {
  for (const k in attrs) {
    const v = attrs[k];
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.setAttribute('class', v);
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('on') && typeof v === 'function') e.addEventListener(k.slice(2), v);
    else if (BOOL_PROPS.has(k) && !(e instanceof SVGElement)) e[k] = !!v;
    else e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) fill(e, null, c);
    else e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

/** el builds an HTML element. */
export function el(tag, attrs, ...children) {
  return fill(document.createElement(tag), attrs || {}, children);
}

/** svg builds an SVG element. */
export function svg(tag, attrs, ...children) {
  return fill(document.createElementNS(SVG_NS, tag), attrs || {}, children);
}

/** won formats an amount of won with thousands separators ("10,000"). */
export function won(n) {
  return Number(n || 0).toLocaleString('en-US');
}
