// join.js: a student's phone. It joins a room with a nickname and a secret
// kept in localStorage (so a reload is the same student), sends transfers,
// loses their answers in the "basement", retries, votes, and draws its own
// attempts from the room's trace events in the race view (web/race.js, the
// lessons' and the projector's), and, on request, the room's last storm.
// All text is set as text.
import { connect } from "./room.js";
import { el, won } from "/dom.js";
import { buildRace, drawRace } from "/race.js";

const $ = (id) => document.getElementById(id);
const STORE = "idemlab.classroom.student";
const LABEL = { 201: "201", 409: "409", 422: "422", double: "a second transfer" };

let room = null;
let me = null;
let code = "";
let run = 0;
let mine = []; // this phone's trace events in the current ledger
let roomEvents = []; // every event of the current ledger's storm, for the room's view
let stormRun = 0; // the ledger of the last storm announced
let policy = {};
let level = "";
let lastResult = null; // what this phone's last transfer got
// A phone keeps at most this many of a storm's events (1,000 clients × 5
// attempts is about 45,000); the room's view is drawn only when opened.
const MAX_ROOM_EVENTS = 60000;

function identity() {
  let id = null;
  try {
    id = JSON.parse(localStorage.getItem(STORE) || "null");
  } catch {
    id = null;
  }
  if (!id || typeof id.secret !== "string" || !/^[0-9a-f]{32,128}$/.test(id.secret)) {
    const b = new Uint8Array(16);
    crypto.getRandomValues(b);
    id = { secret: Array.from(b, (x) => x.toString(16).padStart(2, "0")).join(""), nickname: "", room: "" };
  }
  return id;
}

function save(id) {
  localStorage.setItem(STORE, JSON.stringify(id));
}

function start() {
  const id = identity();
  const params = new URLSearchParams(location.search);
  const fromURL = (params.get("room") || "").toUpperCase();
  $("room-code").value = fromURL || id.room || "";
  $("nickname").value = id.nickname || "";
  if (fromURL && id.nickname && id.room === fromURL) {
    join(fromURL, id.nickname); // a reload: straight back in as the same student
  }
}

$("join-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const c = $("room-code").value.trim().toUpperCase();
  const nick = $("nickname").value.trim();
  if (!c || !nick) return;
  history.replaceState(null, "", "/classroom/?room=" + encodeURIComponent(c));
  join(c, nick);
});

function join(c, nick) {
  const id = identity();
  id.nickname = nick;
  id.room = c;
  save(id);
  code = c;
  if (room) room.stop();
  room = connect(c, "", {
    onOpen() {
      room.send({ type: "join", nickname: nick, secret: id.secret });
    },
    onMessage,
    onStatus(s) {
      $("conn").textContent = s;
      $("conn").className = "pill " + s;
      if (s === "gone") {
        room.stop();
        room = null;
        $("client").hidden = true;
        $("enter").hidden = false;
        $("enter-error").textContent = "No room " + c + " here. Check the code on the projector.";
      }
    },
  });
}

function onMessage(msg) {
  switch (msg.type) {
    case "welcome":
      renderState(msg.state);
      break;
    case "joined":
      me = msg;
      $("enter").hidden = true;
      $("client").hidden = false;
      $("enter-error").textContent = "";
      $("me").textContent = msg.nickname;
      $("room-label").textContent = code;
      $("level-label").textContent = msg.level;
      setLevel(msg.level);
      $("send").textContent = msg.retrying ? "Send again (retry)" : "Send transfer";
      break;
    case "state":
      renderState(msg);
      break;
    case "result":
      renderResult(msg);
      break;
    case "voted":
      $("voted").textContent = "Your vote: " + (LABEL[msg.choice] || msg.choice);
      break;
    case "storm":
      stormRun = msg.run;
      roomEvents = [];
      if (msg.policy) policy = msg.policy;
      level = msg.spec.level;
      $("room-storm").hidden = true;
      break;
    case "report":
      if (msg.storm && msg.run === stormRun) {
        $("room-storm").hidden = false;
        if ($("room-storm").open) drawRoom();
      }
      break;
    case "events":
      if (!me) return;
      for (const e of msg.events) {
        if (e.run !== run) {
          run = e.run;
          mine = [];
        }
        if (e.lane.startsWith(me.id + ".")) mine.push(e);
        if (e.run === stormRun && roomEvents.length < MAX_ROOM_EVENTS) roomEvents.push(e);
      }
      drawMine();
      renderResultBox();
      break;
    case "error":
      if (msg.code === "kicked" || msg.code === "locked") {
        // Removed by the instructor, or a locked room: trying again would
        // only be refused again, so the phone stops and says why.
        room.stop();
        room = null;
        $("client").hidden = true;
        $("enter").hidden = false;
        $("enter-error").textContent = msg.detail;
        break;
      }
      if (msg.code !== "wait") $("send").disabled = false;
      $("client-error").textContent = msg.detail;
      setTimeout(() => ($("client-error").textContent = ""), 4000);
      break;
  }
}

function renderState(s) {
  $("level-label").textContent = s.level;
  setLevel(s.level);
  const v = s.vote;
  const box = $("vote");
  box.hidden = !(v.open || v.revealed);
  $("question").textContent = v.question || "";
  const choices = $("choices");
  if (v.open) {
    choices.replaceChildren(...s.choices.map((c) => {
      const b = el("button", { type: "button", "data-choice": c, text: LABEL[c] || c });
      b.addEventListener("click", () => room.send({ type: "vote", choice: c }));
      return b;
    }));
  } else if (v.revealed && v.counts) {
    choices.replaceChildren(...s.choices.map((c) => el("div", { class: "hrow" },
      el("span", { class: "hlabel", text: LABEL[c] || c }), el("span", { class: "hcount", text: String(v.counts[c] || 0) + (v.actual && v.actual.choice === c ? " ← what happened" : "") }))));
  } else {
    choices.replaceChildren();
  }
  if (s.storming) $("voted").textContent = "The storm is running: votes are locked.";
}

// setLevel remembers the room's level: the race view names the key row's
// states after its policy (a storm announces it; naive keeps no key table).
function setLevel(l) {
  if (l === level) return;
  level = l;
  policy = l === "naive" ? { claim: "none" } : {};
}

// myLabel names this phone's attempts: "#1", "#2", … in the order sent.
function myLabel(lane) {
  const m = /\.(\d+)$/.exec(lane);
  return m ? "#" + m[1] : lane;
}

// drawMine draws this phone's attempts in the current ledger as the race
// view, compact: a second payment is a red block that says "paid again".
function drawMine() {
  const box = $("mylanes");
  if (!mine.length) {
    box.replaceChildren();
    return;
  }
  const model = buildRace({ events: mine, policy, clock: "time", labelOf: myLabel });
  drawRace(box, model, { compact: true, width: box.clientWidth || 360, collapseOver: 8, maxRows: 20 });
}

// drawRoom draws the room's last storm, collapsed: the winner of each key
// and one counted row for each kind of answer the others got.
function drawRoom() {
  const box = $("room-race");
  if (!roomEvents.length) {
    box.replaceChildren(el("p", { class: "muted", text: "No storm recorded on this phone yet." }));
    return;
  }
  const model = buildRace({ events: roomEvents, policy, clock: "time", labelOf: (l) => (me && l.startsWith(me.id + ".") ? "you " + myLabel(l) : l) });
  drawRace(box, model, { compact: true, width: box.clientWidth || 360, collapseOver: 2, maxRows: 14 });
}
$("room-storm").addEventListener("toggle", () => $("room-storm").open && drawRoom());

// paymentsFor lists the amounts this phone's events show paid for one wish
// (a commit's note reads "moved 10000 won as t-…").
function paymentsFor(intent) {
  return mine.filter((e) => e.intent === intent && e.phase === "commit" && e.outcome === "committed")
    .map((e) => Number((/moved (\d+) won/.exec(e.note || "") || [])[1] || 0));
}

function renderResult(r) {
  $("send").disabled = false;
  lastResult = r;
  renderResultBox();
  $("send").textContent = r.retrying ? "Send again (retry)" : "Send transfer";
}

// renderResultBox says what the last transfer got and, once the trace
// shows it, whether the wish was paid more than once: the answer and the
// trace arrive separately, so both redraw it.
function renderResultBox() {
  const r = lastResult;
  if (!r) return;
  const box = $("result");
  box.className = "result";
  let text;
  let cls;
  if (!r.delivered) {
    cls = "info";
    text = `No answer (attempt ${r.attempt}). Did the money move? You cannot know. ` +
      (r.level === "naive" ? "Press again: naive ignores the key, so it is a new request." : `Press again to retry with the same key.`);
  } else if (r.status === 409) {
    cls = "info";
    text = `409: your first attempt is still being processed. Press again to retry.`;
  } else {
    cls = r.status >= 200 && r.status < 300 ? "ok" : "fail";
    text = `${r.status}${r.replayed ? " (replayed)" : ""} after ${r.attempt} attempt${r.attempt > 1 ? "s" : ""}: ${r.body}`;
  }
  const paid = paymentsFor(r.intent);
  const again = paid.slice(1).reduce((n, a) => n + a, 0);
  box.classList.add(paid.length > 1 ? "fail" : cls);
  box.replaceChildren(text);
  if (paid.length > 1) {
    box.prepend(el("strong", { class: "paid-twice", "data-paid": paid.length,
      text: `✘ Paid ${paid.length === 2 ? "twice" : paid.length + " times"}: ${won(again)} won paid again for one transfer. ` }));
  }
}

$("send").addEventListener("click", () => {
  if (room && room.send({ type: "send", basement: $("basement").checked })) {
    $("send").disabled = true;
    $("result").textContent = "Sending…";
    $("result").className = "result";
  }
});

start();
