#!/usr/bin/env python3
"""Helpers of bench/faults-import.sh: the folders `galleryd import` walks, a file still being written
while it does, and the check that every file was imported exactly once.

  set DIR TAG FIXTURE...   writes into DIR each fixture made unique by TAG (bench/faults.py's
                           unique_photo, under its format's extension; the first HEIC also as `.HEIC`),
                           a PNG named `.jpg` and a HEIC named `.png` (mismatching extensions), and two
                           corrupt files (random bytes named `.heic`, a PNG cut in half); appends each
                           to DIR/../manifest.jsonl with its SHA-256 and whether it must be imported
  write DIR TAG FIXTURE S  writes the fixture made unique into DIR/writing-TAG.<ext> over S seconds
                           (64 KiB at a time, as a copy from a camera card does), then records it
  check MANIFEST STORAGE [processed]
                           for every file of the manifest: `files` rows and photos with its SHA-256 (1
                           and 1 for a good file, 0 and 0 for a corrupt one); rows and photos of no file
                           of the manifest (a partial read of the file being written, say); originals
                           on disk against rows; temporary files; with `processed` (`import --process`),
                           every photo ready and every job done too; exits 1 when any check fails
The database is DATABASE_URL, read with psql."""
import glob
import hashlib
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
faults = __import__("faults")


def record(directory, path, good):
    data = open(path, "rb").read()
    line = {"path": path, "sha256": hashlib.sha256(data).hexdigest(), "good": good, "bytes": len(data)}
    with open(os.path.join(os.path.dirname(os.path.abspath(directory)), "manifest.jsonl"), "a") as f:
        f.write(json.dumps(line) + "\n")


def cmd_set(directory, tag, fixtures):
    os.makedirs(directory, exist_ok=True)
    upper_done = False
    for i, fixture in enumerate(fixtures):
        base = open(fixture, "rb").read()
        ext = faults.extension(base)
        stem = os.path.splitext(os.path.basename(fixture))[0]
        path = os.path.join(directory, f"{stem}-{tag}-{i}.{ext}")
        if ext == "heic" and not upper_done:
            path, upper_done = path[:-4] + "HEIC", True
        open(path, "wb").write(faults.unique_photo(base, f"{tag} {i}"))
        record(directory, path, True)
    by_kind = {faults.photo_format(open(f, "rb").read()): f for f in fixtures}
    for kind, wrong in (("png", "jpg"), ("heic", "png")):
        if kind in by_kind:
            path = os.path.join(directory, f"mislabelled-{kind}-{tag}.{wrong}")
            open(path, "wb").write(faults.unique_photo(open(by_kind[kind], "rb").read(), f"{tag} mislabelled"))
            record(directory, path, True)
    path = os.path.join(directory, f"corrupt-{tag}.heic")
    open(path, "wb").write(os.urandom(200_000))
    record(directory, path, False)
    if "png" in by_kind:
        whole = faults.unique_photo(open(by_kind["png"], "rb").read(), f"{tag} cut")
        path = os.path.join(directory, f"cut-{tag}.png")
        open(path, "wb").write(whole[:len(whole) // 2])
        record(directory, path, False)


def cmd_write(directory, tag, fixture, seconds):
    base = open(fixture, "rb").read()
    data = faults.unique_photo(base, f"{tag} writing")
    path = os.path.join(directory, f"writing-{tag}.{faults.extension(base)}")
    step = 64 * 1024
    pause = seconds / max(1, len(data) // step)
    with open(path, "wb") as f:
        for at in range(0, len(data), step):
            f.write(data[at:at + step])
            f.flush()
            time.sleep(pause)
    record(directory, path, True)


def sql(query):
    out = subprocess.run([os.environ.get("PSQL", "psql"), os.environ["DATABASE_URL"], "-tAc", query], check=True,
                         capture_output=True, text=True).stdout
    return [line.split("|") for line in out.splitlines() if line]


def cmd_check(manifest, storage, processed=False):
    files = [json.loads(line) for line in open(manifest)]
    rows = {}
    for checksum, n in sql("select checksum, count(*) from files group by 1"):
        rows[checksum] = int(n)
    photos = {}
    for checksum, n in sql("select checksum, count(*) from photos group by 1"):
        photos[checksum] = int(n)
    bad = []
    for f in files:
        want = 1 if f["good"] else 0
        got = (rows.get(f["sha256"], 0), photos.get(f["sha256"], 0))
        if got != (want, want):
            bad.append(f"{os.path.basename(f['path'])}: {got[0]} files row(s), {got[1]} photo(s), wanted {want}")
    known = {f["sha256"] for f in files}
    strays = sorted(set(rows) - known)
    stray_photos = sorted(set(photos) - known)
    originals = [p for p in glob.glob(os.path.join(storage, "originals", "**"), recursive=True) if os.path.isfile(p)]
    temp = [p for p in glob.glob(os.path.join(storage, ".tmp", "**"), recursive=True)
            if os.path.isfile(p) and not p.endswith(".lock")]
    good = sum(f["good"] for f in files)
    print(f"files: {len(files)} ({good} good, {len(files) - good} corrupt); files rows {sum(rows.values())}, "
          f"photos {sum(photos.values())}, originals on disk {len(originals)}, temp files {len(temp)}")
    print(f"not exactly once: {len(bad)}; rows of no file: {len(strays)}; photos of no file: {len(stray_photos)}")
    for line in bad[:20]:
        print("  " + line)
    for checksum in strays[:5]:
        print("  stray row " + checksum)
    ok = not bad and not strays and not stray_photos and len(originals) == sum(rows.values()) and not temp
    if processed:
        statuses = dict(sql("select status, count(*) from photos group by 1"))
        (jobs_left, most), = sql("select count(*) filter (where state <> 'done'), coalesce(max(attempts), 0) from jobs")
        print(f"photos {json.dumps(statuses, sort_keys=True)}; jobs not done {jobs_left}; most attempts a job used {most}")
        ok = ok and set(statuses) <= {"ready"} and jobs_left == "0"
    print("exactly once: " + ("yes" if ok else "NO"))
    return 0 if ok else 1


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "set":
        cmd_set(args[0], args[1], args[2:])
    elif cmd == "write":
        cmd_write(args[0], args[1], args[2], float(args[3]))
    elif cmd == "check":
        sys.exit(cmd_check(args[0], args[1], args[2:] == ["processed"]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
