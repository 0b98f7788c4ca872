// teach.js: the projector. The instructor signs in with the token from the
// start-up link, opens a room, fires storms and asks the class to predict;
// every trace event of every request arrives over the room's websocket and
// is drawn as it comes in the race view (web/race.js, the one the lessons'
// bench draws), on the trace's own clock. A recorded storm can be paused,
// stepped, scrubbed and replayed in slow motion from its events alone. All
// user text is set as text, never as markup.
import { connect } from "./room.js";
import { el, won } from "/dom.js";
import { buildRace, drawRace, exportRace, fmtMS, timeOf as timeMS } from "/race.js";
import { showPicture } from "/day.js";
import { t, translatePage, choiceWord, lang } from "./words.js";
import { setLang } from "/strings.js";

const $ = (id) => document.getElementById(id);
// REDRAW_MS: while a storm streams in, the view is rebuilt at most this
// often; a storm of 5,000 requests sends tens of thousands of events.
const REDRAW_MS = 150;
// MAX_EVENTS bounds what one run records: 1,000 clients × 5 attempts is
// about 45,000 events. Beyond it events are counted, not kept.
const MAX_EVENTS = 60000;
// A key's group collapses identical attempts into one counted row once it
// has more than COLLAPSE_OVER. The view draws no more rows than a window
// and a half holds (at least MIN_ROWS, at most MAX_ROWS; the rest are
// counted): each row drawn is time spent on every frame of a replay.
const MIN_ROWS = 20;
const MAX_ROWS = 40;
const COLLAPSE_OVER = 6;
// The page is the presenter (controls, and a small picture) unless it is
// opened as the room's screen (?view=screen), the audience view that the
// projector shows: the join screen, then the race filling the screen.
const SCREEN = new URLSearchParams(location.search).get("view") === "screen";
// VIEW_SCALE enlarges the drawn view for the back of a room: race.css's
// smallest words (11 px) are 16 px on the presenter, 21 px on the screen.
const VIEW_SCALE = SCREEN ? 1.9 : 1.46;

let room = null;
let code = "";
let roster = new Map(); // student id → nickname
let run = 0;
let level = "";
let live = null;
let filled = false;
let stormed = false; // a storm has been shown: the join card is a strip

// What the run recorded, and the race view built from it.
let events = []; // the run's trace events, as they arrived
let unrecorded = 0; // events past MAX_EVENTS, counted only
let violations = [];
let policy = {};
const policies = new Map(); // level → the policy a storm announced for it
let model = null;
let modelDirty = false;
let expanded = new Set();
let queue = [];
let frame = 0;
let redraw = 0;
let drawCost = 0; // ms the last view took to build and draw
let seekFrame = 0;

// The player: "live" follows the events as they come; "paused" freezes the
// picture at cursor (events keep being recorded); "replay" moves cursor
// along the trace's clock at speed × real time.
const view = { mode: "live", cursor: 0, speed: 0.1, anchorT: 0, anchorWall: 0, raf: 0 };

function freshLive() {
  return { commits: new Map(), statuses: new Map(), lost: 0, crashed: 0, requests: new Set() };
}

async function api(path, body, method) {
  const res = await fetch(path, {
    method: method || (body === undefined ? "GET" : "POST"),
    headers: body === undefined ? {} : { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin",
  });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(data.detail || data.title || res.statusText);
  return data;
}

document.body.classList.toggle("screen-view", SCREEN);
translatePage();
setLang(lang); // the race view's words (web/strings.js), in the page's language

async function init() {
  const m = location.hash.match(/signin=([^&]+)/);
  if (m) {
    // The start-up link's one-time code is traded for a session cookie and
    // dropped from the address bar; the server forgets the code as it is
    // used, so the copy in the browser's history signs nobody in.
    history.replaceState(null, "", location.pathname + location.search);
    try {
      await api("/classroom/api/session", { signin: decodeURIComponent(m[1]) });
    } catch (e) {
      $("signin-error").textContent = e.message;
    }
  }
  const s = await api("/classroom/api/session").catch(() => ({ instructor: false }));
  if (!s.instructor) {
    $("signin").hidden = false;
    return;
  }
  $("signout").hidden = false;
  const c = new URLSearchParams(location.search).get("room");
  if (c) enter(c);
  else $("lobby").hidden = false;
}

// The instructor's secret is typed into a password field, never put in a
// URL, so no history, bookmark or projected address bar keeps it.
$("signin-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const secret = $("secret").value;
  $("secret").value = "";
  try {
    await api("/classroom/api/session", { token: secret });
    $("signin").hidden = true;
    $("signin-error").textContent = "";
    init();
  } catch (e) {
    $("signin-error").textContent = e.message;
  }
});

$("signout").addEventListener("click", async () => {
  await api("/classroom/api/session", undefined, "DELETE").catch(() => {});
  if (room) room.stop();
  room = null;
  for (const id of ["room", "lobby", "signout"]) $(id).hidden = true;
  $("signin").hidden = false;
});

$("create").addEventListener("click", async () => {
  try {
    const r = await api("/classroom/api/rooms", {});
    history.replaceState(null, "", "/classroom/teach?room=" + encodeURIComponent(r.code) + (lang !== "en" ? "&lang=" + lang : ""));
    enter(r.code);
  } catch (e) {
    $("lobby-error").textContent = e.message;
  }
});

function enter(c) {
  code = c;
  $("lobby").hidden = true;
  $("room").hidden = false;
  $("code").textContent = c;
  $("join-url").textContent = location.host + "/classroom/";
  $("qr").src = "/classroom/api/rooms/" + encodeURIComponent(c) + "/qr.png";
  $("open-screen").href = "/classroom/teach?view=screen&room=" + encodeURIComponent(c) + (lang !== "en" ? "&lang=" + lang : "");
  $("open-screen").title = t("screenHelp");
  $("open-screen").hidden = false;
  showStage(false);
  room = connect(c, "projector", {
    onMessage,
    onStatus(s) {
      $("conn").textContent = t(s);
      $("conn").className = "pill " + s;
      $("conn").dataset.status = s;
      $("reconnecting").hidden = s !== "reconnecting";
      if (s === "gone") {
        $("room").hidden = true;
        $("lobby").hidden = false;
        $("lobby-error").textContent = t("roomGoneProjector", { code: c });
      }
    },
  });
}

function onMessage(msg) {
  switch (msg.type) {
    case "welcome":
      // A (re)connection: the room sends its current ledger's storm,
      // events and verdict after this, so the picture is rebuilt from
      // nothing rather than added to what this page still shows.
      fillControls(msg.state);
      // The address is read aloud and typed: without its scheme, and
      // without the room (the code beside it says it); the QR code has all.
      if (msg.join_url) $("join-url").textContent = msg.join_url.replace(/^https?:\/\//, "").replace(/\?.*$/, "");
      newRun(-1, msg.state.level, "");
      renderState(msg.state);
      break;
    case "state":
      renderState(msg);
      break;
    case "storm":
      if (msg.policy) policies.set(msg.spec.level, msg.policy);
      newRun(msg.run, msg.spec.level, t("stormLabel", { clients: msg.spec.clients, attempts: msg.spec.attempts, level: msg.spec.level, fault: msg.spec.fault }));
      $("fire").disabled = true;
      // The room watches the storm, not the form: the panel folds away
      // and the join card becomes a strip above the view.
      $("storm-panel").open = false;
      showStage(true);
      break;
    case "events":
      queue.push(...msg.events);
      if (!frame) frame = requestAnimationFrame(drain);
      break;
    case "report": {
      // The page's own figure of a finished storm drawn (make bench reads
      // it): the last events recorded, the verdict, the view built and drawn.
      const t0 = performance.now();
      drainNow();
      renderReport(msg);
      $("race").getBoundingClientRect(); // the layout is part of the cost
      measure("idemlab-projector-report", t0);
      break;
    }
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
  // The form as the instructor last fired it: a reload keeps it.
  let saved = null;
  try {
    saved = JSON.parse(localStorage.getItem(FORM_KEY) || "null");
  } catch {
    saved = null;
  }
  if (saved && typeof saved === "object") {
    for (const id of ["level", "clients", "keys", "attempts", "fault", "phase", "latency", "slow"]) {
      const v = saved[id];
      if (typeof v === "string" && [...($(id).options || [])].every((o) => o.value !== v) && $(id).tagName === "SELECT") continue;
      if (typeof v === "string") $(id).value = v;
    }
    $("change").checked = saved.change === true;
    $("phase").disabled = !($("fault").value === "crash" || $("fault").value === "client-timeout");
  }
}

const FORM_KEY = "idemlab.classroom.storm-form";

function renderState(s) {
  $("online").textContent = t("onlineCount", { online: s.online, students: s.students }) + (s.dropped ? " · " + t("dropped", { n: s.dropped }) : "");
  $("online").dataset.online = String(s.online);
  $("fire").disabled = s.storming;
  // The roster comes only when it changed: a state without one keeps it.
  if (s.roster) roster = new Map(s.roster.map((r) => [r.id, r.nickname]));
  renderRoster(s);
  // The join screen names who is in: the newest first, as they arrive.
  if (s.roster) {
    const names = s.roster.filter((r) => r.online).map((r) => r.nickname).reverse();
    $("joined-names").replaceChildren(...(names.length ? names.slice(0, 40).map((n) => el("li", { text: n })) : [el("li", { class: "muted", text: t("noneYet") })]));
  }
  if (s.run !== run && s.run > run) newRun(s.run, s.level, t("levelLabel", { level: s.level }));
  $("interrupted").hidden = !s.interrupted;
  renderVote(s.vote);
}

function renderVote(v) {
  $("vote-question").textContent = v.question ? t("question") : t("noQuestion");
  // The room's screen shows a vote only when there is one.
  $("vote-question").closest("section").hidden = SCREEN && !v.question;
  $("vote-status").textContent = v.open ? t("votingSoFar", { n: v.votes }) : v.revealed ? t("votesCast", { n: v.votes }) : v.question ? t("votesLocked", { n: v.votes }) : "";
  const h = $("histogram");
  if (!v.revealed || !v.counts) {
    h.replaceChildren();
    return;
  }
  const max = Math.max(1, ...Object.values(v.counts));
  h.replaceChildren(...(v.choices || Object.keys(v.counts)).map((c) => {
    const n = v.counts[c] || 0;
    const right = v.actual && v.actual.choice === c;
    const bar = el("div", { class: "hbar" + (right ? " right" : "") });
    bar.style.width = (100 * n) / max + "%";
    return el("div", { class: "hrow", "data-choice": c }, el("span", { class: "hlabel", text: choiceWord(c) }), bar,
      el("span", { class: "hcount", text: String(n) + (right ? " ← " + t("whatHappened") : "") }));
  }));
  // One sentence, from the one judgement the server made: the answer
  // named is the choice, so it cannot contradict the histogram.
  h.append(el("p", { class: "actual", text: v.actual && v.actual.choice ? t("actualWas", { lane: laneLabel(v.actual.lane), answer: choiceWord(v.actual.choice) }) : t("actualUnknown") }));
}

// showStage switches the room between its two layouts: before the first
// storm the join card is big and the storm form open; once a storm is
// shown the join card is a strip and the race view sits above the fold.
function showStage(on) {
  stormed = stormed || on;
  $("room").classList.toggle("stormed", stormed);
  $("stage").hidden = !stormed;
}

// policyOf is the policy the view names the key row's states with: the one
// a storm announced for the level, else what the level's name says.
function policyOf(lvl) {
  return policies.get(lvl) || (lvl === "naive" ? { claim: "none" } : {});
}

function newRun(id, lvl, label) {
  if (id === run && lvl === level) {
    // The same ledger announced twice (its state, then its storm): keep
    // what it recorded; the storm's message may name its policy.
    $("run-label").textContent = `(${t("ledgerN", { n: id })}, ${label})`;
    policy = policyOf(level);
    modelDirty = true;
    return;
  }
  run = id;
  level = lvl || level;
  policy = policyOf(level);
  events = [];
  $("picture-box").hidden = true;
  $("picture").replaceChildren();
  unrecorded = 0;
  violations = [];
  expanded = new Set();
  model = null;
  modelDirty = false;
  queue = [];
  live = freshLive();
  clearTimeout(redraw);
  redraw = 0;
  stopReplay();
  view.mode = "live";
  view.cursor = 0;
  $("race").replaceChildren();
  $("run-label").textContent = id > 0 ? `(${t("ledgerN", { n: id })}, ${label})` : "";
  // The last ledger's verdict is not this one's: until this one's comes,
  // the verdict says it is running.
  $("rules").replaceChildren(el("li", { class: "running", text: t("running") }));
  $("balances").replaceChildren();
  $("keytable").replaceChildren();
  $("keys-total").textContent = "";
  $("stuck").hidden = true;
  $("interrupted").hidden = true;
  renderPlayer();
  renderLive();
}

// drainNow records what is queued at once, before a verdict that names it;
// the verdict's drawing then draws it.
function drainNow() {
  if (frame) cancelAnimationFrame(frame);
  drain();
}

// drain records the queued events once per animation frame, however many
// arrived, so a storm of thousands of events never freezes the page; the
// view itself is redrawn at most every REDRAW_MS.
function drain() {
  frame = 0;
  const evs = queue;
  queue = [];
  let added = false;
  for (const e of evs) {
    if (e.run > run) newRun(e.run, level, "");
    if (e.run !== run) continue;
    addEvent(e);
    added = true;
  }
  if (!added) return;
  showStage(true);
  modelDirty = true;
  renderLive();
  if (view.mode === "live") {
    // A big storm's view costs more to build the more it has recorded:
    // the page keeps at least twice that cost free between redraws, so
    // the instructor's clicks are never queued behind the drawing.
    if (!redraw) redraw = setTimeout(drawNow, Math.max(REDRAW_MS, 2 * drawCost));
  } else {
    renderPlayer(); // paused or replaying: the picture stays, the count grows
  }
}

// laneLabel names a student's lane after the student ("ana #2"); a storm's
// simulated clients keep their lane ids (c12.1).
function laneLabel(lane) {
  const m = /^(s\d+)\.(\d+)$/.exec(lane || "");
  if (m && roster.has(m[1])) return `${roster.get(m[1])} #${m[2]}`;
  return lane;
}

function addEvent(e) {
  live.requests.add(e.lane);
  if (e.phase === "commit" && e.outcome === "committed") live.commits.set(e.intent, (live.commits.get(e.intent) || 0) + 1);
  if (e.phase === "respond") {
    if (e.outcome === "lost" || e.outcome === "timed-out") live.lost++;
    else live.statuses.set(e.status, (live.statuses.get(e.status) || 0) + 1);
  }
  if (e.outcome === "crashed") live.crashed++;
  if (events.length >= MAX_EVENTS) {
    unrecorded++;
    return;
  }
  events.push(e);
}

// currentModel rebuilds the race model when events or the verdict changed
// since it was last built. Events are kept in the order they arrived; the
// model orders them on the trace's clock, so cursor n is "the first n
// events in time".
function currentModel() {
  if (modelDirty || !model) {
    const t0 = performance.now();
    model = buildRace({ events, violations, policy, clock: "time", labelOf: laneLabel });
    modelDirty = false;
    measure("idemlab-projector-build", t0);
  }
  return model;
}

// drawNow draws the view at the player's cursor (the end, when live).
function drawNow() {
  clearTimeout(redraw);
  redraw = 0;
  if (!events.length) {
    renderPlayer();
    return;
  }
  const start = performance.now();
  const m = currentModel();
  const t0 = performance.now();
  const n = m.events.length;
  if (view.mode === "live") view.cursor = n;
  view.cursor = Math.max(0, Math.min(view.cursor, n));
  const box = $("race");
  // The view is drawn for the box's width over VIEW_SCALE, then enlarged
  // by it: the same picture, words large enough for the back row.
  const width = Math.max(640, (box.clientWidth || document.documentElement.clientWidth - 40) / VIEW_SCALE - 4);
  const shownEvent = view.mode !== "live" && view.cursor > 0 ? m.events[view.cursor - 1] : null;
  const svgEl = drawRace(box, m, {
    cursor: view.cursor, currentSeq: shownEvent ? shownEvent.seq : undefined, expanded, onToggle: toggleRow,
    collapseOver: COLLAPSE_OVER, maxRows: rowsToDraw(), width, compact: false,
  });
  svgEl.style.width = Number(svgEl.getAttribute("width")) * VIEW_SCALE + "px";
  svgEl.style.height = Number(svgEl.getAttribute("height")) * VIEW_SCALE + "px";
  measure("idemlab-projector-draw", t0);
  drawCost = performance.now() - start;
  if (view.mode !== "live") follow(box, svgEl);
  renderPlayer();
}

// follow scrolls a view wider than the screen so that the moment shown
// (the "now" line of a replay or a scrub) stays in the middle third.
function follow(box, svgEl) {
  const now = svgEl.querySelector("[data-now]");
  if (!now || box.scrollWidth <= box.clientWidth) return;
  const x = Number(now.getAttribute("x1")) * VIEW_SCALE;
  const left = box.scrollLeft;
  if (x < left + box.clientWidth / 3 || x > left + (2 * box.clientWidth) / 3) box.scrollLeft = Math.max(0, x - box.clientWidth / 2);
}

// measure keeps the page's latest figure of one kind (make bench reads
// them), never a growing list: a replay draws sixty frames a second.
function measure(name, start) {
  performance.clearMeasures(name);
  performance.measure(name, { start, end: performance.now() });
}

// rowsToDraw is how many rows of the view a window and a half holds, at
// race.js's 36-pixel rows enlarged by VIEW_SCALE.
function rowsToDraw() {
  return Math.max(MIN_ROWS, Math.min(MAX_ROWS, Math.ceil((1.5 * innerHeight) / (36 * VIEW_SCALE))));
}

function toggleRow(id) {
  if (expanded.has(id)) expanded.delete(id);
  else expanded.add(id);
  drawNow();
}

// --- the player -------------------------------------------------------------

// renderPlayer shows where the picture is: the slider over the recorded
// events, the event shown in words, and the play button's state.
function renderPlayer() {
  const n = model ? model.events.length : events.length;
  const recorded = events.length;
  const scrub = $("scrub");
  scrub.max = String(Math.max(recorded, n));
  scrub.value = String(view.mode === "live" ? recorded : view.cursor);
  const playing = view.mode !== "paused";
  $("play").textContent = playing ? t("pauseBtn") : t("playBtn");
  $("play").setAttribute("aria-pressed", playing ? "false" : "true");
  $("player").dataset.mode = view.mode;
  const cursor = view.mode === "live" ? recorded : view.cursor;
  let at = "";
  if (model && cursor > 0 && model.events.length) {
    const first = timeMS(model.events[0]);
    at = ` · ${fmtMS(timeMS(model.events[Math.min(cursor, model.events.length) - 1]) - first)}`;
  }
  $("position").textContent = t("position", { n: cursor, total: recorded }) + at + (view.mode === "replay" ? " · " + t("replayAt", { speed: view.speed }) : view.mode === "paused" ? " · " + t("pausedWord") : "") +
    (unrecorded ? " " + t("unrecorded", { n: unrecorded }) : "");
  const ev = view.mode !== "live" && model && cursor > 0 ? model.events[cursor - 1] : null;
  $("now-event").textContent = ev ? describe(ev) : "";
}

// describe says what one event did, for the room to read aloud.
function describe(e) {
  return `${laneLabel(e.lane)} · ${e.phase} → ${e.outcome}` + (e.status ? ` (${e.status})` : "") + (e.note ? ` · ${e.note}` : "") + (e.sql ? ` · ${e.sql}` : "");
}

function pause() {
  if (!events.length) return;
  stopReplay();
  if (view.mode === "live") view.cursor = model ? model.events.length : 0;
  view.mode = "paused";
  drawNow();
}

// play resumes: from the end, the view follows the events again; from
// anywhere else, it replays from the cursor at the chosen speed.
function play() {
  if (!events.length) return;
  const m = currentModel();
  if (view.mode === "paused" && view.cursor < m.events.length) {
    startReplay(view.cursor);
    return;
  }
  stopReplay();
  view.mode = "live";
  drawNow();
}

function step(d) {
  if (!events.length) return;
  const m = currentModel();
  if (view.mode === "live") view.cursor = m.events.length;
  stopReplay();
  view.mode = "paused";
  view.cursor = Math.max(0, Math.min(m.events.length, view.cursor + d));
  drawNow();
}

// seek moves the picture to cursor c; a slider dragged fires faster than
// frames are painted, so the drawing waits for the next frame and draws
// only the latest position.
function seek(c) {
  if (!events.length) return;
  stopReplay();
  view.mode = "paused";
  view.cursor = c;
  renderPlayer();
  if (!seekFrame) {
    seekFrame = requestAnimationFrame(() => {
      seekFrame = 0;
      drawNow();
    });
  }
}

// startReplay replays the recorded events from cursor on the trace's own
// clock, slowed to view.speed: a storm of 0.4 s at 0.02× takes 20 s.
function startReplay(from) {
  const m = currentModel();
  if (!m.events.length) return;
  stopReplay();
  view.mode = "replay";
  view.cursor = Math.min(from, m.events.length - 1);
  view.anchorT = view.cursor > 0 ? timeMS(m.events[view.cursor - 1]) : timeMS(m.events[0]);
  view.anchorWall = performance.now();
  drawNow();
  view.raf = requestAnimationFrame(tick);
}

function tick(now) {
  view.raf = 0;
  if (view.mode !== "replay") return;
  const m = currentModel();
  const target = view.anchorT + (now - view.anchorWall) * view.speed;
  let c = view.cursor;
  while (c < m.events.length && timeMS(m.events[c]) <= target) c++;
  if (c !== view.cursor) {
    view.cursor = c;
    drawNow();
  }
  if (c >= m.events.length) {
    view.mode = "live";
    drawNow();
    return;
  }
  view.raf = requestAnimationFrame(tick);
}

function stopReplay() {
  if (view.raf) cancelAnimationFrame(view.raf);
  view.raf = 0;
}

function setSpeed(s) {
  if (view.mode === "replay" && model) {
    // Keep the picture where it is; only the pace changes.
    const now = performance.now();
    view.anchorT += (now - view.anchorWall) * view.speed;
    view.anchorWall = now;
  }
  view.speed = s;
  renderPlayer();
}

$("play").addEventListener("click", () => (view.mode === "paused" ? play() : pause()));
$("step-back").addEventListener("click", () => step(-1));
$("step-fwd").addEventListener("click", () => step(1));
$("replay").addEventListener("click", () => startReplay(0));
$("speed").addEventListener("change", () => setSpeed(Number($("speed").value) || 1));
$("scrub").addEventListener("input", () => seek(Number($("scrub").value)));
$("save-svg").addEventListener("click", () => save("svg"));
$("save-png").addEventListener("click", () => save("png"));

// Keys for the player, unless the instructor is typing into the form.
document.addEventListener("keydown", (e) => {
  if ($("room").hidden || $("stage").hidden || e.altKey || e.ctrlKey || e.metaKey) return;
  const tgt = e.target;
  if (tgt.closest && tgt.closest("input, select, textarea, summary, form")) return;
  if (e.key === " " && tgt.closest && tgt.closest("button, [role=button]")) return; // Space presses the focused button
  switch (e.key) {
    case " ":
      if (view.mode === "paused") play();
      else pause();
      break;
    case "ArrowLeft":
      step(-1);
      break;
    case "ArrowRight":
      step(1);
      break;
    case "Home":
      seek(0);
      break;
    case "End":
      play();
      if (view.mode === "replay") {
        stopReplay();
        view.mode = "live";
        drawNow();
      }
      break;
    default:
      return;
  }
  e.preventDefault();
});

let resizing = 0;
window.addEventListener("resize", () => {
  clearTimeout(resizing);
  resizing = setTimeout(() => events.length && drawNow(), 200);
});

// save writes the view as it is shown (at the cursor) as an SVG or PNG
// file for a slide, at its drawn size.
function save(format) {
  const shown = $("race").querySelector("svg");
  if (!shown) return;
  const copy = shown.cloneNode(true);
  copy.removeAttribute("style");
  exportRace(copy, `idemlab-${code}-ledger${run}-event${view.mode === "live" ? events.length : view.cursor}`, format);
}

// --- the verdict --------------------------------------------------------------

function renderLive() {
  if (!live) return;
  let dup = 0;
  for (const n of live.commits.values()) if (n > 1) dup += n - 1;
  $("lane-count").textContent = t("requestsN", { n: live.requests.size }) + (unrecorded ? " " + t("unrecordedCounted", { n: unrecorded }) : "");
  const st = (c) => live.statuses.get(c) || 0;
  $("tally").replaceChildren(
    tile(t("tile_liveDup"), dup, dup > 0 ? "fail" : "ok"),
    tile("201", st(201)), tile("409", st(409)), tile("422", st(422)),
    tile(t("tile_lost"), live.lost), tile(t("tile_crashed"), live.crashed),
  );
}

// shortJSON replaces each JSON object in a checker's sentence by what
// tells it apart (its transfer, else its first member): a room reads
// "got 201 {tr_000006}, … got {tr_000005}", not two lines of raw JSON.
function shortJSON(message) {
  return message.replace(/\{"[^{}]*\}/g, (j) => {
    try {
      const o = JSON.parse(j);
      if (o.transfer_id) return "{" + o.transfer_id + "}";
      const [k, v] = Object.entries(o)[0] || [];
      return k ? `{${k}: ${typeof v === "object" ? "…" : v}, …}` : "{}";
    } catch {
      return "{…}";
    }
  });
}

// ruleTitle is a checker rule's title in the page's language.
function ruleTitle(rule) {
  const w = t("rule_" + rule.name);
  return w === "rule_" + rule.name ? rule.title : w;
}

// violationText shows a broken rule's sentence, its JSON cut short; the
// full text is one click away.
function violationText(message) {
  const short = shortJSON(message);
  if (short === message) return el("div", { class: "violation", text: message });
  return el("details", { class: "violation" }, el("summary", { text: short }), el("code", { text: message }));
}

function tile(label, value, cls = "") {
  return el("div", { class: "tile " + cls }, el("div", { class: "tval", text: String(value) }), el("div", { class: "tlabel", text: label }));
}

// drawPicture shows the storm as a picture; a column moves the race to
// that moment.
function drawPicture(msg) {
  $("picture-box").hidden = false;
  showPicture($("picture"), msg.picture, (lang === "ko" && msg.picture_svg_ko) || msg.picture_svg, (bucket) => {
    const m = currentModel();
    if (!m.events.length) return;
    const first = timeMS(m.events[0]);
    let c = 0;
    while (c < m.events.length && timeMS(m.events[c]) - first < bucket.to_ms) c++;
    seek(c);
    $("race").scrollIntoView({ block: "nearest" });
  });
}

function renderReport(msg) {
  if (msg.run !== run) newRun(msg.run, msg.level, "level " + msg.level);
  const s = msg.report.summary;
  const label = msg.storm ? t("stormDone", { requests: msg.storm.requests, level: msg.level, ms: msg.storm.duration_ms }) : t("levelLabel", { level: msg.level });
  $("run-label").textContent = `(${t("ledgerN", { n: msg.run })}, ${label})`;
  $("tally").replaceChildren(
    tile(t("tile_duplicates"), s.duplicates, s.duplicates > 0 ? "fail" : "ok"),
    tile(t("tile_paidTwice"), won(s.paid_twice) + " won", s.paid_twice > 0 ? "fail" : "ok"),
    tile(t("tile_409"), s.conflicts_409), tile(t("tile_422"), s.mismatches_422), tile(t("tile_replays"), s.replays),
    tile(t("tile_lost"), s.lost_responses), tile(t("tile_transfers"), s.transfers), tile(t("tile_moved"), won(s.money_moved) + " won"),
  );
  $("tally").dataset.duplicates = String(s.duplicates);
  $("rules").replaceChildren(...msg.report.rules.map((r) =>
    el("li", { class: r.ok ? "ok" : "fail" }, el("span", { class: "sym", text: r.ok ? "✓" : "✗" }), " " + ruleTitle(r.rule),
      r.ok ? null : violationText(r.violations[0].message))));
  $("balances").replaceChildren(el("tr", {}, el("th", { text: "account" }), el("th", { text: "balance" })),
    ...Object.entries(msg.balances).map(([k, v]) => el("tr", {}, el("td", { text: k }), el("td", { text: won(v) + " won" }))));
  $("keys-total").textContent = msg.keys_total > msg.keys.length ? `(${msg.keys.length} of ${msg.keys_total})` : `(${msg.keys_total})`;
  $("keytable").replaceChildren(
    el("tr", {}, ...["key", "customer", "state", "status", "transfer"].map((h) => el("th", { text: h }))),
    ...msg.keys.map((k) => el("tr", {}, ...[k.key, k.customer, k.state || "(no state)", k.status || "", k.transfer_id || ""].map((v) => el("td", { text: String(v) })))));
  if (msg.keys_total === 0) $("keytable").append(el("tr", {}, el("td", { colspan: "5", text: msg.level === "naive" ? t("naiveNoKeys") : t("noKeysYet") })));
  // A crash that left keys in_progress breaks no rule (nothing was paid
  // twice) but nothing was paid either: that is the lesson, said in words.
  const stuck = msg.keys.filter((k) => k.state === "in_progress").length;
  $("stuck").hidden = !(msg.storm && stuck > 0);
  $("stuck").textContent = t("stuckInProgress", { n: stuck });
  if (msg.vote) renderVote(msg.vote);
  // The checker's broken rules join the attempts they name in the view.
  // One line per broken rule: a naive storm breaks the same rule dozens of
  // times, and the room reads the rule, not the list.
  violations = [];
  for (const r of msg.report.rules || []) {
    const vs = r.violations || [];
    if (!vs.length) continue;
    const more = vs.length > 1 ? ` (and ${vs.length - 1} more like it)` : "";
    violations.push(Object.assign({}, vs[0], { rule: Object.assign({}, r.rule, { title: ruleTitle(r.rule) }), message: shortJSON(vs[0].message) + more }));
  }
  if (msg.policy) policy = msg.policy;
  modelDirty = true;
  // The storm as a picture (drawn by the server, the same drawing as
  // `idemlab day replay --svg`): a column moves the race to its moment.
  // It is drawn in the frame after the race, which the room reads first.
  if (msg.picture && msg.picture_svg) setTimeout(() => msg.run === run && drawPicture(msg), 0);
  if (view.mode === "live") drawNow();
  else renderPlayer();
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
  try {
    const form = { change: $("change").checked };
    for (const id of ["level", "clients", "keys", "attempts", "fault", "phase", "latency", "slow"]) form[id] = $(id).value;
    localStorage.setItem(FORM_KEY, JSON.stringify(form));
  } catch {
    // storage refused: the form resets on reload, nothing else
  }
});
// The question is about the next storm, at the level the form will fire.
$("ask").addEventListener("click", () => room.send({ type: "ask", level: $("level").value }));
$("reveal").addEventListener("click", () => room.send({ type: "reveal" }));
$("reset").addEventListener("click", () => room.send({ type: "level", level: $("level").value }));

init();

// --- keeping the room the class's --------------------------------------------

// renderRoster lists the students, each with a button that removes them
// (a kicked student's secret and address add no one to the room again),
// and shows whether the room is locked to new students.
function renderRoster(s) {
  renderLock(s.locked);
  if (!s.roster) return;
  const ul = $("roster");
  ul.replaceChildren(...s.roster.map((r) => {
    const kick = el("button", { type: "button", class: "kick presenter-only", text: "✕", "aria-label": t("kick") + " " + r.nickname, title: t("kick") + " " + r.nickname });
    kick.addEventListener("click", () => room && room.send({ type: "kick", student: r.id }));
    return el("li", { class: r.online ? "" : "offline", "data-student": r.id }, el("span", { text: r.nickname + (r.online ? "" : " " + t("away")) }), kick);
  }));
}

function renderLock(locked) {
  $("lock").textContent = locked ? t("unlockRoom") : t("lockRoom");
  $("lock").setAttribute("aria-pressed", locked ? "true" : "false");
  $("lock").dataset.locked = locked ? "true" : "false";
  $("locked").hidden = !locked;
}

$("lock").addEventListener("click", () => {
  if (room) room.send({ type: $("lock").dataset.locked === "true" ? "unlock" : "lock" });
});
