// teach-verdict.js: the projector's verdict on a ledger (the checker's
// rules, tallies, balances and key table, the storm's picture) and the
// room's vote with its histogram. It keeps no state: teach.js hands it
// the message, the page's RoomRace (teach-race.js) and whether the page is
// the room's screen. All user text is set as text, never as markup.
import { $, el, won } from '/dom.js';
import { showPicture } from '/day.js';
import { ruleTitle, inLang, extraPayments, t as words } from '/strings.js';
import { t, tileWord, choiceWord, lang } from './words.js';
import { tile } from './tile.js';

// renderVote shows the room's vote; screen is true on the room's screen,
// laneLabel names a lane after its student.
export function renderVote(v, screen, laneLabel) {
  $('vote-question').textContent = v.question ? t('question') : t('noQuestion');
  // The room's screen shows a vote only when there is one.
  $('vote-question').closest('section').hidden = screen && !v.question;
  $('vote-status').textContent = v.open
    ? t('votingSoFar', { n: v.votes })
    : v.revealed
      ? t('votesCast', { n: v.votes })
      : v.question
        ? t('votesLocked', { n: v.votes })
        : '';
  const h = $('histogram');
  if (!v.revealed || !v.counts) {
    h.replaceChildren();
    return;
  }
  const max = Math.max(1, ...Object.values(v.counts));
  h.replaceChildren(
    ...(v.choices || Object.keys(v.counts)).map((c) => {
      const n = v.counts[c] || 0;
      const right = v.actual && v.actual.choice === c;
      const bar = el('div', { class: 'hbar' + (right ? ' right' : '') });
      bar.style.width = (100 * n) / max + '%';
      return el(
        'div',
        { class: 'hrow', 'data-choice': c },
        el('span', { class: 'hlabel', text: choiceWord(c) }),
        bar,
        el('span', { class: 'hcount', text: String(n) + (right ? ' ← ' + t('whatHappened') : '') }),
      );
    }),
  );
  // One sentence, from the one judgement the server made: the answer
  // named is the choice, so it cannot contradict the histogram.
  h.append(
    el('p', {
      class: 'actual',
      text:
        v.actual && v.actual.choice
          ? t('actualWas', { lane: laneLabel(v.actual.lane), answer: choiceWord(v.actual.choice) })
          : t('actualUnknown'),
    }),
  );
}

// shortJSON replaces each JSON object in a checker's sentence by what
// tells it apart (its transfer, else its first member): a room reads
// "got 201 {tr_000006}, … got {tr_000005}", not two lines of raw JSON.
function shortJSON(message) {
  return message.replace(/\{"[^{}]*\}/g, (j) => {
    try {
      const o = JSON.parse(j);
      if (o.transfer_id) return '{' + o.transfer_id + '}';
      const [k, v] = Object.entries(o)[0] || [];
      return k ? `{${k}: ${typeof v === 'object' ? '…' : v}, …}` : '{}';
    } catch {
      return '{…}';
    }
  });
}

// violationText shows a broken rule's sentence, its JSON cut short; the
// full text is one click away.
function violationText(message) {
  const short = shortJSON(message);
  if (short === message) return el('div', { class: 'violation', text: message });
  return el('details', { class: 'violation' }, el('summary', { text: short }), el('code', { text: message }));
}

// drawPicture shows the storm as a picture; a column moves the race to
// that moment.
function drawPicture(msg, race) {
  $('picture-box').hidden = false;
  showPicture($('picture'), msg.picture, (lang === 'ko' && msg.picture_svg_ko) || msg.picture_svg, (bucket) => {
    if (race.seekTime(bucket.to_ms)) $('race').scrollIntoView({ block: 'nearest' });
  });
}

// extraTile is one half of the extra transfers' sentence as a tile; both
// carry the whole sentence (data-extra), the one the race view's ledger
// and the checker's rule 1 say (server/words_browser_test.go).
function extraTile(label, value, s) {
  const box = tile(label, value, s.duplicates > 0 ? 'fail' : 'ok');
  box.dataset.extra = extraPayments(s.duplicates, s.paid_twice);
  return box;
}

// renderReport shows a ledger's verdict beside the race view of race, the
// page's RoomRace; screen is true on the room's screen.
export function renderReport(msg, race, screen) {
  if (msg.run !== race.shownRun()) race.newRun(msg.run, msg.level, 'level ' + msg.level);
  const s = msg.report.summary;
  const label = msg.storm
    ? t('stormDone', { requests: msg.storm.requests, level: msg.level, ms: msg.storm.duration_ms })
    : t('levelLabel', { level: msg.level });
  $('run-label').textContent = `(${t('ledgerN', { n: msg.run })}, ${label})`;
  $('tally').replaceChildren(
    // The extra transfers in the two halves of their one sentence ("39
    // extra transfers" · "390,000 won moved more than once"), which the
    // race view's ledger and the checker's rule 1 say whole.
    extraTile(words('extraPaymentsLabel'), won(s.duplicates), s),
    extraTile(words('paidMoreLabel'), t('amountWon', { n: won(s.paid_twice) }), s),
    tile(t('tile_409'), s.conflicts_409),
    tile(t('tile_422'), s.mismatches_422),
    tile(tileWord('tile_replays', s.replays), s.replays),
    tile(tileWord('tile_lost', s.lost_responses), s.lost_responses),
    tile(tileWord('tile_transfers', s.transfers), s.transfers),
    tile(t('tile_moved'), t('amountWon', { n: won(s.money_moved) })),
  );
  $('tally').dataset.duplicates = String(s.duplicates);
  $('rules').replaceChildren(
    ...msg.report.rules.map((r) =>
      el(
        'li',
        { class: r.ok ? 'ok' : 'fail' },
        el('span', { class: 'sym', text: r.ok ? '✓' : '✗' }),
        ' ' + ruleTitle(r.rule, lang),
        r.ok ? null : violationText(inLang(r.violations[0].message, r.violations[0].message_ko, lang)),
      ),
    ),
  );
  $('balances').replaceChildren(
    el('tr', {}, el('th', { text: t('colAccount') }), el('th', { text: t('colBalance') })),
    ...Object.entries(msg.balances).map(([k, v]) => el('tr', {}, el('td', { text: k }), el('td', { text: t('amountWon', { n: won(v) }) }))),
  );
  $('keys-total').textContent = msg.keys_total > msg.keys.length ? `(${msg.keys.length} of ${msg.keys_total})` : `(${msg.keys_total})`;
  $('keytable').replaceChildren(
    el('tr', {}, ...['key', 'customer', 'state', 'status', 'transfer'].map((h) => el('th', { text: h }))),
    ...msg.keys.map((k) =>
      el(
        'tr',
        {},
        ...[k.key, k.customer, k.state || '(no state)', k.status || '', k.transfer_id || ''].map((v) => el('td', { text: String(v) })),
      ),
    ),
  );
  if (msg.keys_total === 0)
    $('keytable').append(el('tr', {}, el('td', { colspan: '5', text: msg.level === 'naive' ? t('naiveNoKeys') : t('noKeysYet') })));
  // A crash that left keys in_progress breaks no rule (nothing was paid
  // twice) but nothing was paid either: that is the lesson, said in words.
  const stuck = msg.keys.filter((k) => k.state === 'in_progress').length;
  $('stuck').hidden = !(msg.storm && stuck > 0);
  $('stuck').textContent = t('stuckInProgress', { n: stuck });
  if (msg.vote) renderVote(msg.vote, screen, race.laneLabel);
  // The checker's broken rules join the attempts they name in the view.
  // One line per broken rule: a naive storm breaks the same rule dozens of
  // times, and the room reads the rule, not the list.
  const violations = [];
  for (const r of msg.report.rules || []) {
    const vs = r.violations || [];
    if (!vs.length) continue;
    const more = vs.length > 1 ? t('moreLikeIt', { n: vs.length - 1 }) : '';
    const message = shortJSON(inLang(vs[0].message, vs[0].message_ko, lang)) + more;
    violations.push(
      Object.assign({}, vs[0], { rule: Object.assign({}, r.rule, { title: ruleTitle(r.rule, lang) }), message, message_ko: message }),
    );
  }
  race.setVerdict(violations, msg.policy);
  // The storm as a picture (drawn by the server, the same drawing as
  // `idemlab day replay --svg`): a column moves the race to its moment.
  // It is drawn in the frame after the race, which the room reads first.
  if (msg.picture && msg.picture_svg) setTimeout(() => msg.run === race.shownRun() && drawPicture(msg, race), 0);
  race.refresh();
}
