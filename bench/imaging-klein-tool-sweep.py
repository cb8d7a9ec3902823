#!/usr/bin/env python3
"""Klein's table on the release tool's own thumbnails and downscaled previews, per photo (#28, decision 060).

Unlike imaging-klein-curves.py (previews at the original's size, re-encoded with PIL), these outputs are our
resampler's pixels, so the release tool itself writes them, with the sweep's knobs patched in:

  git apply bench/imaging-klein-sweep.patch && BIN=$(bench/imaging-process.sh) && cp $BIN SWEEP_BIN
  git checkout Sources/Imaging/ImagePipeline+Raster.swift      # the knobs are never committed

SWEEP_THUMB_KLEIN=s puts the thumbnail on Klein's table at the thumbnail's quality in force + s;
SWEEP_DS_KLEIN=s a downscaled preview at the preview's quality in force + s. The F knobs take a fractional
step (Klein's table scaled by libjpeg's 200 − 2q percent at a fractional quality q, rounded; at a whole step
the same tables as the knobs above): SWEEP_THUMB_KLEINF, SWEEP_DS_KLEINF, and SWEEP_KS_KLEINF for a preview
that keeps the original's size (in place of 060's rule). The sweep sets the F knob of its kind.

  imaging-klein-tool-sweep.py sweep RUN FX SWEEP_BIN OUT t|d|vips STEP,…
        t: thumbnails, d: downscaled previews (originals over 2048 pixels), k: previews that keep the
        original's size (the others), vips: score vips' thumbnails (STEP unused; fractional steps allowed); files under OUT/<t|d>/<step>/<fixture>, scores in OUT/sweep.json
  imaging-klein-tool-sweep.py table RUN OUT NOW t|d STEP,…
        per fixture: score − vips' / both files of the photo over vips' bytes, for NOW's files (the tool in
        force: NOW/<fixture>/) and each step, the other file as in NOW

RUN is bench/imaging-quality-sweep.py's (RUN/<fixture>/decoded.png, vips/, ref_WxH.png); FX the fixtures.
Needs .build-venv-bench (ssimulacra2, Pillow).
"""
import importlib.util, json, os, subprocess, sys
from multiprocessing import Pool
from PIL import Image

spec = importlib.util.spec_from_file_location(
    "quality_sweep", os.path.join(os.path.dirname(os.path.abspath(__file__)), "imaging-quality-sweep.py"))
quality_sweep = importlib.util.module_from_spec(spec)
spec.loader.exec_module(quality_sweep)


def ref_for(run, name, path):
    with Image.open(path) as im:
        w, h = im.size
    r = os.path.join(run, name, "ref_%dx%d.png" % (w, h))
    if not os.path.exists(r):
        tmp = r + ".%d.png" % os.getpid()
        Image.open(os.path.join(run, name, "decoded.png")).convert("RGB").resize((w, h), Image.LANCZOS).save(tmp)
        os.replace(tmp, r)
    return r


def score(run, name, path):
    from ssimulacra2 import compute_ssimulacra2
    return [os.path.getsize(path), float(compute_ssimulacra2(ref_for(run, name, path), path))]


def job(a):
    run, fx, binary, out, kind, name, step = a
    if kind == "vips":
        return "vips|%s|thumbnail" % name, score(run, name, os.path.join(run, name, "vips", "thumbnail.jpg"))
    o = os.path.join(out, kind, step, name)
    if not os.path.exists(o + "/preview.jpg"):
        env = dict(os.environ)
        env[{"t": "SWEEP_THUMB_KLEINF", "d": "SWEEP_DS_KLEINF", "k": "SWEEP_KS_KLEINF"}[kind]] = step
        subprocess.run([binary, "process", os.path.join(fx, name), "--out", o], check=True,
                       stdout=subprocess.DEVNULL, env=env)
    return "%s|%s|%s" % (kind, name, step), score(run, name, o + ("/thumbnail.jpg" if kind == "t" else "/preview.jpg"))


def fixtures(run, kind):
    names = sorted(n for n in os.listdir(run) if os.path.isdir(os.path.join(run, n)))
    if kind in ("d", "k"):
        names = [n for n in names
                 if (max(Image.open(os.path.join(run, n, "decoded.png")).size) > 2048) == (kind == "d")]
    return names


def load(path):
    return json.load(open(path)) if os.path.exists(path) else {}


def sweep(run, fx, binary, out, kind, steps):
    store = os.path.join(out, "sweep.json")
    done = load(store)
    work = [(run, fx, binary, out, kind, n, s) for s in (["-"] if kind == "vips" else steps)
            for n in fixtures(run, kind)
            if ("vips|%s|thumbnail" % n if kind == "vips" else "%s|%s|%s" % (kind, n, s)) not in done]
    with Pool(2) as pool:
        for k, v in pool.imap_unordered(job, work):
            quality_sweep.store_score(store, k, v)
            print(k, v, flush=True)


def table(run, out, now, kind, steps):
    store = os.path.join(out, "sweep.json")
    s = load(store)
    for n in fixtures(run, kind):
        if "vips|%s|thumbnail" % n not in s:
            s["vips|%s|thumbnail" % n] = score(run, n, os.path.join(run, n, "vips", "thumbnail.jpg"))
        if "now|%s|%s" % (kind, n) not in s:
            s["now|%s|%s" % (kind, n)] = score(run, n, os.path.join(now, n, "thumbnail.jpg" if kind == "t" else "preview.jpg"))
        if kind in ("d", "k") and "vips|%s|preview" % n not in s:
            s["vips|%s|preview" % n] = score(run, n, os.path.join(run, n, "vips", "preview.jpg"))
    json.dump(s, open(store, "w"), indent=0)
    print("| fixture | now | " + " | ".join("E%+g" % float(x) for x in steps) + " |")
    print("|---|---|" + "---|" * len(steps))
    for n in fixtures(run, kind):
        tv, tvs = s["vips|%s|thumbnail" % n]
        pv = os.path.getsize(os.path.join(run, n, "vips", "preview.jpg"))
        vips_score = tvs if kind == "t" else s["vips|%s|preview" % n][1]
        other = os.path.getsize(os.path.join(now, n, "preview.jpg" if kind == "t" else "thumbnail.jpg"))
        cells = []
        for v in [s["now|%s|%s" % (kind, n)]] + [s.get("%s|%s|%s" % (kind, n, x)) for x in steps]:
            cells.append("%+.2f / %.3f" % (v[1] - vips_score, (v[0] + other) / (tv + pv)) if v else "–")
        print("| %s | %s |" % (n, " | ".join(cells)))


if __name__ == "__main__":
    a = sys.argv[1:]
    if len(a) == 7 and a[0] == "sweep":
        sweep(a[1], a[2], a[3], a[4], a[5], a[6].split(","))
    elif len(a) == 6 and a[0] == "table" and a[4] in ("t", "d", "k"):
        table(a[1], a[2], a[3], a[4], a[5].split(","))
    else:
        sys.exit(__doc__)
