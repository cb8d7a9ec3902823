#!/usr/bin/env python3
"""A coarser chroma table for WebP's previews at the original's size, and what a WebP's own VP8 header says
(#28, decision 064).

  imaging-webp-chroma.py previews RUN NOW STORE… OUT.json DL:DC[:HOLD]…
        the WebP previews that keep the original's size (RUN/<fixture>/decoded.png at most 2048 pixels: PIL's
        libjpeg-turbo fed the tables writes the release tool's pixels, decision 062) re-encoded with luma on
        Klein's table at the table in force + DL qualities and chroma at it + DC (the table in force is read
        back from NOW/<fixture>/preview.jpg: Klein E − 2.5 for a flat one, Klein E for china, the detailed
        one); HOLD n keeps chroma's first n zig-zag steps at the luma's. Prints per photo score − vips'
        (STORE's vips|…|preview) / both files over vips' bytes (NOW's thumbnail, NOW's preview scaled by
        PIL's ratio to the table in force), and leave-one-out over the flat ones of "the coarsest variant
        of each family that keeps the others at or above vips'".
  imaging-webp-chroma.py thumbs RUN OUT NOW L_C_H,…
        the release tool's thumbnails swept with a chroma knob (imaging-klein-tool-sweep.py sweep … t L_C_H
        through a wrapper: luma Klein at the thumbnail's quality + L, chroma + C, H chroma steps held; the
        knob is never committed, decision 064 "Commands"): score − vips' / both, and leave-one-out per family
  imaging-webp-chroma.py photos RUN NOW NEW PVSTORE PVVARIANT TSTORE TVARIANT STORE…
        per WebP photo, the release tool's files before (NOW) and after (NEW): both over vips' bytes, and the
        changed files' scores from the sweeps' stores (NEW's files are the sweeps' pixels, checked apart)
  imaging-webp-chroma.py vp8 FX…
        each lossy WebP's VP8 frame header: base quantizer index, the deltas, and the segment map's
        quantizers (RFC 6386 9.3, 9.6), with the file's bits per pixel

Needs .build-venv-bench (Pillow, numpy, ssimulacra2).
"""
import importlib.util, io, json, os, struct, sys

# Klein's table and the score stores' loader are imaging-png-step-measures.py's (060, session 18).
_spec = importlib.util.spec_from_file_location(
    "step_measures", os.path.join(os.path.dirname(os.path.abspath(__file__)), "imaging-png-step-measures.py"))
_measures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_measures)
KLEIN, load = _measures.KLEIN, _measures.load
ZIGZAG = [0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6,
          7, 14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31,
          39, 46, 53, 60, 61, 54, 47, 55, 62, 63]


def klein_q(q):
    """Klein's table at a quarter quality as QuantizationTables(kleinQuality:) scales it."""
    q = min(max(q, 1), 100)
    if q < 50:
        scale = (5000 // int(q)) * 100
    else:
        scale = round((200 - 2 * (int(q * 4) / 4)) * 100)
    return [min(max((v * scale + 5000) // 10000, 1), 255) for v in KLEIN]


def spec(x):
    f = x.split(":")
    return float(f[0]), float(f[1]), int(f[2]) if len(f) > 2 else 0


def tag(v):
    return "%g:%g" % v[:2] + (":%d" % v[2] if v[2] else "")


def tables(t, v):
    dl, dc, hold = v
    luma, chroma = klein_q(t + dl), klein_q(t + dc)
    for k in ZIGZAG[:hold]:
        chroma[k] = luma[k]
    return luma, chroma


def job(a):
    run, n, t, v, files = a
    from PIL import Image
    from ssimulacra2 import compute_ssimulacra2
    im = Image.open(os.path.join(run, n, "decoded.png")).convert("RGB")
    luma, chroma = tables(t, v)
    b = io.BytesIO()
    im.save(b, "JPEG", qtables=[luma, chroma], subsampling=2, progressive=True, optimize=True)
    path = os.path.join(files, "%s_%s.jpg" % (n, tag(v).replace(":", "_")))
    with open(path, "wb") as f:
        f.write(b.getvalue())
    ref = os.path.join(run, n, "ref_%dx%d.png" % im.size)
    return "%s|%s" % (n, tag(v)), [len(b.getvalue()), float(compute_ssimulacra2(ref, path))]


def previews(run, now, stores, out, specs):
    from multiprocessing import Pool
    from PIL import Image
    sw = load(stores)
    res = json.load(open(out)) if os.path.exists(out) else {}
    files = os.path.splitext(out)[0] + "-files"
    os.makedirs(files, exist_ok=True)
    names, inforce = [], {}
    for n in sorted(os.listdir(run)):
        d = os.path.join(run, n, "decoded.png")
        if not n.endswith(".webp") or not os.path.exists(d) or max(Image.open(d).size) > 2048:
            continue
        with Image.open(os.path.join(now, n, "preview.jpg")) as p:
            table = sorted(p.quantization[0])
        t = [q / 4 for q in range(200, 401) if sorted(klein_q(q / 4)) == table]
        if not t:
            raise SystemExit("%s: the preview is not on Klein's table" % n)
        names.append(n)
        inforce[n] = t[-1]
    vs = [(0.0, 0.0, 0)] + [spec(x) for x in specs]
    jobs = [(run, n, inforce[n], v, files) for v in vs for n in names if "%s|%s" % (n, tag(v)) not in res]
    with Pool(int(os.environ.get("JOBS", "1"))) as pool:
        for k, value in pool.imap_unordered(job, jobs):
            res[k] = value
            json.dump(res, open(out, "w"), indent=0)
    m = {}
    for n in names:
        vscore = sw["vips|%s|preview" % n][1]
        base = res["%s|0:0" % n]
        tv = sum(os.path.getsize(os.path.join(run, n, "vips", f + ".jpg")) for f in ("thumbnail", "preview"))
        nt, npv = (os.path.getsize(os.path.join(now, n, f + ".jpg")) for f in ("thumbnail", "preview"))
        m[n] = {}
        for v in vs:
            b, s = res["%s|%s" % (n, tag(v))]
            m[n][tag(v)] = (s - vscore, (nt + npv * b / base[0]) / tv, b / base[0])
        print("%-18s T%-5g " % (n.split("-")[0][:18], inforce[n]) + " ".join(
            "%s:%+.2f/%.3f" % (tag(v), *m[n][tag(v)][:2]) for v in vs), flush=True)
    print("| variant (luma, chroma steps from the table in force; hold) | " + " | ".join(
        n.split("-")[0] for n in names) + " |")
    print("|---|" + "---|" * len(names))
    for v in vs:
        print("| %s | " % tag(v) + " | ".join("%+.2f / %.3f" % m[n][tag(v)][:2] for n in names) + " |")
    flat = [n for n in names if not n.startswith("china")]
    # Leave-one-out within each family (the same DL and HOLD, DC swept): the coarsest chroma that keeps
    # the other flat photos at or above vips'.
    fams = {}
    for v in vs[1:]:
        fams.setdefault((v[0], v[2]), []).append(v)
    for (dl, hold), fam in sorted(fams.items()):
        if len(fam) < 2:
            continue
        for h in flat:
            ok = [v for v in fam if all(m[n][tag(v)][0] >= 0 for n in flat if n != h)]
            if not ok:
                print("family luma %+g hold %d, leave out %-18s: none keeps the others" % (dl, hold, h.split("-")[0]))
                continue
            v = min(ok, key=lambda v: v[1])
            print("family luma %+g hold %d, leave out %-18s: chroma %+g, held-out %+.2f / %.3f" % (
                dl, hold, h.split("-")[0], v[1], *m[h][tag(v)][:2]))


def vp8(path):
    """The VP8 frame header's quantizer fields of a lossy WebP (RFC 6386 9.2–9.6)."""
    data = open(path, "rb").read()
    if data[:4] != b"RIFF" or data[8:12] != b"WEBP":
        raise ValueError("not a WebP")
    pos = 12
    while pos + 8 <= len(data):
        fourcc, size = data[pos:pos + 4], struct.unpack("<I", data[pos + 4:pos + 8])[0]
        if fourcc == b"VP8 ":
            chunk = data[pos + 8:pos + 8 + size]
            break
        pos += 8 + size + (size & 1)
    else:
        return None
    frame = chunk[0] | chunk[1] << 8 | chunk[2] << 16
    first = (frame >> 5) & 0x7FFFF
    w, h = struct.unpack("<HH", chunk[6:10])
    br = BoolReader(chunk[10:10 + first])
    br.lit(1), br.lit(1)  # colour space, clamping
    seg = {"enabled": br.lit(1)}
    quant = [None] * 4
    absolute = True
    if seg["enabled"]:
        update_map = br.lit(1)
        update_data = br.lit(1)
        if update_data:
            absolute = br.lit(1)
            quant = [br.signed(7) if br.lit(1) else 0 for _ in range(4)]
            [br.signed(6) if br.lit(1) else 0 for _ in range(4)]  # loop filter levels
        if update_map:
            seg["probs"] = [br.lit(8) if br.lit(1) else 255 for _ in range(3)]
    br.lit(1), br.lit(6), br.lit(3)  # filter type, level, sharpness
    if br.lit(1) and br.lit(1):  # loop filter deltas
        [br.signed(6) if br.lit(1) else 0 for _ in range(8)]
    parts = br.lit(2)
    yac = br.lit(7)
    deltas = [br.signed(4) if br.lit(1) else 0 for _ in range(5)]  # y1dc, y2dc, y2ac, uvdc, uvac
    segq = [(q if absolute else yac + q) for q in quant] if seg["enabled"] else [yac]
    # The segment map's tree probabilities (RFC 6386 9.3), which libwebp sets from the segments' counts:
    # p0 = P(segment 0 or 1), p1 = P(0 | 0 or 1), p2 = P(2 | 2 or 3); so the share of each segment.
    p = [x / 255 for x in seg.get("probs", [255, 255, 255])]
    share = [p[0] * p[1], p[0] * (1 - p[1]), (1 - p[0]) * p[2], (1 - p[0]) * (1 - p[2])][:len(segq)]
    mean = sum(s * q for s, q in zip(share, segq)) / sum(share)
    return {"w": w, "h": h, "yac": yac, "deltas": deltas, "segments": segq, "absolute": absolute,
            "share": [round(s, 3) for s in share], "meanq": round(mean, 2),
            "partitions": 1 << parts, "bpp": round(len(data) * 8 / (w * h), 4)}


class BoolReader:
    """RFC 6386's boolean decoder, enough for the frame header."""

    def __init__(self, data):
        self.data, self.pos = data, 2
        self.value = (data[0] << 8) | data[1]
        self.range, self.bits = 255, 0

    def bool(self, prob):
        split = 1 + (((self.range - 1) * prob) >> 8)
        big = split << 8
        if self.value >= big:
            ret, self.range, self.value = 1, self.range - split, self.value - big
        else:
            ret, self.range = 0, split
        while self.range < 128:
            self.value <<= 1
            self.range <<= 1
            self.bits += 1
            if self.bits == 8:
                self.bits = 0
                if self.pos < len(self.data):
                    self.value |= self.data[self.pos]
                self.pos += 1
        return ret

    def lit(self, n):
        v = 0
        for _ in range(n):
            v = (v << 1) | self.bool(128)
        return v

    def signed(self, n):
        v = self.lit(n)
        return -v if self.lit(1) else v


def thumbs(run, out, now, steps):
    """The sweep tool's thumbnails (imaging-klein-tool-sweep.py sweep … t L_C_H, through a wrapper that sets
    SWEEP_THUMB_LF, SWEEP_THUMB_CF, SWEEP_THUMB_CHOLD): score − vips' / both files over vips' bytes."""
    from ssimulacra2 import compute_ssimulacra2
    store = os.path.join(out, "sweep.json")
    sw = json.load(open(store))
    names = sorted(n for n in os.listdir(run) if n.endswith(".webp"))
    m = {}
    for n in names:
        if "now|t|%s" % n not in sw:
            p = os.path.join(now, n, "thumbnail.jpg")
            with __import__("PIL.Image").Image.open(p) as im:
                ref = os.path.join(run, n, "ref_%dx%d.png" % im.size)
            sw["now|t|%s" % n] = [os.path.getsize(p), float(compute_ssimulacra2(ref, p))]
            json.dump(sw, open(store, "w"), indent=0)
        vt, vs = sw["vips|%s|thumbnail" % n]
        tv = vt + os.path.getsize(os.path.join(run, n, "vips", "preview.jpg"))
        pv = os.path.getsize(os.path.join(now, n, "preview.jpg"))
        m[n] = {x: (sw[k][1] - vs, (sw[k][0] + pv) / tv, sw[k][0]) for x, k in
                [("now", "now|t|%s" % n)] + [(x, "t|%s|%s" % (n, x)) for x in steps if "t|%s|%s" % (n, x) in sw]}
    print("| thumbnail | now (Klein −1) | " + " | ".join(steps) + " |")
    print("|---|---|" + "---|" * len(steps))
    for n in names:
        print("| %s | " % n.split("-")[0] + " | ".join(
            "%+.2f / %.3f" % m[n][x][:2] if x in m[n] else "–" for x in ["now"] + steps) + " |")
    # Leave-one-out within each family (the same luma step and hold, chroma swept): the coarsest chroma
    # that keeps the other 17 thumbnails at or above vips'.
    fams = {}
    for x in steps:
        l, c, h = x.split("_")
        fams.setdefault((l, h), []).append(x)
    for (l, h), fam in sorted(fams.items()):
        if len(fam) < 2:
            continue
        picks = {}
        for out_ in names:
            ok = [x for x in fam if all(x in m[n] and m[n][x][0] >= 0 for n in names if n != out_)]
            if ok:
                x = min(ok, key=lambda x: float(x.split("_")[1]))
                picks.setdefault(x, []).append("%s %+.2f" % (out_.split("-")[0], m[out_][x][0]))
        print("family luma %s hold %s: " % (l, h) + "; ".join(
            "chroma %s in %d folds (held-out %s)" % (x.split("_")[1], len(v), ", ".join(v)) for x, v in picks.items()))
    for x in steps:
        print("%-10s below vips': %s; thumbnails' bytes %.4f of now's" % (
            x, ", ".join(n.split("-")[0] for n in names if m[n][x][0] < 0) or "none",
            sum(m[n][x][2] for n in names) / sum(m[n]["now"][2] for n in names)))
    return m


def photos(run, now, new, pvstore, pvvariant, tstore, tvariant, stores):
    """Per WebP photo, NOW's and NEW's files (the release tool before and after): both files over vips' bytes,
    with NEW's thumbnail score from TSTORE's t|<fixture>|TVARIANT (when its bytes are that file's) and, for a
    preview that differs from NOW's, its score from PVSTORE's <fixture>|PVVARIANT (NEW's previews decode to
    those PIL files' pixels, checked apart); vips' preview scores from STORE's vips|<fixture>|preview."""
    import filecmp
    sw = {}
    for s_ in stores:
        for k, v in json.load(open(s_)).items():
            sw.setdefault(k, v)
    pv, ts = json.load(open(pvstore)), json.load(open(os.path.join(tstore, "sweep.json")))
    tot = [0, 0, 0]
    print("| photo | thumbnail bytes / vips', score − vips' | preview bytes / vips', score − vips' | both / vips': before → now |")
    print("|---|---|---|---|")
    for n in sorted(x for x in os.listdir(run) if x.endswith(".webp")):
        size = lambda d, f: os.path.getsize(os.path.join(d, n, f + ".jpg"))
        vt, vp = size(os.path.join(run), "vips/thumbnail"), size(os.path.join(run), "vips/preview")
        tb = size(new, "thumbnail")
        t = ts.get("t|%s|%s" % (n, tvariant))
        tcell = "%.3f, %+.2f" % (tb / vt, t[1] - ts["vips|%s|thumbnail" % n][1]) if t and t[0] == tb else "%.3f" % (tb / vt)
        pb = size(new, "preview")
        same = filecmp.cmp(os.path.join(now, n, "preview.jpg"), os.path.join(new, n, "preview.jpg"), shallow=False)
        p = pv.get("%s|%s" % (n, pvvariant))
        pcell = "%.3f%s" % (pb / vp, "" if same or not p else ", %+.2f" % (p[1] - sw["vips|%s|preview" % n][1]))
        before = (size(now, "thumbnail") + size(now, "preview")) / (vt + vp)
        after = (tb + pb) / (vt + vp)
        tot = [tot[0] + size(now, "thumbnail") + size(now, "preview"), tot[1] + tb + pb, tot[2] + vt + vp]
        print("| %s | %s | %s%s | %.3f → %s |" % (n.split("-")[0], tcell, pcell, "" if same else " (new)", before,
                                                ("**%.3f**" if after > 0.91 else "%.3f") % after))
    print("WebP in all: %.4f → %.4f of vips' bytes (%d → %d of %d)" % (tot[0] / tot[2], tot[1] / tot[2], *tot))


if __name__ == "__main__":
    cmd, args = (sys.argv[1], sys.argv[2:]) if len(sys.argv) > 1 else ("", [])
    if cmd == "previews":
        specs = [a for a in args if ":" in a]
        rest = [a for a in args if ":" not in a]
        previews(rest[0], rest[1], rest[2:-1], rest[-1], specs)
    elif cmd == "photos":
        photos(args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7:])
    elif cmd == "thumbs":
        thumbs(args[0], args[1], args[2], args[3].split(","))
    elif cmd == "vp8":
        for p in args:
            print(os.path.basename(p), json.dumps(vp8(p)))
    else:
        raise SystemExit(__doc__)
