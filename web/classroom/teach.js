// teach.js: the projector. The instructor signs in with the token from the
// start-up link, opens a room, fires storms and asks the class to predict;
// every trace event of every request arrives over the room's websocket and
// is drawn as it comes. All user text is set as text, never as markup.
import { connect, el, won } from "./room.js";
// The lane view is the playground's own (web/lanes.js), so a room sees the
// same lanes its students met in the lessons.
import { drawLanes, lanesFromEvents } from "/lanes.js";

const $ = (id) => document.getElementById(id);
const MAX_LANES = 120; // lanes drawn in full; the rest are counted
const REDRAW_MS = 150; // the lanes are redrawn at most this often while a storm streams in

let room = null;
let roster = new Map(); // student id → nickname
let run = 0;
let lanes = new Map(); // lane → its events, for the lanes drawn
let paidTwice = new Set(); // lanes whose commit was a second transfer for their wish
let hidden = new Set(); // lanes not drawn (counted all the same)
let redraw = 0;
let queue = [];
let frame = 0;
let live = null;
let filled = false;

function freshLive() {
  return { commits: new Map(), statuses: new Map(), lost: 0, crashed: 0, requests: new Set() };
}

async function api(path, body) {
  const res = await fetch(path, {
    method: body === undefined ? "GET" : "POST",
    headers: body === undefined ? {} : { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin",
  });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(data.detail || data.title || res.statusText);
  return data;
}

async function init() {
  const m = location.hash.match(/token=([^&]+)/);
  if (m) {
    // Trade the token for a session cookie, then drop it from the address
    // bar so that it is not projected or bookmarked.
    history.replaceState(null, "", location.pathname + location.search);
    try {
      await api("/classroom/api/session", { token: decodeURIComponent(m[1]) });
    } catch (e) {
      $("signin-error").textContent = e.message;
    }
  }
  const s = await api("/classroom/api/session").catch(() => ({ instructor: false }));
  if (!s.instructor) {
    $("signin").hidden = false;
    return;
  }
  const code = new URLSearchParams(location.search).get("room");
  if (code) enter(code);
  else $("lobby").hidden = false;
}

$("create").addEventListener("click", async () => {
  try {
    const r = await api("/classroom/api/rooms", {});
    history.replaceState(null, "", "/classroom/teach?room=" + encodeURIComponent(r.code));
    enter(r.code);
  } catch (e) {
    $("lobby-error").textContent = e.message;
  }
});

function enter(code) {
  $("lobby").hidden = true;
  $("room").hidden = false;
  $("code").textContent = code;
  $("join-url").textContent = location.host + "/classroom/";
  $("qr").src = "/classroom/api/rooms/" + encodeURIComponent(code) + "/qr.png";
  room = connect(code, "projector", {
    onMessage,
    onStatus(s) {
      $("conn").textContent = s;
      $("conn").className = "pill " + s;
      if (s === "gone") {
        room.stop();
        $("room").hidden = true;
        $("lobby").hidden = false;
        $("lobby-error").textContent = "Room " + code + " no longer exists (was the server restarted?). Open a new one.";
      }
    },
  });
}

function onMessage(msg) {
  switch (msg.type) {
    case "welcome":
      fillControls(msg.state);
      renderState(msg.state);
      break;
    case "state":
      renderState(msg);
      break;
    case "storm":
      newRun(msg.run, `storm: ${msg.spec.clients} clients × ${msg.spec.attempts} at ${msg.spec.level}, fault ${msg.spec.fault}`);
      $("fire").disabled = true;
      break;
    case "events":
      queue.push(...msg.events);
      if (!frame) frame = requestAnimationFrame(drain);
      break;
    case "report":
      drainNow();
      renderReport(msg);
      break;
    case "error":
      $("control-error").textContent = msg.detail;
      setTimeout(() => ($("control-error").textContent = ""), 5000);
      break;
  }
}

function fillControls(s) {
  if (filled) return;
  filled = true;
  const opts = (sel, items) => items.forEach((v) => sel.append(el("option", { value: v, text: v })));
  opts($("level"), s.levels);
  opts($("fault"), s.faults);
  opts($("phase"), s.phases);
  $("phase").value = "execute";
  $("level").value = s.level;
}

function renderState(s) {
  $("online").textContent = `${s.online} of ${s.students} students online` + (s.dropped ? ` · ${s.dropped} slow screens dropped` : "");
  $("fire").disabled = s.storming;
  roster = new Map((s.roster || []).map((r) => [r.id, r.nickname]));
  const ul = $("roster");
  ul.replaceChildren(...(s.roster || []).map((r) => el("li", { class: r.online ? "" : "offline", text: r.nickname + (r.online ? "" : " (away)") })));
  if (s.run !== run && s.run > run) newRun(s.run, "level " + s.level);
  renderVote(s.vote, s.choices);
}

function renderVote(v, choices) {
  $("vote-question").textContent = v.question || "No question asked yet. Ask the class before a storm.";
  $("vote-status").textContent = v.open ? `voting: ${v.votes} votes so far` : v.revealed ? `${v.votes} votes` : v.question ? `locked: ${v.votes} votes` : "";
  const h = $("histogram");
  if (!v.revealed || !v.counts) {
    h.replaceChildren();
    return;
  }
  const max = Math.max(1, ...Object.values(v.counts));
  const label = { 201: "201", 409: "409", 422: "422", double: "a second transfer" };
  h.replaceChildren(...(choices || Object.keys(v.counts)).map((c) => {
    const n = v.counts[c] || 0;
    const right = v.actual && v.actual.choice === c;
    const bar = el("div", { class: "hbar" + (right ? " right" : "") });
    bar.style.width = (100 * n) / max + "%";
    return el("div", { class: "hrow", "data-choice": c }, el("span", { class: "hlabel", text: label[c] || c }), bar,
      el("span", { class: "hcount", text: String(n) + (right ? " ← what happened" : "") }));
  }));
  if (v.actual) {
    h.append(el("p", { class: "actual", text: `The second request of the first wish (lane ${v.actual.lane}) got ${v.actual.status || "no answer"}` + (v.actual.choice === "double" ? ", and the money moved twice." : ".") }));
  }
}

function newRun(id, label) {
  run = id;
  lanes = new Map();
  paidTwice = new Set();
  hidden = new Set();
  queue = [];
  live = freshLive();
  clearTimeout(redraw);
  redraw = 0;
  $("lanes").replaceChildren();
  $("run-label").textContent = `(ledger ${id}, ${label})`;
  renderLive();
}

function drainNow() {
  if (frame) cancelAnimationFrame(frame);
  drain();
  drawNow();
}

// drain draws the queued events once per animation frame, however many
// arrived, so a storm of thousands of events never freezes the page.
function drain() {
  frame = 0;
  const evs = queue;
  queue = [];
  for (const e of evs) {
    if (e.run > run) newRun(e.run, "");
    if (e.run !== run) continue;
    addEvent(e);
  }
  renderLive();
}

function laneLabel(lane) {
  const m = /^(s\d+)\.(\d+)$/.exec(lane);
  if (m && roster.has(m[1])) return `${roster.get(m[1])} #${m[2]}`;
  return lane;
}

function addEvent(e) {
  live.requests.add(e.lane);
  if (e.phase === "commit" && e.outcome === "committed") {
    const n = (live.commits.get(e.intent) || 0) + 1;
    live.commits.set(e.intent, n);
    if (n > 1) paidTwice.add(e.lane);
  }
  if (e.phase === "respond") {
    if (e.outcome === "lost" || e.outcome === "timed-out") live.lost++;
    else live.statuses.set(e.status, (live.statuses.get(e.status) || 0) + 1);
  }
  if (e.outcome === "crashed") live.crashed++;
  let evs = lanes.get(e.lane);
  if (!evs) {
    const student = /^s\d+\./.test(e.lane);
    if (lanes.size >= MAX_LANES && !student) {
      hidden.add(e.lane);
      return;
    }
    evs = [];
    lanes.set(e.lane, evs);
  }
  evs.push(e);
  if (!redraw) redraw = setTimeout(drawNow, REDRAW_MS);
}

// drawNow redraws the lanes with the playground's lane view. Students'
// lanes carry their nicknames (as text: the view never parses markup), and
// a lane whose commit paid a wish a second time says so.
function drawNow() {
  clearTimeout(redraw);
  redraw = 0;
  const drawn = lanesFromEvents([].concat(...lanes.values()));
  for (const lane of drawn) {
    // The key is parsed at validate, so the first event of a lane has none.
    lane.key = lane.key || (lane.events.find((e) => e.key) || {}).key;
    if (paidTwice.has(lane.id)) {
      lane.verdict = "fail";
      lane.verdict_text = "paid twice: a second transfer for wish " + lane.intent;
    }
    lane.id = laneLabel(lane.id);
  }
  drawLanes($("lanes"), drawn, { showResponse: false });
}

function renderLive() {
  if (!live) return;
  let dup = 0;
  for (const n of live.commits.values()) if (n > 1) dup += n - 1;
  $("lane-count").textContent = `${live.requests.size} requests` + (hidden.size ? ` (${hidden.size} lanes not drawn, all counted)` : "");
  const st = (c) => live.statuses.get(c) || 0;
  $("tally").replaceChildren(
    tile("duplicates (live)", dup, dup > 0 ? "fail" : "ok"),
    tile("201", st(201)), tile("409", st(409)), tile("422", st(422)),
    tile("lost / timed out", live.lost), tile("crashed", live.crashed),
  );
}

function tile(label, value, cls = "") {
  return el("div", { class: "tile " + cls }, el("div", { class: "tval", text: String(value) }), el("div", { class: "tlabel", text: label }));
}

function renderReport(msg) {
  if (msg.run !== run) newRun(msg.run, "level " + msg.level);
  const s = msg.report.summary;
  const label = msg.storm ? `storm of ${msg.storm.requests} requests at ${msg.level}, ${msg.storm.duration_ms} ms` : `level ${msg.level}`;
  $("run-label").textContent = `(ledger ${msg.run}, ${label})`;
  $("tally").replaceChildren(
    tile("duplicates", s.duplicates, s.duplicates > 0 ? "fail" : "ok"),
    tile("paid twice", won(s.paid_twice), s.paid_twice > 0 ? "fail" : "ok"),
    tile("409s", s.conflicts_409), tile("422s", s.mismatches_422), tile("replays", s.replays),
    tile("lost answers", s.lost_responses), tile("transfers", s.transfers), tile("money moved", won(s.money_moved)),
  );
  $("tally").dataset.duplicates = String(s.duplicates);
  $("rules").replaceChildren(...msg.report.rules.map((r) =>
    el("li", { class: r.ok ? "ok" : "fail" }, el("span", { class: "sym", text: r.ok ? "✓" : "✗" }), " " + r.rule.title,
      ...(r.ok ? [] : [el("div", { class: "violation", text: r.violations[0].message })]))));
  $("balances").replaceChildren(el("tr", {}, el("th", { text: "account" }), el("th", { text: "balance" })),
    ...Object.entries(msg.balances).map(([k, v]) => el("tr", {}, el("td", { text: k }), el("td", { text: won(v) }))));
  $("keys-total").textContent = msg.keys_total > msg.keys.length ? `(${msg.keys.length} of ${msg.keys_total})` : `(${msg.keys_total})`;
  $("keytable").replaceChildren(
    el("tr", {}, ...["key", "customer", "state", "status", "transfer"].map((h) => el("th", { text: h }))),
    ...msg.keys.map((k) => el("tr", {}, ...[k.key, k.customer, k.state || "(no state)", k.status || "", k.transfer_id || ""].map((v) => el("td", { text: String(v) })))));
  if (msg.keys_total === 0) $("keytable").append(el("tr", {}, el("td", { colspan: "5", text: msg.level === "naive" ? "naive keeps no key table" : "no keys yet" })));
  if (msg.vote) renderVote(msg.vote);
}

$("fault").addEventListener("change", () => {
  const f = $("fault").value;
  $("phase").disabled = !(f === "crash" || f === "client-timeout");
});

$("storm-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const num = (id) => parseInt($(id).value, 10) || 0;
  const fault = $("fault").value;
  const spec = {
    level: $("level").value, clients: num("clients"), keys: num("keys"), attempts: num("attempts"), fault,
    latency_ms: num("latency"), slow_ms: num("slow"),
  };
  if (fault === "crash" || fault === "client-timeout") spec.phase = $("phase").value;
  if ($("change").checked) spec.change_amount = true;
  room.send({ type: "storm", storm: spec });
});
$("ask").addEventListener("click", () => room.send({ type: "ask" }));
$("reveal").addEventListener("click", () => room.send({ type: "reveal" }));
$("reset").addEventListener("click", () => room.send({ type: "level", level: $("level").value }));

init();
