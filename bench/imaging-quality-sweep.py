#!/usr/bin/env python3
"""Per-photo quality sweep of PNG and WebP originals' derivatives against vipsthumbnail (#28, decision 050).

Works on a directory of fixtures made as bench/imaging-formats.sh makes them (FIXTURES=DIR KEEP=1, or
its make_fixture commands): <photo>-screenshot-1170x2532.png and <photo>-photo-4000x3000.webp.
Per fixture, in RUN/<fixture>/: the original decoded by its own tool (decoded.png), vips' two
outputs (vips/preview.jpg, vips/thumbnail.jpg, the bench's vipsthumbnail commands), our outputs at
each passed quality Q (sw_libjpeg_Q_<Q+2>/, `imaging-process --quality Q --thumbnail-quality Q+2`:
the format's steps of SourceEncoderSettings apply on top, so the encoded quality is read back from
the files' tables), and the references (PIL Lanczos of decoded.png to each output's size, as the
bench scores). Bytes and SSIMULACRA2 do not depend on the machine's load.

  BIN=$(bench/imaging-process.sh) bench/imaging-quality-sweep.py grid FIXTURES RUN 68 70 … 84
  bench/imaging-quality-sweep.py score FIXTURES RUN JOBS ITEM…   ITEM = vips:KIND[:FILTER] or KIND:Q[:FILTER]
  bench/imaging-quality-sweep.py table RUN                        every file's bytes, encoded quality, score

Scores go to RUN/scores.json ("fixture|kind|Q" or "fixture|kind|vips" → [bytes, SSIMULACRA2]).
Needs dwebp, vipsthumbnail and .build-venv-bench (ssimulacra2, Pillow).
"""
import fcntl, glob, json, os, subprocess, sys
from multiprocessing import Pool

KINDS = ("thumbnail", "preview")


def store_score(store, key, value):
    """`value` saved under `key` in the JSON file `store`, which parallel jobs (and sweeps run side by
    side) update in turn: read, changed and replaced whole under a lock beside it."""
    with open(store + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        scores = json.load(open(store)) if os.path.exists(store) else {}
        scores[key] = value
        json.dump(scores, open(store + ".tmp", "w"), indent=0)
        os.replace(store + ".tmp", store)


def fixtures(directory):
    return sorted(glob.glob(directory + "/*-screenshot-1170x2532.png") + glob.glob(directory + "/*-photo-4000x3000.webp"))


def prepare(fixture, d):
    """decoded.png and vips' outputs, made once."""
    os.makedirs(d + "/vips", exist_ok=True)
    if not os.path.exists(d + "/decoded.png"):
        if fixture.endswith(".webp"):
            subprocess.run(["dwebp", "-quiet", fixture, "-o", d + "/decoded.tmp.png"], check=True)
        else:
            subprocess.run(["cp", fixture, d + "/decoded.tmp.png"], check=True)
        os.replace(d + "/decoded.tmp.png", d + "/decoded.png")
    if not os.path.exists(d + "/vips/thumbnail.jpg"):
        from PIL import Image
        with Image.open(d + "/decoded.png") as im:
            w, h = im.size
        box = "x400>" if w >= h else "400x>"
        subprocess.run(["vipsthumbnail", fixture, "--size", "2048x2048>", "-o", d + "/vips/preview.jpg[Q=80,strip]"], check=True)
        subprocess.run(["vipsthumbnail", fixture, "--size", box, "-o", d + "/vips/thumbnail.jpg[Q=80,strip]"], check=True)


def reference(d, path):
    from PIL import Image
    with Image.open(path) as im:
        w, h = im.size
    r = os.path.join(d, "ref_%dx%d.png" % (w, h))
    if not os.path.exists(r):
        Image.open(d + "/decoded.png").convert("RGB").resize((w, h), Image.LANCZOS).save(r + ".tmp.png")
        os.replace(r + ".tmp.png", r)
    return r


def score_one(job):
    fixture, run, kind, q = job
    from ssimulacra2 import compute_ssimulacra2
    name = os.path.basename(fixture)
    d = os.path.join(run, name)
    prepare(fixture, d)
    path = d + ("/vips/%s.jpg" % kind if q == "vips" else "/sw_libjpeg_%d_%d/%s.jpg" % (q, q + 2, kind))
    return "%s|%s|%s" % (name, kind, q), [os.path.getsize(path), compute_ssimulacra2(reference(d, path), path)]


def luma_step_sum(path):
    from PIL import Image
    with Image.open(path) as im:
        return sum(im.quantization[0])


def main():
    command = sys.argv[1]
    if command == "grid":
        source, run, qualities = sys.argv[2], sys.argv[3], [int(q) for q in sys.argv[4:]]
        for q in qualities:
            for fixture in fixtures(source):
                d = os.path.join(run, os.path.basename(fixture))
                prepare(fixture, d)
                out = d + "/sw_libjpeg_%d_%d" % (q, q + 2)
                if not os.path.exists(out + "/preview.jpg"):
                    subprocess.run([os.environ["BIN"], "process", fixture, "--out", out, "--quality", str(q),
                                    "--thumbnail-quality", str(q + 2)], check=True, stdout=subprocess.DEVNULL)
    elif command == "score":
        source, run, jobs = sys.argv[2], sys.argv[3], int(sys.argv[4])
        work = []
        for item in sys.argv[5:]:
            parts = item.split(":") + [""]
            kind, q = (parts[1], "vips") if parts[0] == "vips" else (parts[0], int(parts[1]))
            work += [(f, run, kind, q) for f in fixtures(source) if parts[2] in os.path.basename(f)]
        store = os.path.join(run, "scores.json")
        with Pool(jobs) as pool:
            for key, value in pool.imap_unordered(score_one, work):
                store_score(store, key, value)
                print(key, "%d %.2f" % (value[0], value[1]), flush=True)
    elif command == "table":
        run = sys.argv[2]
        scores = json.load(open(os.path.join(run, "scores.json")))
        for d in sorted(glob.glob(run + "/*/")):
            name = os.path.basename(d.rstrip("/"))
            for kind in KINDS:
                vips = scores.get("%s|%s|vips" % (name, kind))
                for out in sorted(glob.glob(d + "sw_libjpeg_*/%s.jpg" % kind)):
                    q = int(out.split("/")[-2].split("_")[2])
                    mine = scores.get("%s|%s|%d" % (name, kind, q))
                    print(name, kind, q, luma_step_sum(out), os.path.getsize(out),
                          os.path.getsize(d + "vips/%s.jpg" % kind), "%.2f" % mine[1] if mine else "-",
                          "%.2f" % vips[1] if vips else "-")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
