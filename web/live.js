// How the page learns about changes: a Parse LiveQuery subscription on Photo over a WebSocket at
// `live_query_path` (the API's mount unless configured; docs/live-query.md): `create` adds a new photo, `update` / `enter` refresh one
// (a thumbnail filling in), `leave` / `delete` hand it back with `deletedAt` or `gone` set.
// Once logged in it sends the session token on connect and subscribe, so it hears of the user's photos only.
// While the socket is down (a proxy without WebSocket, a restart) the page polls every few seconds
// instead, and reconnects with back-off; `watch` calls `onPhotos` the same way either way.
import { find, date, settings, restKey, sessionToken, sessionEnded, INVALID_SESSION_TOKEN } from "./api.js";
import { isSettled } from "./grid.js";

export const POLL_MS = 3000;
const RECONNECT_MAX_MS = 30000;

/** The LiveQuery URL: ws(s)://<this host><mount>. */
function liveURL() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}${settings().livePath || settings().mountPath}`;
}

/**
 * Watches Photos: `newest()` gives the createdAt of the newest photo shown (or null),
 * `pendingIds()` the ids still processing; `onPhotos(photos)` gets what changed.
 * Returns a function that stops watching.
 */
export function watch({ newest, pendingIds, onPhotos, isActive = () => true }) {
  let stopped = false;
  let socket = null;
  let live = false;
  let retryMs = 1000;

  function connect() {
    if (stopped || typeof WebSocket === "undefined") return;
    try {
      socket = new WebSocket(liveURL());
    } catch (error) {
      console.warn("live: cannot open the socket", error);
      return scheduleReconnect();
    }
    socket.onopen = () => {
      const connectMessage = { op: "connect", applicationId: settings().appId };
      const key = restKey();
      if (key) connectMessage.restAPIKey = key;
      const token = sessionToken();
      if (token) connectMessage.sessionToken = token;
      socket.send(JSON.stringify(connectMessage));
    };
    socket.onmessage = (event) => {
      let message;
      try { message = JSON.parse(event.data); } catch { return; }
      switch (message.op) {
        case "connected": {
          const subscription = { op: "subscribe", requestId: 1, query: { className: "Photo", where: {} } };
          const token = sessionToken();
          if (token) subscription.sessionToken = token;
          socket.send(JSON.stringify(subscription));
          break;
        }
        case "subscribed":
          live = true;
          retryMs = 1000;
          document.body.dataset.live = "true";
          // What changed while the socket was down (or before it came up).
          poll();
          break;
        case "create":
        case "enter":
          if (message.object) onPhotos([message.object]);
          break;
        case "update":
          // A photo shown while processing fills in; others the grid has not loaded stay out of it.
          if (message.object && pendingIds().includes(message.object.objectId)) onPhotos([message.object]);
          break;
        case "leave":
        case "delete":
          if (message.object) onPhotos([{ ...message.object, deletedAt: message.object.deletedAt || new Date().toISOString() }]);
          break;
        case "error":
          // The session was revoked or expired: the page asks for a login again (app.js).
          if (message.code === INVALID_SESSION_TOKEN && sessionToken()) {
            stopped = true;
            sessionEnded();
            break;
          }
          console.warn("live:", message.code, message.error);
          break;
      }
    };
    socket.onclose = () => {
      live = false;
      delete document.body.dataset.live;
      scheduleReconnect();
    };
    socket.onerror = () => { /* onclose follows */ };
  }

  function scheduleReconnect() {
    if (stopped) return;
    setTimeout(connect, retryMs);
    retryMs = Math.min(retryMs * 2, RECONNECT_MAX_MS);
  }

  async function poll() {
    try {
      // Before the grid's first page has arrived there is nothing to catch up on: that page is the
      // newest photos. (Fetching then would put a hundred photos in a grid that shows one page.)
      const since = newest();
      const where = since ? { createdAt: { $gt: date(since) } } : {};
      const fresh = since === undefined ? [] : (await find("Photo", { where, order: "-createdAt,-objectId", limit: 100 })).results;
      const pending = pendingIds();
      const changed = pending.length
        ? (await find("Photo", { where: { objectId: { $in: pending.slice(0, 100) } }, limit: 100 })).results
        : [];
      const updated = changed.filter(isSettled);
      if (fresh.length || updated.length) onPhotos([...fresh, ...updated]);
    } catch (error) {
      console.warn("live: poll failed", error);
    }
  }

  // The fallback: polls only while the subscription is not up.
  async function tick() {
    if (stopped) return;
    if (!live && isActive()) await poll();
    if (!stopped) setTimeout(tick, POLL_MS);
  }

  connect();
  setTimeout(tick, POLL_MS);
  return () => {
    stopped = true;
    if (socket) socket.close(1000);
  };
}
