// editor.js is the source of the code editor of the lab page ("Your
// endpoint"): CodeMirror 6 with what a student needs to write a handler and
// a schema, and nothing else. `make editor` bundles it with esbuild, from
// the packages package-lock.json pins, into web/editor.js, which the page
// loads; nothing comes from a CDN.
//
//   const ed = createEditor(parent, { doc, language: 'javascript', label, onChange });
//   ed.text(); ed.setText(s); ed.showErrors([{ line, message }]); ed.errors(); ed.focus();
//
// Tab is not taken by the editor: it moves the focus on, as everywhere on
// the page, so that a keyboard user can always leave the box (indent with
// the editor's own Ctrl-] and Ctrl-[).

import { EditorState, RangeSetBuilder } from '@codemirror/state';
import {
  EditorView,
  keymap,
  lineNumbers,
  highlightActiveLine,
  highlightActiveLineGutter,
  drawSelection,
  highlightSpecialChars,
  ViewPlugin,
  Decoration,
} from '@codemirror/view';
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { syntaxHighlighting, HighlightStyle, bracketMatching, indentOnInput, syntaxTree } from '@codemirror/language';
import { tags } from '@lezer/highlight';
import { javascript } from '@codemirror/lang-javascript';
import { sql, SQLite } from '@codemirror/lang-sql';
import { unclosedBrace } from '../lab-brace.js';
import { lintGutter, setDiagnostics, linter, forEachDiagnostic } from '@codemirror/lint';

// The colours are the page's (lab.css sets --cm-* for the light and the
// dark theme, each at least 4.5:1 on the editor's background); the token
// kinds are also told apart by weight and style, not by colour alone.
const highlight = HighlightStyle.define([
  {
    tag: [tags.keyword, tags.controlKeyword, tags.operatorKeyword, tags.definitionKeyword, tags.modifier],
    color: 'var(--cm-keyword)',
    fontWeight: '600',
  },
  { tag: [tags.string, tags.special(tags.string), tags.regexp], color: 'var(--cm-string)' },
  { tag: [tags.number, tags.bool, tags.null, tags.atom], color: 'var(--cm-number)' },
  { tag: [tags.comment, tags.lineComment, tags.blockComment], color: 'var(--cm-comment)', fontStyle: 'italic' },
  { tag: [tags.function(tags.variableName), tags.function(tags.propertyName)], color: 'var(--cm-function)' },
  { tag: [tags.typeName, tags.className, tags.standard(tags.name)], color: 'var(--cm-type)' },
  { tag: tags.invalid, color: 'var(--cm-invalid)', textDecoration: 'underline wavy' },
]);

// syntaxErrors are, as the student types, the places the JavaScript
// parser could not read (the syntax tree's error nodes), at their lines: a
// missing brace is shown before the code is ever run. The message names
// what stands there ({near}: the line's text from that place, cut short),
// since the parser's guess has no words of its own; a run says the
// engine's own message, which then replaces it (createEditor).
//
// A missing } is the exception: the parser finds it lines below where it
// was left out, so where the braces do not balance the guess is made
// from the indentation instead (lab-brace.js), one error at the line the }
// was meant to come before.
function syntaxErrors(state, message, braceMessage) {
  const found = parserErrors(state, message);
  const brace = found.length && braceMessage ? unclosedBrace(state.doc.toString()) : null;
  if (brace) {
    const line = state.doc.line(Math.min(brace.before, state.doc.lines));
    return [
      {
        from: line.from,
        to: Math.max(line.from + 1, line.to),
        severity: 'error',
        message: braceMessage.replace('{open}', String(brace.open)),
        source: 'syntax',
      },
    ];
  }
  return found;
}

function parserErrors(state, message) {
  const found = [];
  syntaxTree(state)
    .cursor()
    .iterate((node) => {
      if (!node.type.isError || found.length >= 20) return;
      const at = Math.min(node.from, state.doc.length);
      const line = state.doc.lineAt(at);
      const rest = state.sliceDoc(at, line.to).trim();
      const near = rest ? (rest.length > 24 ? rest.slice(0, 24) + '…' : rest) : state.sliceDoc(line.from, line.to).trim().slice(-24);
      found.push({
        from: at,
        to: Math.max(at + 1, Math.min(node.to, line.to)),
        severity: 'error',
        message: message.replace('{near}', near || '…').replace('{line}', String(line.number)),
        source: 'syntax',
      });
    });
  return found;
}

// lineErrors are the errors the page found by running the code
// (showErrors: [{line, message}], 1-based), each over its whole line.
function lineErrors(state, list) {
  return list.map((e) => {
    const line = state.doc.line(Math.min(Math.max(1, e.line | 0 || 1), state.doc.lines));
    return { from: line.from, to: line.to, severity: e.severity || 'error', message: e.message, source: 'run' };
  });
}

// hangingIndent keeps a wrapped line's structure: the rest of a long line
// starts under its own indentation, two columns further in, instead of
// at the left edge, where on a phone it read as a line of its own. Each
// visible line gets a padding of its indentation plus two columns and a
// negative first-line indent of as much, so its first row stays where it
// was.
const indentOf = new Map();
function lineIndent(n) {
  let d = indentOf.get(n);
  if (!d) {
    d = Decoration.line({ attributes: { style: `padding-left: calc(${n + 2}ch + 6px); text-indent: -${n + 2}ch` } });
    indentOf.set(n, d);
  }
  return d;
}
const hangingIndent = ViewPlugin.fromClass(
  class {
    constructor(view) {
      this.decorations = this.build(view);
    }
    update(u) {
      if (u.docChanged || u.viewportChanged) this.decorations = this.build(u.view);
    }
    build(view) {
      const b = new RangeSetBuilder();
      for (const { from, to } of view.visibleRanges) {
        for (let pos = from; pos <= to;) {
          const line = view.state.doc.lineAt(pos);
          b.add(line.from, line.from, lineIndent(/^[ \t]*/.exec(line.text)[0].length));
          pos = line.to + 1;
        }
      }
      return b.finish();
    }
  },
  { decorations: (v) => v.decorations },
);

export function createEditor(parent, opts = {}) {
  const language = opts.language === 'sql' ? sql({ dialect: SQLite }) : javascript();
  // The page's errors stay marked until the code changes (their lines may
  // have moved then). The linter marks them with the syntax errors: a lint
  // that runs after showErrors (400 ms after the last key) would replace
  // them otherwise.
  // Once the page has said what running the code found (the engine's
  // SyntaxError at its line), the parser's guesses step aside until the
  // next edit: one message per error, the engine's.
  let shown = [];
  const message = opts.syntaxError || 'Syntax error at line {line}, near “{near}”';
  const diagnostics = (state) => [
    ...(opts.language === 'sql' || shown.length ? [] : syntaxErrors(state, message, opts.braceMissing)),
    ...lineErrors(state, shown),
  ];
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: opts.doc || '',
      extensions: [
        lineNumbers(),
        highlightActiveLineGutter(),
        highlightSpecialChars(),
        history(),
        drawSelection(),
        indentOnInput(),
        bracketMatching(),
        highlightActiveLine(),
        syntaxHighlighting(highlight),
        lintGutter(),
        language,
        linter((view) => diagnostics(view.state), { delay: 400 }),
        // Long lines wrap and the box grows with the code: nothing in it
        // scrolls on its own, on a phone either (a scrolling region inside
        // the page is one more thing a keyboard user must reach).
        EditorView.lineWrapping,
        hangingIndent,
        keymap.of([...defaultKeymap, ...historyKeymap]),
        EditorView.contentAttributes.of({ 'aria-label': opts.label || 'Code', spellcheck: 'false', autocapitalize: 'off' }),
        EditorView.updateListener.of((u) => {
          if (!u.docChanged) return;
          shown = [];
          if (opts.onChange) opts.onChange(u.state.doc.toString());
        }),
      ],
    }),
  });
  return {
    view,
    text: () => view.state.doc.toString(),
    setText(s) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: s } });
    },
    // showErrors marks each error at its line (1-based), in the gutter and
    // under the line, with its message, beside the syntax errors; an empty
    // list clears them. An edit clears them too.
    showErrors(list) {
      shown = list || [];
      view.dispatch(setDiagnostics(view.state, diagnostics(view.state)));
    },
    // errors lists what is marked now: [{line, message}].
    errors() {
      const out = [];
      forEachDiagnostic(view.state, (d, from) => out.push({ line: view.state.doc.lineAt(from).number, message: d.message }));
      return out;
    },
    focus: () => view.focus(),
  };
}
