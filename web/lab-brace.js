// lab-brace.js guesses where a handler's missing } belongs. A parser finds
// an unclosed brace only at the end of the file (V8 says "Unexpected end
// of input" at the last line; the editor's parser guesses somewhere after
// the brace), though the student left it out many lines above. The
// indentation tells: the first line that sits no deeper than a block
// still open, and is not that block's own closing, is where the block's }
// was meant to be.
//
//   unclosedBrace(text) // {open, before} (1-based lines) or null
//
// It answers only when the file opens more { than it closes (strings,
// template literals and comments skipped), so a file whose braces balance
// is left to the parser's own message.

export function unclosedBrace(text) {
  const lines = String(text || '').split('\n');
  const open = []; // {line, indent} of each { not yet closed
  let first = null;
  let inBlock = false; // inside /* … */
  let quote = ''; // inside '…', "…" or `…` (a template may span lines)
  for (let n = 0; n < lines.length; n++) {
    const s = lines[n];
    const indent = s.length - s.trimStart().length;
    const lead = s.trim();
    // The line sits at or above a block still open, and does not close
    // it: that block's } was meant to come before it. A } shallower than
    // the block still open closes an outer one: the inner's is missing.
    if (!first && !inBlock && !quote && lead) {
      const top = open[open.length - 1];
      const closes = /^[}\])]/.test(lead);
      if (top && top.line < n + 1 && (closes ? lead[0] === '}' && indent < top.indent : indent <= top.indent))
        first = { open: top.line, before: n + 1 };
    }
    for (let i = 0; i < s.length; i++) {
      const c = s[i];
      if (inBlock) {
        if (c === '*' && s[i + 1] === '/') {
          inBlock = false;
          i++;
        }
        continue;
      }
      if (quote) {
        if (c === '\\') i++;
        else if (c === quote) quote = '';
        continue;
      }
      if (c === '/' && s[i + 1] === '/') break;
      if (c === '/' && s[i + 1] === '*') {
        inBlock = true;
        i++;
        continue;
      }
      if (c === "'" || c === '"' || c === '`') quote = c;
      else if (c === '{') open.push({ line: n + 1, indent });
      else if (c === '}') open.pop();
    }
    // A quote other than a template's ends with its line.
    if (quote && quote !== '`') quote = '';
  }
  if (!open.length) return null;
  if (first) return first;
  // Nothing shallower followed: the } is missing at the end.
  const top = open[open.length - 1];
  return { open: top.line, before: lines.length };
}
