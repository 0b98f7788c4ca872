// join.js: a student's phone. It joins a room with a nickname and a secret
// kept in localStorage (so a reload is the same student), sends transfers,
// loses their answers in the "basement", retries, votes, and draws its own
// lanes from the room's trace events. All text is set as text.
import { connect, el } from "./room.js";
import { drawLanes, lanesFromEvents } from "/lanes.js";

const $ = (id) => document.getElementById(id);
const STORE = "idemlab.classroom.student";
const LABEL = { 201: "201", 409: "409", 422: "422", double: "a second transfer" };

let room = null;
let me = null;
let code = "";
let run = 0;
let mine = []; // this phone's trace events in the current ledger

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
    case "events":
      if (!me) return;
      for (const e of msg.events) {
        if (e.run !== run) {
          run = e.run;
          mine = [];
        }
        if (e.lane.startsWith(me.id + ".")) mine.push(e);
      }
      drawMine();
      break;
    case "error":
      if (msg.code !== "wait") $("send").disabled = false;
      $("client-error").textContent = msg.detail;
      setTimeout(() => ($("client-error").textContent = ""), 4000);
      break;
  }
}

function renderState(s) {
  $("level-label").textContent = s.level;
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

// drawMine draws this phone's lanes, newest first, with the playground's
// lane view. The key is parsed at validate, so a lane's first event has none.
function drawMine() {
  const lanes = lanesFromEvents(mine).reverse();
  for (const lane of lanes) lane.key = lane.key || (lane.events.find((e) => e.key) || {}).key;
  drawLanes($("mylanes"), lanes, { showResponse: false });
}

function renderResult(r) {
  $("send").disabled = false;
  const box = $("result");
  box.className = "result";
  let text;
  if (!r.delivered) {
    box.classList.add("info");
    text = `No answer (attempt ${r.attempt}). Did the money move? You cannot know. ` +
      (r.level === "naive" ? "Press again: naive ignores the key, so it is a new request." : `Press again to retry with the same key.`);
  } else if (r.status === 409) {
    box.classList.add("info");
    text = `409: your first attempt is still being processed. Press again to retry.`;
  } else {
    box.classList.add(r.status >= 200 && r.status < 300 ? "ok" : "fail");
    text = `${r.status}${r.replayed ? " (replayed)" : ""} after ${r.attempt} attempt${r.attempt > 1 ? "s" : ""}: ${r.body}`;
  }
  box.textContent = text;
  $("send").textContent = r.retrying ? "Send again (retry)" : "Send transfer";
}

$("send").addEventListener("click", () => {
  if (room && room.send({ type: "send", basement: $("basement").checked })) {
    $("send").disabled = true;
    $("result").textContent = "Sending…";
    $("result").className = "result";
  }
});

start();
