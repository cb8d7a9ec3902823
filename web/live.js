// How the page learns about changes: for now by polling every few seconds (new photos, and
// pending ones becoming ready). This is the one place a LiveQuery subscription will replace:
// `watch` keeps its signature, calling `onPhotos` with changed or new Photo objects.
import { find, date } from "./api.js";
import { isSettled } from "./grid.js";

export const POLL_MS = 3000;

/**
 * Watches Photos: `newest()` gives the createdAt of the newest photo shown (or null),
 * `pendingIds()` the ids still processing; `onPhotos(photos)` gets what changed.
 * Returns a function that stops watching.
 */
export function watch({ newest, pendingIds, onPhotos, isActive = () => true }) {
  let stopped = false;
  async function tick() {
    if (stopped) return;
    try {
      if (isActive()) {
        const since = newest();
        const where = since ? { createdAt: { $gt: date(since) } } : {};
        const fresh = (await find("Photo", { where, order: "-createdAt,-objectId", limit: 100 })).results;
        const pending = pendingIds();
        const changed = pending.length
          ? (await find("Photo", { where: { objectId: { $in: pending.slice(0, 100) } }, limit: 100 })).results
          : [];
        const updated = changed.filter(isSettled);
        if (fresh.length || updated.length) onPhotos([...fresh, ...updated]);
      }
    } catch (error) {
      console.warn("live: poll failed", error);
    }
    if (!stopped) setTimeout(tick, POLL_MS);
  }
  setTimeout(tick, POLL_MS);
  return () => { stopped = true; };
}
