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
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  const q = role ? '?role=' + encodeURIComponent(role) : '';
  return `${scheme}://${location.host}/classroom/ws/${encodeURIComponent(code)}${q}`;
}

// The pause before the next try grows from FIRST_MS to MAX_MS; each pause
// is drawn between half and all of its value.
const FIRST_MS = 400;
const MAX_MS = 5000;

/**
 * roomStatus asks the server about the room, for this page: "open" (it
 * may connect), "gone" (404: no room has that code), "refused" with the
 * limit's name and how many seconds to wait (429), or "down" (no answer:
 * the network or the server is down, or it answered something else).
 */
export async function roomStatus(code) {
  try {
    const res = await fetch('/classroom/api/rooms/' + encodeURIComponent(code), { cache: 'no-store' });
    if (res.status === 404) return { state: 'gone' };
    if (res.status === 429) {
      let type = '';
      try {
        type = (await res.json()).type || '';
      } catch {
        type = '';
      }
      const wait = Number(res.headers.get('Retry-After')) || 5;
      return { state: 'refused', reason: type.endsWith('/classroom-codes-limited') ? 'codes' : 'network', wait };
    }
    return { state: res.ok ? 'open' : 'down' };
  } catch {
    return { state: 'down' };
  }
}

/**
 * showConnection shows a connection's status on the page's pill and
 * banner, and counts the drops of an open connection in
 * #conn[data-drops]: a cut already over (the page back online) is told
 * apart from no cut at all.
 */
export function showConnection(s, label) {
  const conn = document.getElementById('conn');
  if (s === 'reconnecting' && conn.dataset.status === 'online') conn.dataset.drops = String(Number(conn.dataset.drops || 0) + 1);
  conn.textContent = label;
  conn.className = 'pill ' + s;
  conn.dataset.status = s;
  // "Reconnecting… nothing is lost" is for a connection that dropped; a
  // page the server refused says why instead (onStatus's "refused").
  document.getElementById('reconnecting').hidden = s !== 'reconnecting';
}

/**
 * connect opens the room's socket and keeps it open. onOpen runs after
 * every (re)connection, onMessage for each message, onStatus with
 * "online", "reconnecting", "gone" (the server said it has no such room;
 * the page stops trying) or "refused" with {reason, wait}: the server
 * turned this page away (a socket it would not open, or a refusal the
 * page passed to hold), and the page tries again by itself after wait
 * seconds, or never when wait is 0.
 */
export function connect(code, role, { onOpen, onMessage, onStatus }) {
  let ws = null;
  let delay = FIRST_MS;
  let stopped = false;
  let timer = 0;
  let held = null; // a refusal the room sent, for the close that follows it
  let waiting = false; // refused: the next try waits its turn, even on waking
  const status = (s, info) => onStatus && onStatus(s, info);
  function refused(info) {
    waiting = true;
    status('refused', info);
    if (!info.wait) {
      stopped = true;
      return;
    }
    clearTimeout(timer);
    timer = setTimeout(() => {
      waiting = false;
      open();
    }, info.wait * 1000);
    delay = FIRST_MS;
  }
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
      status('online');
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
      if (held) {
        const info = held;
        held = null;
        refused(info);
        return;
      }
      if (!opened) {
        // The socket did not open: the server says whether the room is
        // gone or this page is refused (and why) before the page says
        // "reconnecting", which is only for a network or a server away.
        const st = await roomStatus(code);
        if (stopped) return;
        if (st.state === 'gone') {
          stopped = true;
          status('gone');
          return;
        }
        if (st.state === 'refused') {
          refused(st);
          return;
        }
      }
      status('reconnecting');
      retry();
    };
  }
  // A phone that wakes up, or a laptop back on the network, tries at once.
  const now = () => {
    if (!stopped && !held && !waiting && ws && ws.readyState === WebSocket.CLOSED) {
      delay = FIRST_MS;
      clearTimeout(timer);
      open();
    }
  };
  window.addEventListener('online', now);
  document.addEventListener('visibilitychange', () => document.visibilityState === 'visible' && now());
  open();
  return {
    send(obj) {
      if (ws && ws.readyState === WebSocket.OPEN) {
        ws.send(JSON.stringify(obj));
        return true;
      }
      return false;
    },
    /**
     * hold takes a refusal the room sent over the socket ({reason, wait});
     * the close that follows it is that refusal, not a lost connection.
     */
    hold(info) {
      held = info;
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
      ws && ws.close();
    },
  };
}
