#!/usr/bin/env python3
"""PNG previews' Klein steps: the downscaled ones' curves and candidate measures for the original-size ones
(#28, decision 060, "Session 18 (u28x): PNG").

  imaging-png-step-measures.py downscaled STORE…
        the downscaled previews (PNG and WebP) of the sweep stores (imaging-klein-tool-sweep.py's
        OUT/sweep.json, keys d|<fixture>|<step>; the first store that has a key wins): Klein at E + step,
        score − vips'; then leave-one-out of "the lowest swept step that keeps the other previews at or
        above vips'", and the held-out preview's score − vips' at it
  imaging-png-step-measures.py measures RUN NOW STORE OUT.json
        per PNG preview that keeps the original's size (RUN/<fixture>/decoded.png at most 2048 pixels):
        measures of the decoded original, of PIL trial encodes of the preview with Klein's table at 78 and
        77 (E − 2 and E − 3 at the bench's 80) and of its thumbnail (PIL Lanczos to NOW/<fixture>/
        thumbnail.jpg's size) at Klein 79 and 76, and score − vips' at E − 3, E − 2.75, E − 2.5 (STORE's
        k|<fixture>|<step>)
  imaging-png-step-measures.py held RUN NOW STORE… OUT.json [--ext=.webp] [--base=-2.5] KIND:STEP[:HOLD]…
        the flat PNG (--ext: WebP) previews at the original's size re-encoded by PIL (which writes the
        tool's pixels) with Klein's table at E + STEP, E read back from NOW/<fixture>/preview.jpg (Klein's
        table at E + BASE, −2 by default: PNG's old step; WebP's is −2.5): KIND klein (plain), dcl (the luma
        DC at E + HOLD's step), dcboth (both DCs), low3both (zig-zag 0–2 of both tables at E + HOLD's:
        decision 2); HOLD −2 by default; score − vips' (STORE's vips|…|preview), per photo and step, both
        files over vips' bytes (NOW's thumbnail, NOW's preview scaled by PIL's ratio to plain E + BASE),
        and per HOLD leave-one-out of "the lowest step of low3both that keeps the other photos at or above
        vips'" (u28z: WebP, decision 060 "Session 18 (u28z): WebP")
  imaging-png-step-measures.py loo OUT.json
        for the flat ones (china and path are detailed: 060's gradient rule): leave-one-out of "the best
        rule of one measure, or of the ratio of two, that sends dune and FreshFlower to E − 2.75 or E − 3
        and keeps every photo it sends there at or above vips'", chosen on 13 photos by the widest gap
        to a photo that falls below vips'; prints each fold's rule and where it puts the held-out photo

Needs .build-venv-bench (Pillow, numpy).
"""
import io, itertools, json, os, sys

KLEIN = [10, 12, 14, 19, 26, 38, 57, 86, 12, 18, 21, 28, 35, 41, 54, 76, 14, 21, 25, 32, 44, 63, 92, 136,
         19, 28, 32, 41, 54, 75, 107, 157, 26, 35, 44, 54, 70, 95, 132, 190, 38, 41, 63, 75, 95, 125, 170, 239,
         57, 54, 92, 107, 132, 170, 227, 312, 86, 76, 136, 157, 190, 239, 312, 419]
NEED_LOW = ("dune", "mate_FreshFlower")
STEPS = ("-3", "-2.75", "-2.5")


def load(stores):
    sw = {}
    for s in stores:
        for k, v in json.load(open(s)).items():
            sw.setdefault(k, v)
    return sw


def downscaled(stores):
    sw = load(stores)
    names = sorted(set(k.split("|")[1] for k in sw if k.startswith("d|")))
    steps = sorted(set(float(k.split("|")[2]) for k in sw if k.startswith("d|")))
    m = {n: {s: sw["d|%s|%g" % (n, s)][1] - sw["vips|%s|preview" % n][1]
             for s in steps if "d|%s|%g" % (n, s) in sw} for n in names}
    print("| preview | " + " | ".join("E%+g" % s if s else "E" for s in steps) + " |")
    for n in names:
        print("| %s %s | " % (n.split("-")[0].replace("_progressive", ""), "PNG" if n.endswith("png") else "WebP")
              + " | ".join("%+.2f" % m[n][s] if s in m[n] else "" for s in steps) + " |")
    for h in names:
        ok = [s for s in steps if all(s in m[n] and m[n][s] >= 0 for n in names if n != h)]
        s = min(ok)
        print("leave out %-52s step %+g: held-out %+.2f" % (h, s, m[h][s]))


def klein(q):
    return [min(max(int(v * (200 - 2 * q) / 100 + 0.5), 1), 255) for v in KLEIN]


def measures(run, now, stores, out):
    import numpy as np
    from PIL import Image
    sw = load(stores)

    def enc(im, q):
        b = io.BytesIO()
        im.save(b, "JPEG", qtables=[klein(q)] * 2, subsampling=2, progressive=True, optimize=True)
        return b.getvalue()

    def dec(data):
        return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"), dtype=np.float64)

    def psnr(a, b):
        return 10 * np.log10(255 ** 2 / np.mean((a - b) ** 2))

    c = np.array([[np.sqrt((1 if k == 0 else 2) / 8) * np.cos((2 * n + 1) * k * np.pi / 16) for n in range(8)]
                  for k in range(8)])
    result = {}
    for n in sorted(os.listdir(run)):
        if not n.endswith(".png") or not os.path.exists(os.path.join(run, n, "decoded.png")):
            continue
        im = Image.open(os.path.join(run, n, "decoded.png")).convert("RGB")
        if max(im.size) > 2048:
            continue
        rgb = np.asarray(im, dtype=np.float64)
        r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
        y = 0.299 * r + 0.587 * g + 0.114 * b
        cb, cr = -0.168736 * r - 0.331264 * g + 0.5 * b, 0.5 * r - 0.418688 * g - 0.081312 * b
        h8, w8 = (y.shape[0] // 8) * 8, (y.shape[1] // 8) * 8
        blocks = y[:h8, :w8].reshape(h8 // 8, 8, w8 // 8, 8).transpose(0, 2, 1, 3).reshape(-1, 8, 8)
        co = np.einsum("ij,njk,lk->nil", c, blocks - 128, c)
        f = {}
        for q in (78, 77):  # the share of luma AC coefficients Klein's table zeroes
            t = np.array(klein(q), dtype=float).reshape(8, 8)
            f["z%d" % q] = float((np.round(co / t) == 0).reshape(len(co), 64)[:, 1:].mean())
        f["dz"] = f["z77"] - f["z78"]
        f["sat"] = float(np.hypot(cb, cr).mean())
        f["cgrad"] = float((np.abs(np.diff(cb, axis=1)).mean() + np.abs(np.diff(cr, axis=1)).mean()) / 2)
        f["grad"] = float((np.abs(np.diff(y, axis=1)).mean() + np.abs(np.diff(y, axis=0)).mean()) / 2)
        lap = y[1:-1, 1:-1] * 4 - y[:-2, 1:-1] - y[2:, 1:-1] - y[1:-1, :-2] - y[1:-1, 2:]
        f["lapmed"] = float(np.median(np.abs(lap)))
        f["ac_energy_hi"] = float((co[:, 4:, 4:] ** 2).sum() / max((co ** 2).sum() - (co[:, 0, 0] ** 2).sum(), 1))
        size = Image.open(os.path.join(now, n, "thumbnail.jpg")).size
        th = im.resize(size, Image.LANCZOS)
        ta = np.asarray(th, dtype=np.float64)
        e79, e76 = enc(th, 79), enc(th, 76)
        f["t_ratio"] = len(e76) / len(e79)
        f["t_psnr79"] = psnr(ta, dec(e79))
        f["t_dpsnr"] = f["t_psnr79"] - psnr(ta, dec(e76))
        f["t_bpp79"] = len(e79) * 8 / (size[0] * size[1])
        p78, p77 = enc(im, 78), enc(im, 77)
        f["p_ratio"] = len(p77) / len(p78)
        f["p_bpp78"] = len(p78) * 8 / (im.size[0] * im.size[1])
        f["p_psnr78"] = psnr(rgb, dec(p78))
        f["p_dpsnr"] = f["p_psnr78"] - psnr(rgb, dec(p77))
        for s in STEPS:
            f["m" + s] = sw["k|%s|%s" % (n, s)][1] - sw["vips|%s|preview" % n][1]
        result[n] = f
        print(n.split("-")[0][:16], " ".join("%s=%.4g" % kv for kv in f.items()), flush=True)
    json.dump(result, open(out, "w"), indent=0)


def loo(path):
    d = json.load(open(path))
    flat = {k: v for k, v in d.items() if not k.startswith(("china", "path"))}
    feats = [k for k in next(iter(flat.values())) if not k.startswith("m-")]
    cands = [(a, None) for a in feats] + list(itertools.permutations(feats, 2))

    def val(n, c):
        return flat[n][c[0]] / (flat[n][c[1]] if c[1] else 1)

    below = 0
    for h in sorted(flat):
        rest = [n for n in flat if n != h]
        pos = [n for n in rest if n.startswith(NEED_LOW)]
        best = None
        for c, s, sign in itertools.product(cands, ("-2.75", "-3"), (1, -1)):
            t = min(sign * val(n, c) for n in pos)
            if min(flat[n]["m" + s] for n in rest if sign * val(n, c) >= t) <= 0:
                continue
            fails = [sign * val(n, c) for n in rest if flat[n]["m" + s] <= 0]
            gap = (t - max(fails)) / abs(t) if fails else float("inf")
            if best is None or gap > best[0]:
                best = (gap, c, s, sign, t)
        if best is None:
            print("%-18s no rule on the other %d" % (h.split("-")[0], len(rest)))
            continue
        gap, c, s, sign, t = best
        low = sign * val(h, c) >= t
        m = flat[h]["m" + s]
        below += low and m <= 0
        print("%-18s %s/%s %s, step %s: held-out %s" % (
            h.split("-")[0], c[0], c[1] or "1", ">=" if sign > 0 else "<=", s,
            ("there, %+.2f" % m + ("  BELOW VIPS" if m <= 0 else "")) if low else "stays at E - 2"))
    print("folds whose held-out photo falls below vips':", below)


def klein_q(q):
    """Klein's table at a fractional quality as QuantizationTables(kleinQuality:) scales it (hundredths of a percent)."""
    scale = round((200 - 2 * q) * 100)
    return [min(max((v * scale + 5000) // 10000, 1), 255) for v in KLEIN]


def held_tables(kind, e, step, hold=-2):
    luma, fine = klein_q(e + step), klein_q(e + hold)
    chroma = list(luma)
    count = {"klein": 0, "dcl": 1, "dcboth": 1, "low3both": 3}[kind]
    for k in (0, 1, 8)[:count]:
        luma[k] = fine[k]
        if kind != "dcl":
            chroma[k] = fine[k]
    return luma, chroma


def held_job(a):
    run, n, kind, e, step, hold, out = a
    from PIL import Image
    from ssimulacra2 import compute_ssimulacra2
    im = Image.open(os.path.join(run, n, "decoded.png")).convert("RGB")
    luma, chroma = held_tables(kind, e, step, hold)
    b = io.BytesIO()
    im.save(b, "JPEG", qtables=[luma, chroma], subsampling=2, progressive=True, optimize=True)
    tag = "%s_%g" % (kind, step) + ("" if hold == -2 else "_%g" % hold)
    path = os.path.join(out, "%s_%s.jpg" % (n, tag))
    with open(path, "wb") as f:
        f.write(b.getvalue())
    ref = os.path.join(run, n, "ref_%dx%d.png" % im.size)
    return key(n, kind, step, hold), [len(b.getvalue()), float(compute_ssimulacra2(ref, path))]


def key(n, kind, step, hold=-2):
    """A held store's key: HOLD (the held steps' quality, default −2) is only written when it is not −2."""
    return "%s|%s|%g" % (n, kind, step) + ("" if hold == -2 else "|%g" % hold)


def spec(x):
    """KIND:STEP[:HOLD] → (kind, step, hold)."""
    f = x.split(":")
    return f[0], float(f[1]), float(f[2]) if len(f) > 2 else -2.0


def held(run, now, stores, out, specs, ext=".png", base=-2.0):
    from multiprocessing import Pool
    from PIL import Image
    sw = load(stores)
    res = json.load(open(out)) if os.path.exists(out) else {}
    files = os.path.splitext(out)[0] + "-files"
    os.makedirs(files, exist_ok=True)
    names, inforce = [], {}
    for n in sorted(os.listdir(run)):
        d = os.path.join(run, n, "decoded.png")
        if not n.endswith(ext) or not os.path.exists(d) or max(Image.open(d).size) > 2048:
            continue
        import numpy as np
        rgb = np.asarray(Image.open(d).convert("RGB"), dtype=np.float64)
        y = rgb @ np.array([0.299, 0.587, 0.114])
        if (np.abs(np.diff(y, axis=1)).mean() + np.abs(np.diff(y, axis=0)).mean()) / 2 >= 6:
            continue  # detailed (060's gradient rule): Klein at E, untouched
        with Image.open(os.path.join(now, n, "preview.jpg")) as p:
            table = sorted(p.quantization[0])
        e = [q for q in range(60, 101) if sorted(klein_q(q + base)) == table]
        if e:
            names.append(n)
            inforce[n] = e[0]
    jobs = [(run, n, k, inforce[n], st, h, files) for k, st, h in map(spec, specs) for n in names
            if key(n, k, st, h) not in res]
    with Pool(2) as pool:
        for k, value in pool.imap_unordered(held_job, jobs):
            res[k] = value
            json.dump(res, open(out, "w"), indent=0)
    held_specs = sorted({spec(x) for x in specs if x.startswith("low3both:")}, key=lambda t: (t[2], -t[1]))
    m = {}
    for n in names:
        vs = sw["vips|%s|preview" % n][1]
        b0 = res[key(n, "klein", base)]
        tv = sum(os.path.getsize(os.path.join(run, n, "vips", f + ".jpg")) for f in ("thumbnail", "preview"))
        nt, npv = (os.path.getsize(os.path.join(now, n, f + ".jpg")) for f in ("thumbnail", "preview"))
        m[n] = {(s, h): res[key(n, "low3both", s, h)][1] - vs for _, s, h in held_specs}
        print("%-18s E%d " % (n.split("-")[0][:18], inforce[n]) + " ".join(
            "%s:%+.2f/%.3f" % (x, res[key(n, *spec(x))][1] - vs,
                               (nt + npv * res[key(n, *spec(x))][0] / b0[0]) / tv) for x in specs))
    for hold in sorted({h for _, _, h in held_specs}):
        steps = [s for _, s, h in held_specs if h == hold]
        for out_ in names:
            ok = [s for s in steps if all(m[n][(s, hold)] >= 0 for n in names if n != out_)]
            if not ok:
                print("leave out %-18s hold %+g: no swept step keeps the others" % (out_.split("-")[0], hold))
                continue
            s = min(ok)
            print("leave out %-18s low3both %+g hold %+g: held-out %+.2f" % (
                out_.split("-")[0], s, hold, m[out_][(s, hold)]))


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "downscaled":
        downscaled(args)
    elif cmd == "measures":
        measures(args[0], args[1], args[2:-1], args[-1])
    elif cmd == "held":
        specs = [a for a in args if ":" in a and not a.startswith("--")]
        opts = dict(a[2:].split("=", 1) for a in args if a.startswith("--"))
        rest = [a for a in args if ":" not in a and not a.startswith("--")]
        held(rest[0], rest[1], rest[2:-1], rest[-1], specs, ext=opts.get("ext", ".png"),
             base=float(opts.get("base", -2)))
    elif cmd == "loo":
        loo(args[0])
    else:
        raise SystemExit(__doc__)
