// The web gallery: wires the grid, search, preview, galleries, Recently Deleted, uploads and live
// updates together. Views follow the URL hash: #photos (default), #gallery/<id>, #trash.
// The page first needs a session (the app id alone reads nothing): it shows its login form (and
// sign-up, when open) until one is made; logging out, or the server ending the session (209), starts
// the page over, so nothing of one user's library (grid, galleries, preview, live subscription)
// outlives their session.
import {
  loadConfig, settings, hasKeys, setRestKey, call, find, currentUser, logIn, signUp, logOut, onSessionEnded,
  sessionToken,
} from "./api.js";
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

/** Survives the reload that follows an ended session, so the login form can say why it is back. */
const NOTICE_KEY = "galleryd.loginNotice";

/** How long to wait, in words, from a Retry-After in seconds. */
const inSeconds = (seconds) => `${seconds} second${seconds === 1 ? "" : "s"}`;

/**
 * Shows the login form (with a way to sign up when the server allows it) until a login or sign-up
 * succeeds; resolves to the user. Parse's message for a refused login; for 429 the Retry-After wait,
 * with the button disabled until it has passed.
 */
function askForLogin(notice) {
  const form = $("#login"), error = $("#login-error"), submit = $("#login-submit");
  const username = $("#login-username"), password = $("#login-password"), email = $("#signup-email");
  let signingUp = false;
  const setMode = (up) => {
    signingUp = up;
    $("#login-title").textContent = up ? "Create an account" : "Log in";
    submit.textContent = up ? "Sign up" : "Log in";
    $("#signup-email-field").hidden = !up;
    $("#signup-toggle").textContent = up ? "I have an account: log in" : "Create an account";
    password.autocomplete = up ? "new-password" : "current-password";
    error.textContent = "";
  };
  document.body.dataset.auth = "login";
  $("#login-notice").textContent = notice;
  $("#signup-switch").hidden = !settings().signupOpen;
  $("#signup-toggle").addEventListener("click", () => setMode(!signingUp));
  form.hidden = false;
  username.focus();
  return new Promise((resolve) => form.addEventListener("submit", async (e) => {
    e.preventDefault();
    error.textContent = "";
    submit.disabled = true;
    let waitSeconds = 0;
    try {
      const user = signingUp
        ? await signUp(username.value.trim(), password.value, email.value.trim())
        : await logIn(username.value.trim(), password.value);
      password.value = "";
      form.hidden = true;
      delete document.body.dataset.auth;
      resolve(user);
    } catch (failure) {
      if (failure.status === 429 && failure.retryAfter !== null) {
        waitSeconds = failure.retryAfter;
        error.textContent = `Too many failed login attempts. Try again in ${inSeconds(waitSeconds)}.`;
      } else {
        error.textContent = failure.message || String(failure);
      }
      password.select();
    } finally {
      setTimeout(() => { submit.disabled = false; }, waitSeconds * 1000);
    }
  }));
}

/** Shows who is logged in, with the Log out button (which revokes the session and starts the page over). */
function showAccount(user) {
  $("#account-name").textContent = user.username;
  $("#account").hidden = false;
  $("#logout").addEventListener("click", async () => {
    try { await logOut(); } catch (error) { console.warn("logout:", error); }
    location.reload();
  });
}

/** The session the page works in: the remembered one if the server still knows it, else a new login. */
async function ensureSession() {
  let notice = sessionStorage.getItem(NOTICE_KEY) || "";
  sessionStorage.removeItem(NOTICE_KEY);
  const remembered = sessionToken();
  let user = await currentUser();
  if (!user) {
    if (remembered && !notice) notice = "Your session has ended. Please log in again.";
    user = await askForLogin(notice);
  }
  showAccount(user);
  // From here on a 209 (the session revoked or expired meanwhile) brings the login form back.
  onSessionEnded(() => {
    sessionStorage.setItem(NOTICE_KEY, "Your session has ended. Please log in again.");
    location.reload();
  });
}

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
  await ensureSession();

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
      // The next photo, unless the preview was closed (or moved on) while the call was out.
      if (preview.dialog.open && preview.current === id) {
        preview.step(1);
        if (preview.current === id) preview.close();
      }
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
