#!/usr/bin/env python3
"""A lossy WebP's own Y'CbCr planes into libjpeg, against today's RGB path, per photo (#28, decision 062).

A lossy WebP is Y'CbCr 4:2:0 (BT.601, limited range). Today libwebp converts it to RGB (upsampling the chroma,
"fancy upsampling"), we resample, and libjpeg converts back to Y'CbCr and averages each 2×2 chroma block. The
planes path hands libjpeg the decoder's own planes instead (`dwebp -yuv`), each mapped from limited to full range
by a lookup (Y' (v − 16)·255/219, Cb and Cr (v − 128)·255/224 + 128, rounded half up and clamped). A WebP
larger than its preview is shrunk while decoded by libwebp's rescaler (`WebPRowDecoder`), so the preview is the
rescaler's: RGB today (`dwebp -scale W H`), Y' at W×H and Cb, Cr at half that with the planes (`-scale -yuv`).

Both are modelled with PIL's libjpeg-turbo, fed the same tables:
  - RGB path: decoded.png, or dwebp's rescaled RGB, saved as RGB, 4:2:0: the release tool's pixels exactly
    (`same` checks it against NOW's preview).
  - planes path: the planes saved as a YCbCr image with the chroma repeated 2×2, which libjpeg's h2v2 box
    downsampling returns exactly: the coefficients jpeg_write_raw_data writes with the planes
    (bench/imaging-webp-planes.c writes them so; its pixels are PIL's, checked on flower and dune).
Bytes are PIL's progressive + optimized files for both, or with SCANS the server's scan choice of them;
scores SSIMULACRA2 against RUN's reference (decoded.png, or ref_WxH.png: PIL Lanczos of it), as the bench scores.

  imaging-webp-planes.py same RUN FX NOW FIXTURE…        both paths at the tables of NOW/<fixture>/preview.jpg
  imaging-webp-planes.py curves RUN FX NOW OUT FIXTURE…  Klein's table at E − 1, E − 0.5, E, E + 0.5 (planes) and E − 1, E
                                                         (RGB), E read back from NOW's preview; files and
                                                         OUT/planes.json
  imaging-webp-planes.py table OUT [SCANS]               per fixture: planes' score at the RGB file's bytes and
                                                         planes' bytes at its score (linear between points);
                                                         with SCANS, every file's bytes with the scan choice
  imaging-webp-planes.py photos RUN NOW OUT [SCANS]      per photo: both files over vips' bytes as NOW wrote them
                                                         and with the planes at E (the preview's bytes scaled by
                                                         the PIL files' ratio; with SCANS, the scan-choice tool
                                                         of bench/imaging-scan-choice.c, every file through the
                                                         server's scan choice instead); the preview's score − vips'
  imaging-webp-planes.py luma RUN FX NOW FIXTURE…        the RGB path with only Y' taken from the planes
  imaging-webp-planes.py soft RUN FX NOW FIXTURE…        the RGB path with its chroma filtered once more
                                                         ([1, 2, 1]/4 both ways on the 2×2 means)

RUN is bench/imaging-quality-sweep.py's, FX the fixtures, NOW the release tool's outputs
(`$BIN process FX/<fixture> --out NOW/<fixture>`). Needs .build-venv-bench (ssimulacra2, Pillow, numpy) and dwebp.
"""
import json, os, subprocess, sys, tempfile
from multiprocessing import Pool

import numpy as np
from PIL import Image

KLEIN = [10, 12, 14, 19, 26, 38, 57, 86, 12, 18, 21, 28, 35, 41, 54, 76, 14, 21, 25, 32, 44, 63, 92, 136, 19, 28, 32,
         41, 54, 75, 107, 157, 26, 35, 44, 54, 70, 95, 132, 190, 38, 41, 63, 75, 95, 125, 170, 239, 57, 54, 92, 107,
         132, 170, 227, 312, 86, 76, 136, 157, 190, 239, 312, 419]
Y_FULL = np.array([min(max(np.floor((v - 16) * 255 / 219 + 0.5), 0), 255) for v in range(256)], np.uint8)
C_FULL = np.array([min(max(np.floor((v - 128) * 255 / 224 + 128.5), 0), 255) for v in range(256)], np.uint8)


def klein(q):
    """QuantizationTables(kleinQuality:) at a quarter quality q ≥ 50, natural order."""
    scale = int(round((200 - 2 * q) * 100))
    return [min(max((t * scale + 5000) // 10000, 1), 255) for t in KLEIN]


def quality_in_force(tables):
    return next((q / 4 for q in range(200, 400) if klein(q / 4) == tables), None)


def dwebp(fx, name, fmt, size, scaled):
    with tempfile.NamedTemporaryFile(suffix="." + fmt) as t:
        subprocess.run(["dwebp", "-quiet", "-" + fmt] + (["-scale", str(size[0]), str(size[1])] if scaled else [])
                       + [os.path.join(fx, name), "-o", t.name], check=True)
        return np.fromfile(t.name, np.uint8) if fmt == "yuv" else Image.open(t.name).convert("RGB")


def planes(fx, name, w, h, scaled=False):
    """The file's Y', Cb, Cr planes as libwebp decodes them (no upsampling; shrunk by its rescaler to w×h, the
    chroma to half, when scaled), mapped to full range."""
    raw = dwebp(fx, name, "yuv", (w, h), scaled)
    cw, ch = (w + 1) // 2, (h + 1) // 2
    y = raw[:w * h].reshape(h, w)
    u = raw[w * h:w * h + cw * ch].reshape(ch, cw)
    v = raw[w * h + cw * ch:w * h + 2 * cw * ch].reshape(ch, cw)
    return Y_FULL[y], C_FULL[u], C_FULL[v]


def image(run, fx, name, kind, size, luma_only=False):
    """The image libjpeg is fed: RGB (today) or YCbCr from the planes, at `size`. A smaller size is libwebp's
    rescaler's, as the release tool decodes a WebP over the preview's size (`WebPRowDecoder`, use_scaling)."""
    decoded = Image.open(os.path.join(run, name, "decoded.png")).convert("RGB")
    scaled = decoded.size != size
    if kind == "rgb" and not luma_only:
        return dwebp(fx, name, "ppm", size, True) if scaled else decoded
    assert not (scaled and luma_only), "luma: previews at the original's size only"
    w, h = size
    y, u, v = planes(fx, name, w, h, scaled)
    if luma_only or kind == "soft":  # libjpeg's own conversion of today's RGB
        rgb = np.asarray(decoded).astype(np.float64)
        cb = np.floor(-0.168735892 * rgb[..., 0] - 0.331264108 * rgb[..., 1] + 0.5 * rgb[..., 2] + 128.5)
        cr = np.floor(0.5 * rgb[..., 0] - 0.418687589 * rgb[..., 1] - 0.081312411 * rgb[..., 2] + 128.5)
        cb, cr = (np.clip(c, 0, 255) for c in (cb, cr))
        if kind == "soft":  # today's chroma, box-averaged 2×2 as libjpeg does, then [1, 2, 1]/4 both ways
            y = np.clip(np.floor(0.299 * rgb[..., 0] + 0.587 * rgb[..., 1] + 0.114 * rgb[..., 2] + 0.5), 0, 255)
            cb, cr = (soften(c, w, h) for c in (cb, cr))
        chan = [Image.fromarray(c.astype(np.uint8)) for c in (y, cb, cr)]
        return Image.merge("YCbCr", chan)
    Y, U, V = Image.fromarray(y), Image.fromarray(u), Image.fromarray(v)
    up = lambda c: Image.fromarray(np.repeat(np.repeat(np.asarray(c), 2, 0), 2, 1)[:h, :w])
    return Image.merge("YCbCr", [Y, up(U), up(V)])


def soften(c, w, h):
    """Full-size chroma box-averaged over 2×2 blocks (edges repeated), filtered [1, 2, 1]/4 across and down,
    rounded and repeated 2×2 again: what libjpeg would downsample to the filtered block means."""
    c = np.pad(c, ((0, h % 2), (0, w % 2)), mode="edge")
    m = (c[0::2, 0::2] + c[0::2, 1::2] + c[1::2, 0::2] + c[1::2, 1::2]) / 4
    p = np.pad(m, 1, mode="edge")
    m = (p[:, :-2] + 2 * p[:, 1:-1] + p[:, 2:]) / 4
    m = (m[:-2] + 2 * m[1:-1] + m[2:]) / 4
    return np.repeat(np.repeat(np.floor(m + 0.5), 2, 0), 2, 1)[:h, :w]


def write(im, tables, out):
    os.makedirs(os.path.dirname(out), exist_ok=True)
    im.save(out, "JPEG", qtables=tables, subsampling=2, progressive=True, optimize=True)
    return os.path.getsize(out)


def score(run, name, path):
    from ssimulacra2 import compute_ssimulacra2
    size = Image.open(path).size
    ref = os.path.join(run, name, "ref_%dx%d.png" % size)
    if not os.path.exists(ref):
        ref = os.path.join(run, name, "decoded.png")
        assert Image.open(ref).size == size, "no reference at %dx%d for %s" % (size + (name,))
    return float(compute_ssimulacra2(ref, path))


def preview(now, name):
    with Image.open(os.path.join(now, name, "preview.jpg")) as im:
        return im.size, [[im.quantization[0][i] for i in range(64)], [im.quantization[1][i] for i in range(64)]]


def same(run, fx, now, names, luma_only=False):
    for name in names:
        size, tables = preview(now, name)
        out = os.path.join(tempfile.gettempdir(), "webp-planes", name)
        row = [name.split("-")[0], "%dx%d" % size]
        kinds = ("rgb", luma_only) if luma_only else ("rgb", "planes")
        res = {}
        for kind in kinds:
            f = os.path.join(out, kind + ".jpg")
            b = write(image(run, fx, name, "rgb" if kind == "rgb" else "soft" if kind == "soft" else "planes", size,
                            kind == "luma"), tables, f)
            res[kind] = (b, score(run, name, f))
            row.append("%s %d %.3f" % (kind, *res[kind]))
        if kind == "planes":
            ours = np.asarray(Image.open(os.path.join(now, name, "preview.jpg")))
            row.append("tool's pixels: %s" % np.array_equal(ours, np.asarray(Image.open(os.path.join(out, "rgb.jpg")))))
        (b0, s0), (b1, s1) = res["rgb"], res[kinds[1]]
        row.append("bytes %.4f score %+.3f" % (b1 / b0, s1 - s0))
        print(" | ".join(row), flush=True)


def save(store, path):
    with open(path + ".tmp", "w") as f:
        json.dump(store, f, indent=0)
    os.replace(path + ".tmp", path)


def job(a):
    run, fx, out, name, size, q, kind = a
    f = os.path.join(out, name, "%s-%.2f.jpg" % (kind, q))
    b = write(image(run, fx, name, kind, size), [klein(q)] * 2, f)
    return "%s|%s|%.2f" % (name, kind, q), [b, score(run, name, f)]


def curves(run, fx, now, out, names):
    store_path = os.path.join(out, "planes.json")
    store = json.load(open(store_path)) if os.path.exists(store_path) else {}
    work = []
    for name in names:
        size, tables = preview(now, name)
        q = quality_in_force(tables[0])
        assert q is not None and tables[1] == tables[0], "%s: not Klein's table" % name
        store["q|" + name] = q
        for d, kind in ((0, "rgb"), (-1, "planes"), (-0.5, "planes"), (0, "planes"), (0.5, "planes"), (-1, "rgb")):
            if "%s|%s|%.2f" % (name, kind, q + d) not in store:
                work.append((run, fx, out, name, size, q + d, kind))
    with Pool(2) as pool:
        for key, value in pool.imap_unordered(job, work):
            store[key] = value
            save(store, store_path)
            print(key, value, flush=True)


def inside(points, x, by):
    return min(p[by] for p in points) <= x <= max(p[by] for p in points)


def interpolate(points, x, by):
    """points (bytes, score) sorted by `by` (0: bytes, 1: score); the other coordinate at x, linear (extrapolated
    from the two nearest at the ends)."""
    pts = sorted(points, key=lambda p: p[by])
    i = max(1, min(len(pts) - 1, next((k for k, p in enumerate(pts) if p[by] >= x), len(pts) - 1)))
    (a, b) = pts[i - 1], pts[i]
    t = (x - a[by]) / (b[by] - a[by])
    return a[1 - by] + t * (b[1 - by] - a[1 - by])


def table(out, scans=None):
    """With SCANS (bench/imaging-scan-choice.c) each point's bytes are its file's with the server's scan choice."""
    store = json.load(open(os.path.join(out, "planes.json")))
    if scans:
        for key in [k for k in store if k.count("|") == 2 and not k.startswith("vips|")]:
            name, kind, q = key.split("|")
            store[key] = [chosen(scans, os.path.join(out, name, "%s-%s.jpg" % (kind, q)), out), store[key][1]]
    print("| fixture | E | RGB at E: bytes, score | planes at E: bytes, score | planes at RGB's bytes: score − RGB's "
          "| planes at RGB's score: bytes / RGB's |")
    print("|---|---|---|---|---|---|")
    for key in sorted(k for k in store if k.startswith("q|")):
        name = key[2:]
        q = store[key]
        keys = ["%s|rgb|%.2f" % (name, q)] + ["%s|planes|%.2f" % (name, q + d) for d in (-1, -0.5, 0, 0.5)]
        if not all(k in store for k in keys):
            continue  # still being swept
        rgb, pl = store[keys[0]], [store[k] for k in keys[1:]]
        mark = lambda by: "" if inside(pl, rgb[by], by) else "*"
        print("| %s | %.2f | %d, %.2f | %d, %.2f | %+.2f%s | %.4f%s |" % (
            name.split("-")[0], q, rgb[0], rgb[1], pl[2][0], pl[2][1], interpolate(pl, rgb[0], 0) - rgb[1], mark(0),
            interpolate(pl, rgb[1], 1) / rgb[0], mark(1)))
    print("\n(* extrapolated from the two nearest points)")


def chosen(binary, path, out):
    """The file's bytes with the server's scan choice (bench/imaging-scan-choice.c), written under OUT/scans."""
    target = os.path.join(out, "scans", os.path.basename(os.path.dirname(path)), os.path.basename(path))
    os.makedirs(os.path.dirname(target), exist_ok=True)
    subprocess.run([binary, path, target], check=True, capture_output=True)
    return os.path.getsize(target)


def photos(run, now, out, scans=None):
    """Per photo: both files over vips' bytes as NOW wrote them, then with the preview on the planes at the
    tables in force, and the preview's score − vips'. Without SCANS the planes preview's bytes are NOW's scaled
    by the PIL files' ratio; with SCANS (bench/imaging-scan-choice.c) every file is taken through the server's
    scan choice: NOW's files (the fixed script's) become what the server writes, and the planes file is
    rewritten with the fixed script and its scans chosen, as the server would write it."""
    store_path = os.path.join(out, "planes.json")
    store = json.load(open(store_path))
    print("| photo | preview | E | both files / vips' bytes: today → planes | preview score − vips': today → planes |")
    print("|---|---|---|---|---|")
    total = [0, 0, 0]
    for key in sorted(k for k in store if k.startswith("q|")):
        name = key[2:]
        q = store[key]
        vips = [os.path.join(run, name, "vips", f + ".jpg") for f in ("thumbnail", "preview")]
        if "vips|" + name not in store:
            store["vips|" + name] = score(run, name, vips[1])
            save(store, store_path)
        rgb, pl = store["%s|rgb|%.2f" % (name, q)], store["%s|planes|%.2f" % (name, q)]
        files = [os.path.join(now, name, f + ".jpg") for f in ("thumbnail", "preview")]
        if scans:
            thumb, prev = (chosen(scans, f, out) for f in files)
            after = thumb + chosen(scans, planes_file(out, name, q), out)
        else:
            thumb, prev = (os.path.getsize(f) for f in files)
            after = thumb + prev * pl[0] / rgb[0]
        v = sum(os.path.getsize(f) for f in vips)
        total[0] += v; total[1] += thumb + prev; total[2] += after
        size = Image.open(files[1]).size
        kind = "original size" if size == Image.open(os.path.join(run, name, "decoded.png")).size else "downscaled"
        print("| %s | %s | %.2f | %.3f → %.3f | %+.2f → %+.2f |" % (
            name.split("-")[0], kind, q, (thumb + prev) / v, after / v, rgb[1] - store["vips|" + name],
            pl[1] - store["vips|" + name]))
    print("\nIn all: %.4f → %.4f of vips' bytes" % (total[1] / total[0], total[2] / total[0]))


def planes_file(out, name, q):
    return os.path.join(out, name, "planes-%.2f.jpg" % q)


if __name__ == "__main__":
    cmd, args = (sys.argv[1] if len(sys.argv) > 1 else ""), sys.argv[2:]
    if cmd == "same":
        same(args[0], args[1], args[2], args[3:])
    elif cmd in ("luma", "soft"):
        same(args[0], args[1], args[2], args[3:], luma_only=cmd)
    elif cmd == "curves":
        curves(args[0], args[1], args[2], args[3], args[4:])
    elif cmd == "table":
        table(args[0], args[1] if len(args) > 1 else None)
    elif cmd == "photos":
        photos(args[0], args[1], args[2], args[3] if len(args) > 3 else None)
    else:
        sys.exit(__doc__)
