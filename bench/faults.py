#!/usr/bin/env python3
"""Fault scenarios for bench/faults.sh (issue #13's acceptance harness). Standard library only.

The photo may be a JPEG, PNG, WebP, HEIC or AVIF (issue #28): each upload is made unique in a way that
keeps it valid in its format (`unique_photo`). Each subcommand drives a running galleryd and prints figures as `key: value` lines:

  uploads  --pid P --photo F        50 concurrent uploads (and the photos of every --photo-every'th; every
                                    --json-every'th as the JavaScript SDK's JSON body, bench/faults_json.py),
                                    killed -9 at a random moment; appends every attempt (acknowledged or not) to --acked
  verify   --storage DIR --acked F  every acknowledged original is on disk with its SHA-256
  retry    --photo F --acked F      every attempt sent again: same file name, same photo, nothing more
  unique   --photo F --tag T --out O  a valid copy of the photo with its own SHA-256 (faults-jobs.sh)
  load     --restart CMD            first pages + uploads (--json-every as above) while PostgreSQL restarts (-m fast)
The scenarios that upload nothing (slowloris, memory) are bench/faults-http.py's.
"""
import argparse, hashlib, http.client, json, os, random, signal, subprocess, sys, threading, time, zlib

import faults_json

APP_ID = os.environ.get("GALLERYD_APP_ID", "gallery")
# The master key (faults.sh exports it): the app id alone reads nothing.
HEADERS = {"X-Parse-Application-Id": APP_ID, "X-Parse-Master-Key": os.environ.get("GALLERYD_MASTER_KEY", "")}


# The formats an upload may be (issue #28): the file's type, its extension in the store, its Content-Type.
FORMATS = {"jpeg": ("jpg", "image/jpeg"), "png": ("png", "image/png"), "webp": ("webp", "image/webp"),
           "heic": ("heic", "image/heic"), "avif": ("avif", "image/avif")}


def photo_format(base):
    """The format of an image's bytes, from its signature (as the server probes it)."""
    if base[:3] == b"\xff\xd8\xff":
        return "jpeg"
    if base[:8] == b"\x89PNG\r\n\x1a\n":
        return "png"
    if base[:4] == b"RIFF" and base[8:12] == b"WEBP":
        return "webp"
    if base[4:8] == b"ftyp":
        brands = {base[i:i + 4] for i in range(8, min(len(base), int.from_bytes(base[:4], "big")), 4)}
        return "avif" if brands & {b"avif", b"avis"} and base[8:12] != b"heic" else "heic"
    sys.exit("faults.py: the photo is not a JPEG, PNG, WebP, HEIC or AVIF")


def unique_photo(base, tag):
    """`base` made unique by `tag` and still whole and valid in its format: a COM segment after a JPEG's
    SOI, a tEXt chunk after a PNG's IHDR, an unknown chunk at the end of a WebP's RIFF (its size raised),
    a top-level `free` box after a HEIC's or AVIF's last box."""
    payload = ("galleryd-faults " + tag).encode()
    kind = photo_format(base)
    if kind == "jpeg":
        return base[:2] + b"\xff\xfe" + (len(payload) + 2).to_bytes(2, "big") + payload + base[2:]
    if kind == "png":
        body = b"tEXt" + b"Comment\x00" + payload
        chunk = (len(body) - 4).to_bytes(4, "big") + body + zlib.crc32(body).to_bytes(4, "big")
        return base[:33] + chunk + base[33:]  # signature (8) + IHDR (25)
    if kind == "webp":
        riff_end = 8 + int.from_bytes(base[4:8], "little")
        padded = payload + b"\x00" * (len(payload) % 2)
        chunk = b"GDFT" + len(payload).to_bytes(4, "little") + padded
        riff = base[:riff_end] + chunk
        return riff[:4] + (len(riff) - 8).to_bytes(4, "little") + riff[8:]
    return base + (len(payload) + 8).to_bytes(4, "big") + b"free" + payload


def extension(base):
    return FORMATS[photo_format(base)][0]


def content_type(base):
    return FORMATS[photo_format(base)][1]


def request(port, method, path, body=None, headers=None, timeout=30):
    """One request on a fresh connection: (status, body bytes)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        h = dict(HEADERS)
        h.update(headers or {})
        connection.request(method, path, body=body, headers=h)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def percentile(values, p):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def vm(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return -1


# -- kill -9 during uploads ------------------------------------------------------------------------

def upload(port, name, data, as_json=False):
    """A raw upload with the master key in its headers, or the JavaScript SDK's JSON upload: (status, body)."""
    if as_json:
        return faults_json.upload(port, name, data, content_type(data))[:2]
    return request(port, "POST", f"/parse/files/{name}", data, {"Content-Type": content_type(data)})


def create_photo(port, name):
    """POST /classes/Photo of an uploaded file: (status, objectId or None)."""
    status, body = request(port, "POST", "/parse/classes/Photo",
                           json.dumps({"original": {"__type": "File", "name": name}}).encode(),
                           {"Content-Type": "application/json"})
    return status, (json.loads(body).get("objectId") if status in (200, 201) else None)


def cmd_uploads(a):
    base = open(a.photo, "rb").read()
    ext = extension(base)
    attempts, errors, lock = [], [0], threading.Lock()
    start = threading.Barrier(a.count + 1)

    def attempt(i):
        tag = f"{a.round}-{i}-{time.time_ns()}"
        data = unique_photo(base, tag)
        digest = hashlib.sha256(data).hexdigest()
        # One line per attempt: its tag (the bytes are made again from it), the acknowledged file's
        # name and the created photo's objectId ("-": none, the kill came first).
        entry = {"tag": tag, "sha256": digest, "name": None, "photo": None, "wants_photo": i % a.photo_every == 0,
                 "json": a.json_every > 0 and i % a.json_every == a.json_every - 1}
        with lock:
            attempts.append(entry)
        start.wait()
        # Staggered starts, so the kill lands among uploads at every stage (sending, storing, answering,
        # creating the photo) and among the in-process worker's decodes of the photos created before it.
        time.sleep(random.uniform(0, a.max_delay))
        try:
            status, body = upload(a.port, f"k{i}.{ext}", data, entry["json"])
            if status == 201:
                entry["name"] = json.loads(body)["name"]
                if entry["wants_photo"]:
                    status, object_id = create_photo(a.port, entry["name"])
                    if status == 201:
                        entry["photo"] = object_id
        except Exception:
            with lock:
                errors[0] += 1

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(a.count)]
    for t in threads:
        t.start()
    start.wait()
    delay = random.uniform(0.2, 1.0) * a.max_delay
    time.sleep(delay)
    os.kill(a.pid, signal.SIGKILL)
    for t in threads:
        t.join()
    with open(a.acked, "a") as f:
        for entry in attempts:
            f.write(json.dumps(entry) + "\n")
    acked = sum(1 for e in attempts if e["name"])
    created = sum(1 for e in attempts if e["photo"])
    sdk = sum(1 for e in attempts if e["json"])
    sdk_acked = sum(1 for e in attempts if e["json"] and e["name"])
    print(f"round {a.round}: killed after {delay * 1000:.0f} ms, {acked} acknowledged ({sdk_acked} of {sdk} JSON), "
          f"{created} photos created, {errors[0]} cut off")


def cmd_verify(a):
    lost = corrupt = 0
    entries = [json.loads(line) for line in open(a.acked) if line.strip()]
    acked = [e for e in entries if e["name"]]
    for e in acked:
        name, digest = e["name"], e["sha256"]
        path = os.path.join(a.storage, "originals", name)
        if not os.path.exists(path):
            lost += 1
            continue
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        if h.hexdigest() != digest or name.split(".")[0] != digest:
            corrupt += 1
    print(f"acknowledged originals: {len(acked)} of {len(entries)} uploads "
          f"({sum(1 for e in acked if e.get('json'))} of {sum(1 for e in entries if e.get('json'))} JSON)")
    print(f"lost: {lost}")
    print(f"sha256 mismatches: {corrupt}")
    return 1 if lost or corrupt else 0


def cmd_unique(a):
    """Writes --photo made unique by --tag (faults-jobs.sh's copies); prints its extension and Content-Type."""
    base = open(a.photo, "rb").read()
    with open(a.out, "wb") as f:
        f.write(unique_photo(base, a.tag))
    print(extension(base), content_type(base))


def cmd_retry(a):
    """Every upload of the kill rounds sent again, and its photo created again, as a client retries:
    an acknowledged file keeps its name, a created photo comes back as the same objectId (200, not 201)."""
    base = open(a.photo, "rb").read()
    ext = extension(base)
    entries = [json.loads(line) for line in open(a.acked) if line.strip()]
    counts = {"renamed": 0, "new_photo_for_created": 0, "upload_failed": 0, "create_failed": 0}
    lock = threading.Lock()
    queue = list(entries)

    def work():
        while True:
            with lock:
                if not queue:
                    return
                e = queue.pop()
            data = unique_photo(base, e["tag"])
            status, body = upload(a.port, f"r.{ext}", data, e.get("json", False))
            if status != 201:
                with lock:
                    counts["upload_failed"] += 1
                continue
            name = json.loads(body)["name"]
            with lock:
                if e["name"] and name != e["name"]:
                    counts["renamed"] += 1
            if not e["wants_photo"]:
                continue
            status, object_id = create_photo(a.port, name)
            with lock:
                if status not in (200, 201):
                    counts["create_failed"] += 1
                elif e["photo"] and (object_id != e["photo"] or status != 200):
                    counts["new_photo_for_created"] += 1

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(f"retried uploads: {len(entries)} ({sum(1 for e in entries if e['wants_photo'])} with their photo, "
          f"{sum(1 for e in entries if e['photo'])} of which had one); "
          f"renamed {counts['renamed']}, photo not the first one {counts['new_photo_for_created']}, "
          f"upload refused {counts['upload_failed']}, create refused {counts['create_failed']}")
    return 1 if any(counts.values()) else 0


# -- PostgreSQL restart under load ----------------------------------------------------------------

def cmd_load(a):
    base = open(a.photo, "rb").read()
    ext = extension(base)
    events, lock, stop = [], threading.Lock(), threading.Event()

    def record(kind, t0, t1, outcome):
        with lock:
            events.append((kind, t0, t1, outcome))

    def reader():
        connection = None
        while not stop.is_set():
            t0 = time.monotonic()
            try:
                if connection is None:
                    connection = http.client.HTTPConnection("127.0.0.1", a.port, timeout=30)
                connection.request("GET", "/parse/classes/Photo?limit=50&order=-createdAt", headers=HEADERS)
                response = connection.getresponse()
                response.read()
                record("query", t0, time.monotonic(), response.status)
                if response.getheader("Connection", "").lower() == "close":
                    connection.close()
                    connection = None
            except Exception as e:
                record("query", t0, time.monotonic(), type(e).__name__)
                connection = None

    def uploader(n):
        i = 0
        while not stop.is_set():
            i += 1
            data = unique_photo(base, f"load-{n}-{i}-{time.time_ns()}")
            sdk = a.json_every > 0 and i % a.json_every == 0
            kind = "json upload" if sdk else "upload"
            t0 = time.monotonic()
            try:
                status, body = upload(a.port, f"l{n}.{ext}", data, sdk)
                if status == 201:
                    status, _ = create_photo(a.port, json.loads(body)["name"])
                record(kind, t0, time.monotonic(), status)
            except Exception as e:
                record(kind, t0, time.monotonic(), type(e).__name__)

    threads = [threading.Thread(target=reader) for _ in range(a.readers)]
    threads += [threading.Thread(target=uploader, args=(n,)) for n in range(a.uploaders)]
    began = time.monotonic()
    for t in threads:
        t.start()
    time.sleep(a.before)
    restart_at = time.monotonic()
    subprocess.run(a.restart, shell=True, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    restarted_at = time.monotonic()
    time.sleep(a.after)
    stop.set()
    for t in threads:
        t.join()

    def ok(outcome, kind):
        return outcome == 200 or (kind != "query" and outcome in (200, 201))

    failures = [e for e in events if not ok(e[3], e[0])]
    kinds = {}
    for e in failures:
        kinds[f"{e[0]} {e[3]}"] = kinds.get(f"{e[0]} {e[3]}", 0) + 1
    print(f"requests: {len(events)} in {time.monotonic() - began:.1f} s "
          f"({sum(1 for e in events if e[0] == 'query')} queries, {sum(1 for e in events if e[0] == 'upload')} uploads, "
          f"{sum(1 for e in events if e[0] == 'json upload')} JSON uploads)")
    print(f"pg_ctl restart -m fast took: {(restarted_at - restart_at) * 1000:.0f} ms")
    print(f"failed requests: {len(failures)} {json.dumps(kinds, sort_keys=True)}")
    if failures:
        last = max(e[2] for e in failures)
        after = [e[2] for e in events if ok(e[3], e[0]) and e[1] >= last]
        recovered = min(after) if after else float("nan")
        print(f"failures from restart start: first {(min(e[1] for e in failures) - restart_at) * 1000:.0f} ms, "
              f"last {(last - restart_at) * 1000:.0f} ms")
        print(f"recovery time (restart start -> first success after the last failure): {(recovered - restart_at) * 1000:.0f} ms; "
              f"{max(0.0, recovered - restarted_at) * 1000:.0f} ms after pg_ctl returned")
    else:
        print("recovery time: 0 ms (no request failed)")


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="command", required=True)
    u = sub.add_parser("uploads")
    u.add_argument("--port", type=int, required=True)
    u.add_argument("--pid", type=int, required=True)
    u.add_argument("--photo", required=True)
    u.add_argument("--acked", required=True)
    u.add_argument("--round", type=int, default=0)
    u.add_argument("--count", type=int, default=50)
    u.add_argument("--max-delay", type=float, default=1.5)
    u.add_argument("--photo-every", type=int, default=1, help="create the photo of every Nth upload")
    u.add_argument("--json-every", type=int, default=0, help="send every Nth upload as the JavaScript SDK's JSON")
    r = sub.add_parser("retry")
    r.add_argument("--port", type=int, required=True)
    r.add_argument("--photo", required=True)
    r.add_argument("--acked", required=True)
    v = sub.add_parser("verify")
    v.add_argument("--storage", required=True)
    v.add_argument("--acked", required=True)
    q = sub.add_parser("unique")
    q.add_argument("--photo", required=True)
    q.add_argument("--tag", required=True)
    q.add_argument("--out", required=True)
    l = sub.add_parser("load")
    l.add_argument("--port", type=int, required=True)
    l.add_argument("--photo", required=True)
    l.add_argument("--restart", required=True)
    l.add_argument("--readers", type=int, default=6)
    l.add_argument("--uploaders", type=int, default=2)
    l.add_argument("--json-every", type=int, default=0, help="send every Nth upload as the JavaScript SDK's JSON")
    l.add_argument("--before", type=float, default=4)
    l.add_argument("--after", type=float, default=8)
    a = p.parse_args()
    sys.exit({"uploads": cmd_uploads, "verify": cmd_verify, "retry": cmd_retry, "unique": cmd_unique,
              "load": cmd_load}[a.command](a) or 0)


if __name__ == "__main__":
    main()
