// The web gallery: wires the grid, search, preview, galleries, Recently Deleted, uploads and live
// updates together. Views follow the URL hash: #photos (default), #gallery/<id>, #trash.
import { loadConfig, hasKeys, setRestKey, call, find } from "./api.js";
import { PhotoGrid } from "./grid.js";
import { Preview } from "./preview.js";
import { Galleries, button } from "./galleries.js";
import { setUpUploads } from "./upload.js";
import { watch } from "./live.js";

const $ = (selector) => document.querySelector(selector);
const status = $("#status");

/** Shows a short message to screen readers and sighted users alike. */
function say(message, isError = false) {
  status.textContent = message;
  status.classList.toggle("error", isError);
}
const fail = (error) => say(error.message || String(error), true);

async function main() {
  await loadConfig();
  if (!hasKeys()) {
    const form = $("#keys");
    form.hidden = false;
    await new Promise((resolve) => form.addEventListener("submit", (e) => {
      e.preventDefault();
      setRestKey($("#rest-key").value.trim());
      form.hidden = true;
      resolve();
    }));
  }

  const grid = new PhotoGrid($("#grid"), { onOpen: (id) => preview.open(id) });
  const trashGrid = new PhotoGrid($("#trash-grid"), { onOpen: (id) => preview.open(id) });
  const galleries = new Galleries({
    list: $("#gallery-list"), view: $("#gallery-view"), onError: fail,
    onShowPhoto: (photo) => { grid.upsert([photo]); preview.open(photo.objectId); },
  });
  let activeGrid = grid;

  const preview = new Preview($("#preview"), {
    photos: () => (activeGrid === trashGrid ? trashGrid.photos : grid.photos),
    actions: (photo, bar) => {
      if (photo.deletedAt) {
        bar.append(
          button("Restore", () => restorePhoto(photo.objectId)),
          button("Delete for good", () => purgePhoto(photo.objectId)));
        return;
      }
      const select = document.createElement("select");
      select.setAttribute("aria-label", "Gallery to add this photo to");
      select.append(new Option("Add to gallery…", ""),
        ...galleries.galleries.map((g) => new Option(g.name, g.objectId)));
      select.addEventListener("change", async () => {
        if (!select.value) return;
        try {
          await galleries.add(select.value, photo.objectId);
          say(`Added to ${select.selectedOptions[0].text}.`);
        } catch (error) { fail(error); }
        select.value = "";
      });
      bar.append(select, button("Move to Recently Deleted", () => trashPhoto(photo.objectId)));
    },
  });

  async function trashPhoto(id) {
    try {
      await call("DELETE", `/classes/Photo/${id}`);
      preview.step(1);
      if (preview.current === id) preview.close();
      grid.remove(id);
      say("Moved to Recently Deleted.");
    } catch (error) { fail(error); }
  }
  async function restorePhoto(id) {
    try {
      await call("PUT", `/classes/Photo/${id}`, { deletedAt: { __op: "Delete" } });
      preview.close();
      trashGrid.remove(id);
      grid.upsert([await call("GET", `/classes/Photo/${id}`)]);
      say("Restored.");
    } catch (error) { fail(error); }
  }
  async function purgePhoto(id) {
    if (!confirm("Delete this photo for good? This cannot be undone.")) return;
    try {
      await call("DELETE", `/purge/Photo/${id}`);
      preview.close();
      trashGrid.remove(id);
      say("Deleted for good.");
    } catch (error) { fail(error); }
  }

  async function showTrashedGalleries() {
    const list = $("#trashed-galleries");
    const trashed = (await find("Gallery", { where: { deletedAt: { $exists: true } }, order: "-deletedAt", limit: 1000 })).results;
    list.replaceChildren(...trashed.map((g) => {
      const item = document.createElement("li");
      item.dataset.id = g.objectId;
      item.append(g.name + " ",
        button("Restore", async () => {
          try {
            await call("PUT", `/classes/Gallery/${g.objectId}`, { deletedAt: { __op: "Delete" } });
            await galleries.refresh();
            await showTrashedGalleries();
            say("Gallery restored.");
          } catch (error) { fail(error); }
        }),
        button("Delete for good", async () => {
          if (!confirm(`Delete the gallery “${g.name}” for good?`)) return;
          try {
            await call("DELETE", `/purge/Gallery/${g.objectId}`);
            await showTrashedGalleries();
          } catch (error) { fail(error); }
        }));
      return item;
    }));
  }

  // Search waits for typing to pause (the seeds' buffered search), then pages with $text.
  let searchTimer;
  $("#search").addEventListener("input", (e) => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => {
      const term = e.target.value.trim();
      if (location.hash.startsWith("#gallery") || location.hash === "#trash") location.hash = "#photos";
      grid.reset(term ? { title: { $text: { $search: { $term: term } } } } : {}).then(() => {
        say(term ? `${grid.photos.length}${grid.done ? "" : "+"} photos match “${term}”.` : "");
      });
    }, 300);
  });

  $("#new-gallery").addEventListener("submit", async (e) => {
    e.preventDefault();
    const input = $("#new-gallery-name");
    const name = input.value.trim();
    if (!name) return;
    try {
      const id = await galleries.create(name);
      input.value = "";
      location.hash = `#gallery/${id}`;
    } catch (error) { fail(error); }
  });

  setUpUploads({
    input: $("#upload-input"), dropTarget: document.body, list: $("#uploads"),
    onCreated: async (id) => {
      try { grid.upsert([await call("GET", `/classes/Photo/${id}`)]); } catch (error) { fail(error); }
    },
  });

  watch({
    newest: () => grid.newest(), pendingIds: () => grid.pendingIds(),
    onPhotos: (photos) => {
      // Trashed elsewhere (a live `leave`): out of the grid; everything else added or refreshed.
      for (const photo of photos) if (photo.deletedAt && grid.photos.some((p) => p.objectId === photo.objectId)) grid.remove(photo.objectId);
      grid.upsert(photos.filter((p) => !p.deletedAt));
    },
    isActive: () => document.visibilityState === "visible",
  });

  document.addEventListener("grid-error", (e) => fail(e.detail));

  async function route() {
    const [view, id] = location.hash.slice(1).split("/");
    for (const section of document.querySelectorAll("main > section")) section.hidden = true;
    for (const link of document.querySelectorAll("nav a")) {
      link.toggleAttribute("aria-current", link.getAttribute("href") === location.hash || (!location.hash && link.getAttribute("href") === "#photos"));
    }
    try {
      if (view === "gallery" && id) {
        $("#gallery-section").hidden = false;
        await galleries.show(id);
      } else if (view === "trash") {
        $("#trash-section").hidden = false;
        activeGrid = trashGrid;
        await Promise.all([trashGrid.reset({ deletedAt: { $exists: true } }), showTrashedGalleries()]);
        return;
      } else {
        $("#photos-section").hidden = false;
        if (!grid.started) await grid.reset({});
      }
      activeGrid = grid;
    } catch (error) { fail(error); }
  }
  window.addEventListener("hashchange", route);
  await Promise.all([galleries.refresh().catch(fail), route()]);
  document.body.dataset.ready = "true";
}

main().catch(fail);
