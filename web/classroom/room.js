// room.js: the websocket every classroom page shares. One socket per page;
// it reconnects for as long as the page is open, with a growing, jittered
// pause (a room of forty phones must not come back in one burst), and
// every message is JSON. A socket that cannot open does not mean the room
// is gone: the page asks the server, and only a 404 from it ("no room has
// that code") is "gone". Anything else (the Wi-Fi dropped, the server is
// restarting) is "reconnecting", and the page keeps trying. (The pages
// build their elements with /dom.js, the one DOM helper.)

/** wsURL is the room's websocket address on this server. */
export function wsURL(code, role) {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const q = role ? "?role=" + encodeURIComponent(role) : "";
  return `${scheme}://${location.host}/classroom/ws/${encodeURIComponent(code)}${q}`;
}

// The pause before the next try grows from FIRST_MS to MAX_MS; each pause
// is drawn between half and all of its value.
const FIRST_MS = 400;
const MAX_MS = 5000;

/**
 * roomExists asks the server whether it has the room: true, false (it
 * answered 404), or null (no answer: the network or the server is down).
 */
export async function roomExists(code) {
  try {
    const res = await fetch("/classroom/api/rooms/" + encodeURIComponent(code), { cache: "no-store" });
    if (res.status === 404) return false;
    return res.ok ? true : null;
  } catch {
    return null;
  }
}

/**
 * showConnection shows a connection's status on the page's pill and
 * banner, and counts the drops of an open connection in
 * #conn[data-drops]: a cut already over (the page back online) is told
 * apart from no cut at all.
 */
export function showConnection(s, label) {
  const conn = document.getElementById("conn");
  if (s === "reconnecting" && conn.dataset.status === "online") conn.dataset.drops = String(Number(conn.dataset.drops || 0) + 1);
  conn.textContent = label;
  conn.className = "pill " + s;
  conn.dataset.status = s;
  document.getElementById("reconnecting").hidden = s !== "reconnecting";
}

/**
 * connect opens the room's socket and keeps it open. onOpen runs after
 * every (re)connection, onMessage for each message, onStatus with
 * "online", "reconnecting" or "gone" (the server said it has no such room;
 * the page stops trying).
 */
export function connect(code, role, { onOpen, onMessage, onStatus }) {
  let ws = null;
  let delay = FIRST_MS;
  let stopped = false;
  let timer = 0;
  const status = (s) => onStatus && onStatus(s);
  function retry() {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(open, delay / 2 + (Math.random() * delay) / 2);
    delay = Math.min(delay * 2, MAX_MS);
  }
  function open() {
    if (stopped) return;
    let opened = false;
    ws = new WebSocket(wsURL(code, role));
    ws.onopen = () => {
      opened = true;
      delay = FIRST_MS;
      status("online");
      onOpen && onOpen();
    };
    ws.onmessage = (ev) => {
      let msg;
      try {
        msg = JSON.parse(ev.data);
      } catch {
        return;
      }
      onMessage(msg);
    };
    ws.onclose = async () => {
      if (stopped) return;
      status("reconnecting");
      if (!opened && (await roomExists(code)) === false) {
        stopped = true;
        status("gone");
        return;
      }
      retry();
    };
  }
  // A phone that wakes up, or a laptop back on the network, tries at once.
  const now = () => {
    if (!stopped && ws && ws.readyState === WebSocket.CLOSED) {
      delay = FIRST_MS;
      clearTimeout(timer);
      open();
    }
  };
  window.addEventListener("online", now);
  document.addEventListener("visibilitychange", () => document.visibilityState === "visible" && now());
  open();
  return {
    send(obj) {
      if (ws && ws.readyState === WebSocket.OPEN) {
        ws.send(JSON.stringify(obj));
        return true;
      }
      return false;
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
      ws && ws.close();
    },
  };
}
