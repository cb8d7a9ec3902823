#!/usr/bin/env python3
"""A validation set for issue #28's encoder rules: sources made from photos at sizes and encoder qualities the
bench does not use, run through a release tool against vipsthumbnail (decision 027, "Validation").

The bench (bench/imaging-formats.sh) makes one fixture per photo and format, and rules fitted on those fixtures
failed on other photos (decision 064's validation). This makes other sources exactly as the bench makes its
fixtures, keeps vips' outputs and the references per source, and scores a tool's outputs against them:

  imaging-validate.py make SET SPEC [PHOTOS]
        each SPEC line `PHOTO WIDTHxHEIGHT FORMAT QUALITY` (# starts a comment; a field may list values
        with commas, and the line stands for every combination: a generator) becomes SET/FX/<photo>-<W>x<H>-q<Q>
        .<format>: PHOTOS/<photo>.jpg (default /work/shared/photos) cropped and scaled down as the bench's
        make_fixture does (`vips thumbnail … W --height H --crop centre --size down`: nothing is enlarged), then
        `heif-enc -q Q` (heic), `heif-enc -A -q Q` (avif), `cwebp -q Q` (webp) or as it is (png, Q unused). Per
        source, made once: SET/RUN/<name>/decoded.png (heif-convert, `vips copy …[strip]` where it writes none;
        dwebp; the PNG itself), vips' two files (the bench's vipsthumbnail commands) and their scores
  imaging-validate.py run SET BIN [TAG [BASE]]
        BIN (a release `imaging-process`: GALLERYD=$(bench/imaging-process.sh)) processes every source of SET
        that `make` has finished into SET/OUT/<TAG>/<name>/ (TAG defaults to BIN's name and the start of its
        SHA-256, so a rebuilt tool is run again), both files are scored, then the table below is printed; a
        second tool costs only its runs and its scores
  imaging-validate.py table SET TAG [BASE]
        per source: its case, the thumbnail's and the preview's bytes over vips', each file's score − vips', both
        files over vips' bytes, and flags: BELOW (a file under vips' score), OVER (both files over GOAL, 0.91,
        vips' bytes), NEW (BELOW where BASE, another tag, was not); then the counts per format and per case

The case is the tool's (SourceEncoderSettings): `flat`/`detailed`, a preview at the original's size by its mean
luma gradient (6 and above is detailed: PreviewDetail), `near flat`/`near detailed` the same with a thumbnail of at
least 0.75 of the preview's pixels (near-size), `down` a downscaled preview. Scores and bytes (SSIMULACRA2 of PIL
Lanczos references, as the bench) go to SET/scores.json: vips|<name>|<kind>, <TAG>|<name>|<kind> → [bytes, score].
JOBS (default 2) sources at a time. Needs heif-enc/heif-convert, cwebp/dwebp, vips and .build-venv-bench
(ssimulacra2, Pillow, numpy).
"""
import hashlib, importlib.util, itertools, os, subprocess, sys
from multiprocessing import Pool

spec = importlib.util.spec_from_file_location(
    "klein_tool_sweep", os.path.join(os.path.dirname(os.path.abspath(__file__)), "imaging-klein-tool-sweep.py"))
klein_tool_sweep = importlib.util.module_from_spec(spec)
spec.loader.exec_module(klein_tool_sweep)
quality_sweep = klein_tool_sweep.quality_sweep

KINDS = ("thumbnail", "preview")
ENCODERS = {
    "heic": lambda q, src, out: ["heif-enc", "-q", q, "-o", out, src],
    "avif": lambda q, src, out: ["heif-enc", "-A", "-q", q, "-o", out, src],
    "webp": lambda q, src, out: ["cwebp", "-quiet", "-q", q, src, "-o", out],
    "png": lambda q, src, out: ["cp", src, out],
}
GOAL = 0.91
DETAILED = 6


def parse(path):
    """(photo, width, height, format, quality) per source of the spec file, in its order, once each."""
    sources = []
    for line in open(path):
        fields = line.split("#")[0].split()
        if not fields:
            continue
        if len(fields) != 4:
            sys.exit("imaging-validate.py: %s: want PHOTO WIDTHxHEIGHT FORMAT QUALITY, got %r" % (path, line.strip()))
        for photo, size, fmt, q in itertools.product(*(f.split(",") for f in fields)):
            if fmt not in ENCODERS:
                sys.exit("imaging-validate.py: unknown format %s (%s)" % (fmt, ", ".join(ENCODERS)))
            w, h = (int(v) for v in size.lower().split("x"))
            s = (photo, w, h, fmt, 0 if fmt == "png" else int(q))
            if s not in sources:
                sources.append(s)
    return sources


def name_of(s):
    photo, w, h, fmt, q = s
    return "%s-%dx%d%s.%s" % (photo, w, h, "" if fmt == "png" else "-q%d" % q, fmt)


def names(d):
    return sorted(n for n in os.listdir(os.path.join(d, "FX")) if ".tmp." not in n)


def gradient(png):
    """PreviewDetail.meanGradient of the decoded original (every fourth row pair, libjpeg's luma weights)."""
    import numpy as np
    from PIL import Image
    a = np.asarray(Image.open(png).convert("RGB")).astype(np.int64)
    h, w = a.shape[:2]
    luma = 77 * a[:, :, 0] + 150 * a[:, :, 1] + 29 * a[:, :, 2]
    rows = range(0, max(h - 1, 1), 4)
    across = sum(np.abs(np.diff(luma[y])).sum() for y in rows) / ((w - 1) * len(rows)) if w > 1 else 0
    down = sum(np.abs(luma[y + 1] - luma[y]).sum() for y in rows if y + 1 < h) / (w * len(rows)) if h > 1 else 0
    return (across + down) / 2 / 256


def case(w, h, g):
    """The tool's case for an original of w×h whose decoded pixels have the mean luma gradient g."""
    if max(w, h) > 2048:
        return "down"
    tw, th = (round(w * 400 / h), 400) if w >= h else (400, round(h * 400 / w))
    detail = "detailed" if g >= DETAILED else "flat"
    return "near " + detail if min(w, h) > 400 and tw * th >= 0.75 * w * h else detail


def make_one(a):
    d, photos, s = a
    name = name_of(s)
    f = os.path.join(d, "FX", name)
    run = os.path.join(d, "RUN", name)
    os.makedirs(run, exist_ok=True)
    if not os.path.exists(f):
        photo, w, h, fmt, q = s
        src = os.path.join(run, "source.png")
        subprocess.run(["vips", "thumbnail", os.path.join(photos, photo + ".jpg"), src, str(w), "--height", str(h),
                        "--crop", "centre", "--size", "down"], check=True)
        subprocess.run(ENCODERS[fmt](str(q), src, f + ".tmp." + fmt), check=True, stdout=subprocess.DEVNULL)
        os.replace(f + ".tmp." + fmt, f)
        os.remove(src)
    decoded = os.path.join(run, "decoded.png")
    if name.endswith((".heic", ".avif")) and not os.path.exists(decoded):
        # heif-convert leaves no PNG (or an empty one) when libpng refuses the file's ICC profile: then vips
        # decodes it with the profile stripped, as bench/imaging-formats.sh does.
        tmp = os.path.join(run, "decoded.tmp.png")
        subprocess.run(["heif-convert", f, tmp], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not os.path.exists(tmp) or os.path.getsize(tmp) == 0:
            subprocess.run(["vips", "copy", f, tmp + "[strip]"], check=True)
        os.replace(tmp, decoded)
    quality_sweep.prepare(f, run)  # decoded.png of a WebP or PNG, and vips' two files
    from PIL import Image
    with Image.open(decoded) as im:
        w, h = im.size
    out = {"meta|" + name: [w, h, gradient(decoded), os.path.getsize(f) * 8 / (w * h)]}
    for kind in KINDS:
        out["vips|%s|%s" % (name, kind)] = klein_tool_sweep.score(os.path.join(d, "RUN"), name,
                                                                 os.path.join(run, "vips", kind + ".jpg"))
    return out


def run_one(a):
    d, binary, tag, name = a
    o = os.path.join(d, "OUT", tag, name)
    if not os.path.exists(o + "/preview.jpg"):
        subprocess.run([binary, "process", os.path.join(d, "FX", name), "--out", o], check=True,
                       stdout=subprocess.DEVNULL)
    return {"%s|%s|%s" % (tag, name, kind): klein_tool_sweep.score(os.path.join(d, "RUN"), name,
                                                                   os.path.join(o, kind + ".jpg")) for kind in KINDS}


def pool_store(d, func, work):
    store = os.path.join(d, "scores.json")
    with Pool(int(os.environ.get("JOBS", "2"))) as pool:
        for out in pool.imap_unordered(func, work):
            for k, v in out.items():
                quality_sweep.store_score(store, k, v)
            print(" ".join(k for k in out if not k.startswith("meta|")), flush=True, file=sys.stderr)


def make(d, spec_path, photos):
    sources = parse(spec_path)
    os.makedirs(os.path.join(d, "FX"), exist_ok=True)
    done = klein_tool_sweep.load(os.path.join(d, "scores.json"))
    pool_store(d, make_one, [(d, photos, s) for s in sources if "vips|%s|preview" % name_of(s) not in done])


def default_tag(binary):
    return "%s-%s" % (os.path.basename(binary), hashlib.sha256(open(binary, "rb").read()).hexdigest()[:8])


def run(d, binary, tag):
    done = klein_tool_sweep.load(os.path.join(d, "scores.json"))
    made = [n for n in names(d) if "vips|%s|preview" % n in done]
    if len(made) < len(names(d)):
        print("imaging-validate.py: %d sources of %s not made yet, left out" % (len(names(d)) - len(made), d),
              file=sys.stderr)
    pool_store(d, run_one, [(d, binary, tag, n) for n in made if "%s|%s|preview" % (tag, n) not in done])


def table(d, tag, base=None):
    s = klein_tool_sweep.load(os.path.join(d, "scores.json"))
    print("| source | case | WxH | gradient | T bytes | P bytes | T − vips' | P − vips' | both bytes | flags |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    counts = {}
    totals = {}
    for n in names(d):
        if "%s|%s|preview" % (tag, n) not in s:
            continue
        w, h, g, bpp = s["meta|" + n]
        c = case(w, h, g)
        ours = [s["%s|%s|%s" % (tag, n, k)] for k in KINDS]
        vips = [s["vips|%s|%s" % (n, k)] for k in KINDS]
        delta = [o[1] - v[1] for o, v in zip(ours, vips)]
        both = sum(o[0] for o in ours) / sum(v[0] for v in vips)
        flags = [k for k, x in (("BELOW", min(delta) < 0), ("OVER", both > GOAL)) if x]
        if base and min(delta) < 0 and "%s|%s|preview" % (base, n) in s:
            if any(dl < 0 and s["%s|%s|%s" % (base, n, k)][1] >= v[1] for dl, k, v in zip(delta, KINDS, vips)):
                flags.append("NEW")
        fmt = n.rsplit(".", 1)[1]
        for key in ((fmt, "all"), (fmt, c)):
            k = counts.setdefault(key, {"sources": 0, "BELOW": 0, "OVER": 0, "NEW": 0, "T below": 0, "P below": 0,
                                        "min T": 99.0, "min P": 99.0})
            k["sources"] += 1
            for f in flags:
                k[f] += 1
            k["T below"] += delta[0] < 0
            k["P below"] += delta[1] < 0
            k["min T"] = min(k["min T"], delta[0])
            k["min P"] = min(k["min P"], delta[1])
        t = totals.setdefault(fmt, [0, 0])
        t[0] += sum(o[0] for o in ours)
        t[1] += sum(v[0] for v in vips)
        print("| %s | %s | %dx%d | %.1f | %.3f | %.3f | %+.2f | %+.2f | %.3f | %s |" % (
            n, c, w, h, g, ours[0][0] / vips[0][0], ours[1][0] / vips[1][0], delta[0], delta[1], both, " ".join(flags)))
    print()
    for (fmt, c), k in sorted(counts.items(), key=lambda kv: (kv[0][0], kv[0][1] != "all", kv[0][1])):
        print("%s %s: %d sources, %d BELOW (thumbnails %d, previews %d), %d OVER %.2f×%s, thinnest T %+.2f P %+.2f%s"
              % (fmt, c, k["sources"], k["BELOW"], k["T below"], k["P below"], k["OVER"], GOAL,
                 " (bytes %.4f× vips')" % (totals[fmt][0] / totals[fmt][1]) if c == "all" else "", k["min T"],
                 k["min P"], ", %d NEW below against %s" % (k["NEW"], base) if base else ""))


def main():
    a = sys.argv[1:]
    if len(a) in (3, 4) and a[0] == "make":
        make(a[1], a[2], a[3] if len(a) == 4 else "/work/shared/photos")
    elif len(a) in (3, 4, 5) and a[0] == "run":
        tag = a[3] if len(a) > 3 else default_tag(a[2])
        run(a[1], a[2], tag)
        print("tag %s" % tag, file=sys.stderr)
        table(a[1], tag, a[4] if len(a) > 4 else None)
    elif len(a) in (3, 4) and a[0] == "table":
        table(a[1], a[2], a[3] if len(a) == 4 else None)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
