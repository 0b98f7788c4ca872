// vdom.js builds an SVG drawing as plain objects and lays it on the page,
// touching only what differs from the drawing already there. The race
// view draws its whole picture again on every step of the bench; building
// hundreds of SVG elements each time, and then comparing each with the
// page's (dom.js patch), was most of a step's drawing time
// (BenchmarkPlaygroundStep, docs/PERFORMANCE.md). Objects are cheap to make
// and to compare; only the elements that change are written.
//
//   const v = vsvg('g', { class: 'row', 'data-k': 'a:A1' }, vsvg('text', { text: 'A1' }));
//   const el = mount(container, v, oldV);   // oldV: the tree mounted last time, or null
//
// A V answers the few element methods a drawing uses while it is built
// (append, prepend, setAttribute, getAttribute, hasAttribute, children,
// classList.contains, textContent, querySelector(All) with simple
// selectors), so the drawing code reads as if it built elements. Listeners
// are kept as dom.js keeps them (__on), so dom.js's listen works on a V.

import { listen } from './dom.js';

const SVG_NS = 'http://www.w3.org/2000/svg';

export class V {
  constructor(tag) {
    this.tag = tag;
    this.attrs = {};
    this.kids = [];
    this.el = null;
    // The page's nodes of kids, in order, once mounted.
    this.nodes = null;
  }
  setAttribute(k, v) {
    this.attrs[k] = String(v);
  }
  getAttribute(k) {
    return Object.prototype.hasOwnProperty.call(this.attrs, k) ? this.attrs[k] : null;
  }
  hasAttribute(k) {
    return Object.prototype.hasOwnProperty.call(this.attrs, k);
  }
  removeAttribute(k) {
    delete this.attrs[k];
  }
  // dom.js's listen keeps the listener in __on and adds its dispatcher: a
  // V's dispatcher is added when it is mounted.
  addEventListener() {}
  append(...nodes) {
    addKids(this.kids, nodes);
  }
  prepend(...nodes) {
    const front = [];
    addKids(front, nodes);
    this.kids.unshift(...front);
  }
  get children() {
    return this.kids.filter((k) => k instanceof V);
  }
  get classList() {
    const list = (this.attrs.class || '').split(/\s+/);
    return { contains: (c) => list.includes(c) };
  }
  get textContent() {
    let s = '';
    for (const k of this.kids) s += k instanceof V ? k.textContent : k;
    return s;
  }
  querySelectorAll(sel) {
    const parts = parseSelector(sel);
    const out = [];
    const walk = (v) => {
      for (const k of v.kids) {
        if (!(k instanceof V)) continue;
        if (parts.some((p) => (!p.child || v === this) && matches(k, p))) out.push(k);
        walk(k);
      }
    };
    walk(this);
    return out;
  }
  querySelector(sel) {
    return this.querySelectorAll(sel)[0] || null;
  }
}

/** vsvg builds a V as dom.js's svg builds an element: the same attributes. */
export function vsvg(tag, attrs, ...children) {
  const v = new V(tag);
  for (const k in attrs) {
    const val = attrs[k];
    if (val === undefined || val === null || val === false) continue;
    if (k === 'text') v.kids = [String(val)];
    else if (k.startsWith('on') && typeof val === 'function') listen(v, k.slice(2), val);
    else v.attrs[k] = val === true ? '' : String(val);
  }
  addKids(v.kids, children);
  return v;
}

function addKids(into, nodes) {
  for (const n of nodes) {
    if (n === null || n === undefined || n === false) continue;
    if (Array.isArray(n)) addKids(into, n);
    else into.push(n instanceof V ? n : String(n));
  }
}

// --- selectors -------------------------------------------------------------------

// parseSelector reads a list of compound selectors: a tag, .class,
// [attr], [attr=value] and :not() of those, each part maybe led by
// ":scope >" (a child of the element asked). Anything else throws: a
// drawing that asks more must teach this first.
function parseSelector(sel) {
  return sel.split(',').map((raw) => {
    let s = raw.trim();
    const p = { child: false, tag: null, tests: [] };
    if (s.startsWith(':scope')) {
      const m = /^:scope\s*>\s*/.exec(s);
      if (!m) throw new Error('vdom: unsupported selector ' + raw);
      p.child = true;
      s = s.slice(m[0].length);
    }
    const tag = /^[a-zA-Z][\w-]*/.exec(s);
    if (tag) {
      p.tag = tag[0];
      s = s.slice(tag[0].length);
    }
    while (s) {
      let m;
      if ((m = /^\.([\w-]+)/.exec(s))) p.tests.push({ cls: m[1] });
      else if ((m = /^\[([\w-]+)(?:=(?:"([^"]*)"|([^\]]*)))?\]/.exec(s))) p.tests.push({ attr: m[1], value: m[2] ?? m[3] ?? null });
      else if ((m = /^:not\(\[([\w-]+)(?:=(?:"([^"]*)"|([^\]]*)))?\]\)/.exec(s)))
        p.tests.push({ attr: m[1], value: m[2] ?? m[3] ?? null, not: true });
      else throw new Error('vdom: unsupported selector ' + raw);
      s = s.slice(m[0].length);
    }
    return p;
  });
}

function matches(v, p) {
  if (p.tag && v.tag !== p.tag) return false;
  for (const t of p.tests) {
    let ok;
    if (t.cls) ok = v.classList.contains(t.cls);
    else ok = v.hasAttribute(t.attr) && (t.value === null || v.attrs[t.attr] === t.value);
    if (t.not ? ok : !ok) return false;
  }
  return true;
}

// --- mounting --------------------------------------------------------------------

// The attributes that code outside the drawing changes on the page
// (race.js's seekRace: the moment shown, the step lit up, the tab stop,
// the cut at the "now" line). Their values are compared with the page's
// own, the others' with the last drawing's (reading the page costs more
// than reading an object); one that the new drawing leaves out is taken
// off the page's element even when the last drawing left it out too.
const LIVE = ['visibility', 'data-current', 'data-touched', 'class', 'tabindex', 'width', 'x1', 'x2', 'data-cursor'];
const LIVE_VALUES = new Set(LIVE);

/**
 * mount lays v in container as its only child and returns the element.
 * old is the tree mounted there last (its elements are the page's): what
 * is the same is kept, and only the attributes, texts and listeners that
 * differ are written. The texts and the attributes that the page changes
 * on its own (LIVE_VALUES) are compared with the page's, so that such a
 * change (a class lit up, a tab stop moved) is undone where the drawing
 * says otherwise.
 */
export function mount(container, v, old) {
  if (old && old.el && old.el.parentNode === container && old.tag === v.tag) {
    update(old, v);
    return v.el;
  }
  const el = render(v);
  container.replaceChildren(el);
  return el;
}

function render(v) {
  const el = document.createElementNS(SVG_NS, v.tag);
  for (const k in v.attrs) el.setAttribute(k, v.attrs[k]);
  if (v.__on) for (const type in v.__on) listen(el, type, v.__on[type]);
  v.nodes = v.kids.map((k) => (k instanceof V ? render(k) : document.createTextNode(k)));
  if (v.nodes.length) el.append(...v.nodes);
  v.el = el;
  return el;
}

// update makes old's element look as v says, and hands it to v.
function update(old, v) {
  const el = old.el;
  v.el = el;
  for (const k in v.attrs) {
    const val = v.attrs[k];
    if (LIVE_VALUES.has(k) ? el.getAttribute(k) !== val : old.attrs[k] !== val) el.setAttribute(k, val);
  }
  for (const k in old.attrs) if (!(k in v.attrs)) el.removeAttribute(k);
  for (const k of LIVE) if (!(k in v.attrs) && !(k in old.attrs) && el.hasAttribute(k)) el.removeAttribute(k);
  const on = v.__on || null;
  if (on) {
    for (const type in on) {
      if (el.__on && type in el.__on) el.__on[type] = on[type];
      else listen(el, type, on[type]);
    }
  }
  if (el.__on) for (const type in el.__on) if (!on || !(type in on)) delete el.__on[type];
  updateKids(old, v);
}

// updateKids pairs v's children with old's: a child that names itself
// (data-k, a race view's row) with the old child of that name wherever it
// stood; any other with the next old child of its kind (the same tag and
// class, or a text), so that a layer that comes or goes (a mask, the
// broken rules) does not shift every layer after it onto its neighbour's
// element. A pair keeps the page's node; a child with none is made. The
// page's nodes are then put in v's order, moving only those out of place.
function updateKids(old, v) {
  const el = v.el;
  const named = new Map();
  const kinds = new Map();
  old.kids.forEach((k, i) => {
    const key = k instanceof V ? k.attrs['data-k'] : undefined;
    if (key !== undefined) named.set(key, i);
    else {
      const kind = kindOf(k);
      const q = kinds.get(kind);
      if (q) q.push(i);
      else kinds.set(kind, [i]);
    }
  });
  const next = new Map();
  const used = new Uint8Array(old.kids.length);
  const nodes = new Array(v.kids.length);
  v.kids.forEach((k, j) => {
    const key = k instanceof V ? k.attrs['data-k'] : undefined;
    let i = -1;
    if (key !== undefined) {
      if (named.has(key)) i = named.get(key);
    } else {
      const kind = kindOf(k);
      const q = kinds.get(kind);
      const at = next.get(kind) || 0;
      if (q && at < q.length) {
        i = q[at];
        next.set(kind, at + 1);
      }
    }
    const o = i >= 0 ? old.kids[i] : undefined;
    if (o !== undefined && !used[i] && o instanceof V === k instanceof V && (!(k instanceof V) || o.tag === k.tag)) {
      used[i] = 1;
      const node = old.nodes[i];
      if (k instanceof V) update(o, k);
      else if (node.data !== k) node.data = k;
      nodes[j] = node;
    } else {
      nodes[j] = k instanceof V ? render(k) : document.createTextNode(k);
    }
  });
  old.nodes.forEach((n, i) => {
    if (!used[i]) n.remove();
  });
  let cur = el.firstChild;
  for (const n of nodes) {
    if (n === cur) cur = cur.nextSibling;
    else el.insertBefore(n, cur);
  }
  // Anything left after them is not the drawing's.
  while (cur) {
    const after = cur.nextSibling;
    cur.remove();
    cur = after;
  }
  v.nodes = nodes;
}

// kindOf is what an unnamed child is paired by: its tag and class.
function kindOf(k) {
  return k instanceof V ? k.tag + '.' + (k.attrs.class || '') : '#text';
}
