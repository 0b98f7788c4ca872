// room.js: the websocket both classroom pages share. One socket per page;
// it reconnects with a growing pause, and every message is JSON. (The
// pages build their elements with /dom.js, the one DOM helper.)

/** wsURL is the room's websocket address on this server. */
export function wsURL(code, role) {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const q = role ? "?role=" + encodeURIComponent(role) : "";
  return `${scheme}://${location.host}/classroom/ws/${encodeURIComponent(code)}${q}`;
}

/**
 * connect opens the room's socket and keeps it open. onOpen runs after
 * every (re)connection, onMessage for each message, onStatus with
 * "online", "reconnecting" or "gone" (the room no longer exists).
 */
export function connect(code, role, { onOpen, onMessage, onStatus }) {
  let ws = null;
  let delay = 500;
  let stopped = false;
  let opened = false;
  function open() {
    ws = new WebSocket(wsURL(code, role));
    ws.onopen = () => {
      opened = true;
      delay = 500;
      onStatus && onStatus("online");
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
    ws.onclose = () => {
      if (stopped) return;
      if (!opened) {
        // The handshake itself failed: the room may be gone.
        onStatus && onStatus("gone");
      } else {
        onStatus && onStatus("reconnecting");
      }
      opened = false;
      setTimeout(open, delay);
      delay = Math.min(delay * 2, 10000);
    };
  }
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
      ws && ws.close();
    },
  };
}
