// The Parse REST API, as the README's curl examples call it: X-Parse-Application-Id on every request,
// X-Parse-REST-API-Key when the server has one (the user types it once; it is kept in this
// browser's localStorage), and X-Parse-Session-Token once the user has logged in (the token is kept
// in localStorage too, as the Parse JavaScript SDK keeps its current user). The master key is never
// asked for nor sent: the page does only what a client may.

let config = { appId: "gallery", mountPath: "/parse", restKeyRequired: false, signupOpen: false };

/** Loads /web/config.json (application id and mount, whether a REST key is needed and sign-up open; no keys). */
export async function loadConfig() {
  const response = await fetch("/web/config.json");
  if (!response.ok) {
    const text = (await response.text().catch(() => "")).trim();
    throw new APIError(response.status, { error: text || `Cannot load the page's settings (HTTP ${response.status}).` });
  }
  config = await response.json();
  return config;
}

/** The loaded configuration (application id, mount path). */
export function settings() { return config; }

/** The REST key this browser remembers, or null. */
export function restKey() { return localStorage.getItem("galleryd.restKey"); }
/** Remembers the REST key. */
export function setRestKey(key) { localStorage.setItem("galleryd.restKey", key); }
/** Whether the page may call the API yet. */
export function hasKeys() { return !config.restKeyRequired || !!restKey(); }

const SESSION_KEY = "galleryd.sessionToken";
/** The session token of the user logged in in this browser, or null. */
export function sessionToken() { return localStorage.getItem(SESSION_KEY); }
/** Remembers a session token (after login or sign-up). */
export function setSessionToken(token) { localStorage.setItem(SESSION_KEY, token); }
/** Forgets the session token (logout, or the server no longer knows it). */
export function clearSessionToken() { localStorage.removeItem(SESSION_KEY); }

let sessionEndedHandler = () => {};
/** What to do when the server answers 209 (invalid session token): the token is already forgotten. */
export function onSessionEnded(handler) { sessionEndedHandler = handler; }
/** Parse's 209 (unknown, revoked or expired session) for the token this page sent: forget it, tell the page. */
export function sessionEnded() {
  clearSessionToken();
  sessionEndedHandler();
}

/** The headers every API call sends (`session: false` leaves the session token out, as login must). */
export function headers(extra = {}, { session = true } = {}) {
  const h = { "X-Parse-Application-Id": config.appId, ...extra };
  const key = restKey();
  if (config.restKeyRequired && key) h["X-Parse-REST-API-Key"] = key;
  const token = session ? sessionToken() : null;
  if (token) h["X-Parse-Session-Token"] = token;
  return h;
}

/** An API error with Parse's code and message, and the seconds of a Retry-After (429, 503), if any. */
export class APIError extends Error {
  constructor(status, body, retryAfter = null) {
    super(body && body.error ? body.error : `HTTP ${status}`);
    this.status = status;
    this.code = body && body.code;
    const seconds = retryAfter === null ? NaN : Number.parseInt(retryAfter, 10);
    this.retryAfter = Number.isFinite(seconds) ? seconds : null;
  }
}

/** Parse's code for an invalid session token. */
export const INVALID_SESSION_TOKEN = 209;

/**
 * Calls the API: `path` below the mount, optional JSON body; resolves to the JSON answer. A 209
 * for a token this page sent ends the session (`onSessionEnded`) before the error is thrown.
 */
export async function call(method, path, body, { session = true } = {}) {
  const sent = session ? sessionToken() : null;
  const init = { method, headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }, { session }) };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(config.mountPath + path, init);
  const json = await response.json().catch(() => null);
  if (!response.ok) {
    const error = new APIError(response.status, json, response.headers.get("Retry-After"));
    if (sent && error.code === INVALID_SESSION_TOKEN && sent === sessionToken()) sessionEnded();
    throw error;
  }
  return json;
}

/** The user of the remembered session (`GET /users/me`), or null without one or when it has ended. */
export async function currentUser() {
  if (!sessionToken()) return null;
  try {
    return await call("GET", "/users/me", undefined);
  } catch (error) {
    if (error.code === INVALID_SESSION_TOKEN) return null;
    throw error;
  }
}

/** `POST /login`; remembers the new session and resolves to the user. Sends no old token. */
export async function logIn(username, password) {
  const user = await call("POST", "/login", { username, password }, { session: false });
  setSessionToken(user.sessionToken);
  return user;
}

/** `POST /users` (sign-up, when `signupOpen`); remembers the new session and resolves to the user. */
export async function signUp(username, password, email) {
  const body = { username, password };
  if (email) body.email = email;
  const created = await call("POST", "/users", body, { session: false });
  setSessionToken(created.sessionToken);
  return { ...created, username };
}

/** `POST /logout` (revokes the session on the server), then forgets the token whatever the answer. */
export async function logOut() {
  try {
    if (sessionToken()) await call("POST", "/logout", {}, { session: true });
  } finally {
    clearSessionToken();
  }
}

/** GET /classes/<className> with query parameters (objects are JSON-encoded). */
export function find(className, params = {}) {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null) query.set(k, typeof v === "object" ? JSON.stringify(v) : String(v));
  }
  return call("GET", `/classes/${className}?${query}`);
}

/** A pointer to an object. */
export const pointer = (className, objectId) => ({ __type: "Pointer", className, objectId });
/** A Parse date value. */
export const date = (iso) => ({ __type: "Date", iso });

/**
 * Uploads a file with progress (fetch cannot report upload progress, XMLHttpRequest can):
 * POST /files/<name>, then creates the Photo naming it. `onProgress(fraction)`.
 */
export function upload(file, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    const name = encodeURIComponent(file.name.replace(/[^\w.-]+/g, "_") || "photo.jpg");
    xhr.open("POST", `${config.mountPath}/files/${name}`);
    for (const [k, v] of Object.entries(headers({ "Content-Type": file.type || "image/jpeg" }))) xhr.setRequestHeader(k, v);
    xhr.upload.onprogress = (e) => { if (e.lengthComputable) onProgress(e.loaded / e.total); };
    xhr.onerror = () => reject(new APIError(0, { error: "network error" }));
    xhr.onload = () => {
      let json = null;
      try { json = JSON.parse(xhr.responseText); } catch { /* not JSON */ }
      if (xhr.status >= 300) {
        const error = new APIError(xhr.status, json, xhr.getResponseHeader("Retry-After"));
        if (error.code === INVALID_SESSION_TOKEN && sessionToken()) sessionEnded();
        return reject(error);
      }
      onProgress(1);
      const title = file.name.replace(/\.[^.]*$/, "");
      call("POST", "/classes/Photo", { original: { __type: "File", name: json.name }, title })
        .then(resolve, reject);
    };
    xhr.send(file);
  });
}
