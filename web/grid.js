// The photo grid: a justified layout computed from each photo's aspectRatio, so every cell has its
// final size (painted with dominantColor) before any image byte arrives; endless scrolling with the
// keyset cursor on (-createdAt, -objectId), which costs the same at any depth and never repeats a row.
import { find, date } from "./api.js";
import { thumbHashDataURL } from "./thumbhash.js";

export const PAGE_SIZE = 30;
const ROW_HEIGHT = 200;
const GAP = 4;
const KEYS = "title,aspectRatio,dominantColor,thumbhash,sizes,thumbnail,preview,status,width,height,createdAt,deletedAt";
/** The display sizes a tile may pick from (longest edge 100 to 1024), for `srcset`. */
const SRCSET_SIZES = ["t", "s", "n", "w", "m", "z", "c", "b"];

/**
 * `srcset` from a record's `sizes` (`keys=sizes`): each size's URL with its width, once per width (the
 * large sizes of a small photo are all its preview); "" without sizes.
 */
export function srcset(sizes) {
  if (!sizes) return "";
  const seen = new Set();
  return SRCSET_SIZES.map((name) => sizes[name])
    .filter((size) => size && !seen.has(size.width) && seen.add(size.width))
    .map((size) => `${size.url} ${size.width}w`).join(", ");
}

/** The `where` for the page after `last` (the keyset cursor), combined with a filter. */
export function afterCursor(filter, last) {
  if (!last) return filter;
  const cursor = { $or: [
    { createdAt: { $lt: date(last.createdAt) } },
    { createdAt: date(last.createdAt), objectId: { $lt: last.objectId } },
  ] };
  return Object.keys(filter).length ? { $and: [filter, cursor] } : cursor;
}

/** Splits photos into rows whose heights make each row exactly `width` wide (the last row is not stretched). */
export function justify(photos, width, target = ROW_HEIGHT) {
  const rows = [];
  let row = [], sum = 0;
  for (const photo of photos) {
    const ratio = photo.aspectRatio > 0 ? photo.aspectRatio : 1;
    row.push({ photo, ratio });
    sum += ratio;
    const height = (width - GAP * (row.length - 1)) / sum;
    if (height <= target) {
      rows.push({ items: row, height });
      row = []; sum = 0;
    }
  }
  if (row.length) rows.push({ items: row, height: target, last: true });
  return rows;
}

/** Whether a photo's processing is over (ready, or failed for good). */
export const isSettled = (photo) => photo.status === "ready" || photo.status === "failed";

/** A grid over one query (all photos, a search, Recently Deleted), paging as it scrolls. */
export class PhotoGrid {
  constructor(element, { onOpen, tile }) {
    this.element = element;
    this.onOpen = onOpen;
    this.decorate = tile || (() => {});
    this.photos = [];
    this.filter = {};
    this.pages = 0;
    this.done = false;
    this.loading = null;
    this.sentinel = document.createElement("div");
    this.sentinel.className = "sentinel";
    this.observer = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) this.loadMore();
    }, { rootMargin: "400px" });
    let timer;
    new ResizeObserver(() => { clearTimeout(timer); timer = setTimeout(() => this.render(), 100); }).observe(element);
    element.addEventListener("keydown", (e) => this.keydown(e));
  }

  /** Starts over with another filter (a page still loading for the old one is ignored). */
  async reset(filter = {}) {
    this.filter = filter;
    this.started = true;
    this.photos = [];
    this.pages = 0;
    this.done = false;
    this.loading = null;
    this.generation = (this.generation || 0) + 1;
    this.render();
    await this.loadMore();
  }

  /** Loads the next page (once at a time) and keeps loading while the sentinel stays in view. */
  loadMore() {
    if (this.loading || this.done) return this.loading;
    const generation = this.generation;
    const loading = (async () => {
      const last = this.photos[this.photos.length - 1];
      const answer = await find("Photo", {
        where: afterCursor(this.filter, last), order: "-createdAt,-objectId", limit: PAGE_SIZE, keys: KEYS,
      });
      if (generation !== this.generation) return;
      this.photos.push(...answer.results);
      this.pages += 1;
      this.done = answer.results.length < PAGE_SIZE;
      this.element.dataset.pages = String(this.pages);
      this.render();
    })().catch((error) => {
      if (generation === this.generation) this.done = true;
      this.element.dispatchEvent(new CustomEvent("grid-error", { detail: error, bubbles: true }));
    }).finally(() => { if (this.loading === loading) this.loading = null; });
    this.loading = loading;
    this.element.dataset.loading = "true";
    loading.finally(() => { if (!this.loading) this.element.dataset.loading = "false"; });
    return loading;
  }

  /** Adds or updates photos (uploads, live changes): new ones first, in the grid's order. An
   * answer older than what the grid holds is skipped: a GET sent while the worker was still making
   * a photo can arrive after the live `update` that made it ready, and must not turn it back to
   * "processing" (with the socket up nothing polls it again). */
  upsert(photos) {
    let changed = false;
    for (const photo of photos) {
      const index = this.photos.findIndex((p) => p.objectId === photo.objectId);
      const held = index >= 0 ? this.photos[index] : null;
      if (held && held.updatedAt && photo.updatedAt && photo.updatedAt < held.updatedAt) continue;
      if (held) { this.photos[index] = { ...held, ...photo }; changed = true; }
      else if (!this.filter || Object.keys(this.filter).length === 0) { this.photos.unshift(photo); changed = true; }
    }
    if (changed) {
      this.photos.sort((a, b) => (b.createdAt.localeCompare(a.createdAt)) || b.objectId.localeCompare(a.objectId));
      this.render();
    }
  }

  /** Removes a photo from the grid. */
  remove(objectId) {
    this.photos = this.photos.filter((p) => p.objectId !== objectId);
    this.render();
  }

  /** The createdAt of the newest photo shown: null for an empty grid, undefined before its first
   * page has arrived (then nothing can be newer than what that page will bring). */
  newest() {
    if (this.pages === 0) return undefined;
    return this.photos.length ? this.photos[0].createdAt : null;
  }
  /** Ids of photos still being made (status pending or processing: neither ready nor failed). */
  pendingIds() { return this.photos.filter((p) => !isSettled(p)).map((p) => p.objectId); }

  /** Lays the photos out again (after a page, a change, a resize). Keeps keyboard focus. */
  render() {
    const focused = document.activeElement && document.activeElement.dataset && document.activeElement.dataset.id;
    const width = this.element.clientWidth || 800;
    const fragment = document.createDocumentFragment();
    for (const row of justify(this.photos, width)) {
      const line = document.createElement("div");
      line.className = "row";
      line.style.height = `${Math.round(row.height)}px`;
      for (const { photo, ratio } of row.items) line.appendChild(this.tile(photo, ratio * row.height));
      fragment.appendChild(line);
    }
    if (!this.photos.length && this.done) {
      const empty = document.createElement("p");
      empty.className = "empty";
      empty.textContent = Object.keys(this.filter).length ? "Nothing found." : "No photos yet: drop some here.";
      fragment.appendChild(empty);
    }
    fragment.appendChild(this.sentinel);
    this.element.replaceChildren(fragment);
    this.observer.disconnect();
    if (!this.done) this.observer.observe(this.sentinel);
    this.element.dataset.count = String(this.photos.length);
    if (focused) this.element.querySelector(`[data-id="${focused}"]`)?.focus();
  }

  tile(photo, width) {
    const cell = document.createElement("button");
    cell.className = "tile";
    cell.type = "button";
    cell.dataset.id = photo.objectId;
    cell.dataset.status = photo.status || "";
    cell.style.width = `${Math.floor(width)}px`;
    cell.style.background = photo.dominantColor || "#ccc";
    // The ThumbHash, a blurred preview of the photo, painted over the colour before the image loads.
    const placeholder = thumbHashDataURL(photo.thumbhash);
    if (placeholder) {
      cell.style.backgroundImage = `url(${placeholder})`;
      cell.style.backgroundSize = "cover";
    }
    const title = photo.title || "Untitled photo";
    cell.setAttribute("aria-label", isSettled(photo) ? title : `${title} (processing)`);
    if (photo.thumbnail && photo.thumbnail.url) {
      const img = document.createElement("img");
      // The browser picks the smallest size that fills the tile at the screen's pixel density.
      const set = srcset(photo.sizes);
      if (set) {
        img.srcset = set;
        img.sizes = `${Math.floor(width)}px`;
      }
      img.src = photo.thumbnail.url;
      img.alt = title;
      img.loading = "lazy";
      img.decoding = "async";
      img.addEventListener("load", () => img.classList.add("loaded"));
      cell.appendChild(img);
    } else {
      const label = document.createElement("span");
      label.className = "pending";
      label.textContent = photo.status === "failed" ? "Failed" : "Processing…";
      cell.appendChild(label);
    }
    this.decorate(cell, photo);
    cell.addEventListener("click", () => this.onOpen(photo.objectId));
    return cell;
  }

  /** Arrow keys move between tiles (up and down by position on screen); Enter opens (a button's click). */
  keydown(event) {
    const current = event.target.closest && event.target.closest(".tile");
    if (!current) return;
    const tiles = [...this.element.querySelectorAll(".tile")];
    const index = tiles.indexOf(current);
    let next = null;
    if (event.key === "ArrowRight") next = tiles[index + 1];
    else if (event.key === "ArrowLeft") next = tiles[index - 1];
    else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      const box = current.getBoundingClientRect(), x = box.left + box.width / 2;
      const candidates = tiles.filter((t) => {
        const b = t.getBoundingClientRect();
        return event.key === "ArrowDown" ? b.top > box.bottom - 1 : b.bottom < box.top + 1;
      });
      const rowTop = event.key === "ArrowDown"
        ? Math.min(...candidates.map((t) => t.getBoundingClientRect().top))
        : Math.max(...candidates.map((t) => t.getBoundingClientRect().top));
      next = candidates.filter((t) => t.getBoundingClientRect().top === rowTop)
        .sort((a, b) => Math.abs(a.getBoundingClientRect().left + a.offsetWidth / 2 - x)
          - Math.abs(b.getBoundingClientRect().left + b.offsetWidth / 2 - x))[0];
    } else return;
    if (next) { event.preventDefault(); next.focus(); next.scrollIntoView({ block: "nearest" }); }
  }
}
