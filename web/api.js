// The Parse REST API, as the README's curl examples call it: X-Parse-Application-Id on every request,
// and X-Parse-REST-API-Key when the server has one (the user types it once; it is kept in this
// browser's localStorage). The master key is never asked for nor sent: the page does only what a client may.

let config = { appId: "gallery", mountPath: "/parse", restKeyRequired: false };

/** Loads /web/config.json (application id and mount, no keys). */
export async function loadConfig() {
  const response = await fetch("/web/config.json");
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

/** The headers every API call sends. */
export function headers(extra = {}) {
  const h = { "X-Parse-Application-Id": config.appId, ...extra };
  const key = restKey();
  if (config.restKeyRequired && key) h["X-Parse-REST-API-Key"] = key;
  return h;
}

/** An API error with Parse's code and message. */
export class APIError extends Error {
  constructor(status, body) {
    super(body && body.error ? body.error : `HTTP ${status}`);
    this.status = status;
    this.code = body && body.code;
  }
}

/** Calls the API: `path` below the mount, optional JSON body; resolves to the JSON answer. */
export async function call(method, path, body) {
  const init = { method, headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }) };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(config.mountPath + path, init);
  const json = await response.json().catch(() => null);
  if (!response.ok) throw new APIError(response.status, json);
  return json;
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
      if (xhr.status >= 300) return reject(new APIError(xhr.status, json));
      onProgress(1);
      const title = file.name.replace(/\.[^.]*$/, "");
      call("POST", "/classes/Photo", { original: { __type: "File", name: json.name }, title })
        .then(resolve, reject);
    };
    xhr.send(file);
  });
}
