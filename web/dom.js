// dom.js is the one DOM helper of every page: el builds an HTML element,
// svg an SVG one. Text is always set as text, never parsed as markup, so a
// nickname or a key from the network can be shown as it is. (The race
// view, drawn again on every step, builds plain objects with vdom.js's
// vsvg instead, the same attributes, and mounts them over the page.)
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
    else if (k.startsWith('on') && typeof v === 'function') listen(e, k.slice(2), v);
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

// An element's listeners are kept on it (e.__on) and called by one
// dispatcher, so that patch can hand a redrawn element's listeners to the
// element it keeps.
export function listen(e, type, fn) {
  (e.__on ||= {})[type] = fn;
  e.addEventListener(type, dispatch);
}

function dispatch(ev) {
  const fn = this.__on && this.__on[ev.type];
  if (fn) return fn.call(this, ev);
}

/** $ is the page's element with that id. */
export const $ = (id) => document.getElementById(id);

/** el builds an HTML element. */
export function el(tag, attrs, ...children) {
  return fill(document.createElement(tag), attrs || {}, children);
}

/** svg builds an SVG element. */
export function svg(tag, attrs, ...children) {
  return fill(document.createElementNS(SVG_NS, tag), attrs || {}, children);
}

// spaced leaves out null children (replaceChildren, unlike el, would
// write one as the text "null") and puts a space between the blocks left:
// on screen each block has its line, but read as text (a screen reader,
// textContent) a rule's words and the message under them would run
// together.
export function spaced(...nodes) {
  const out = [];
  for (const n of nodes.flat()) {
    if (n === null || n === undefined || n === false) continue;
    if (out.length) out.push(' ');
    out.push(n);
  }
  return out;
}

/** won formats an amount of won with thousands separators ("10,000"). */
export function won(n) {
  return WON.format(Number(n || 0));
}
// One formatter for every amount: toLocaleString builds one a call (about
// 0.15 ms each in Chromium, and a bench shows a few hundred amounts).
const WON = new Intl.NumberFormat('en-US');

// patch makes box's children look like the nodes given (elements built by
// el or svg, text, or null), keeping every node that can stay: an element
// of the same tag at the same place keeps its identity and only the
// attributes, text and listeners that differ change. A step of the bench
// changes a few marks and cells of views that hold thousands of nodes;
// replacing them all made the browser style, lay out and paint every one
// again (most of a step's time, measured in BenchmarkPlaygroundStep). The
// element that has focus keeps it when it stays.
export function patch(box, ...nodes) {
  const want = [];
  for (const n of nodes.flat(Infinity)) {
    if (n === null || n === undefined || n === false) continue;
    want.push(n instanceof Node ? n : document.createTextNode(String(n)));
  }
  patchChildren(box, want);
  return box;
}

function patchChildren(box, want) {
  // Children that name themselves (data-k, a race view's rows) are found
  // by name wherever they stand: a row that moves up is moved, not every
  // row below it rewritten as its neighbour.
  let keyed = null;
  for (const n of want) {
    const k = n.nodeType === 1 ? n.getAttribute('data-k') : null;
    if (k !== null) (keyed ||= new Map()).set(k, null);
  }
  if (keyed) {
    for (let c = box.firstElementChild; c; c = c.nextElementSibling) {
      const k = c.getAttribute('data-k');
      if (k !== null && keyed.has(k)) keyed.set(k, c);
    }
  }
  let cur = box.firstChild;
  for (const n of want) {
    const k = keyed && n.nodeType === 1 ? n.getAttribute('data-k') : null;
    const old = k !== null ? keyed.get(k) : null;
    if (old && same(old, n)) {
      keyed.set(k, null);
      if (old === cur) cur = cur.nextSibling;
      else box.insertBefore(old, cur);
      morph(old, n);
      continue;
    }
    // A child that a later node will claim by name stays for it.
    while (cur && cur.nodeType === 1 && keyed && keyed.get(cur.getAttribute('data-k')) === cur) cur = cur.nextSibling;
    if (!cur) {
      box.append(n);
      continue;
    }
    const next = cur.nextSibling;
    if (same(cur, n) && !(cur.nodeType === 1 && cur.hasAttribute('data-k') && cur.getAttribute('data-k') !== k)) {
      morph(cur, n);
    } else {
      box.replaceChild(n, cur);
    }
    cur = next;
  }
  while (cur) {
    const next = cur.nextSibling;
    cur.remove();
    cur = next;
  }
  // A named child kept for a node that then wanted another tag.
  if (keyed) for (const c of keyed.values()) if (c && c.parentNode === box) c.remove();
}

function same(a, b) {
  return a.nodeType === b.nodeType && a.nodeName === b.nodeName && a.namespaceURI === b.namespaceURI;
}

// morph makes the kept node a like the drawn node b.
function morph(a, b) {
  if (a.nodeType !== 1) {
    if (a.nodeValue !== b.nodeValue) a.nodeValue = b.nodeValue;
    return;
  }
  // (By name: reading .attributes makes an Attr object for each.)
  for (const name of a.getAttributeNames()) if (!b.hasAttribute(name)) a.removeAttribute(name);
  for (const name of b.getAttributeNames()) {
    const value = b.getAttribute(name);
    if (a.getAttribute(name) !== value) a.setAttribute(name, value);
  }
  if (!(a instanceof SVGElement)) for (const p of BOOL_PROPS) if (p in b && a[p] !== b[p]) a[p] = b[p];
  if ('value' in b && a.value !== b.value && a !== document.activeElement) a.value = b.value;
  if (a.__on || b.__on) {
    a.__on = b.__on;
    for (const type in b.__on) a.addEventListener(type, dispatch);
  }
  for (const k of KEPT) if (k in b) a[k] = b[k];
  patchChildren(a, [...b.childNodes]);
}

// Properties a view hangs on its elements, handed over with them.
const KEPT = ['__race'];

// startTheme sets the page's theme (set('dark' | 'light')): the one the
// person chose, kept under key, else the system's; and until the person
// chooses one, it follows the system's as it changes while the page is
// open (a laptop going dark at dusk), not only as it was at load.
export function startTheme(key, set) {
  const chosen = () => {
    try {
      return localStorage.getItem(key);
    } catch {
      return null;
    }
  };
  const system = matchMedia('(prefers-color-scheme: dark)');
  set(chosen() || (system.matches ? 'dark' : 'light'));
  system.addEventListener('change', (e) => {
    if (!chosen()) set(e.matches ? 'dark' : 'light');
  });
}
