#!/usr/bin/env python3
"""Per-block quantization levers for an original-size preview, against Klein's own steps (#28, decision 076).

At the original's size both encoders quantize the same pixels (RUN/<name>/decoded.png), and PIL (libjpeg-turbo)
saving decoded.png with the tool's two tables, 4:2:0, gives the tool's preview pixels exactly (decision 073). So a
lever is modelled without a sweep build: PIL writes that file (the template), bench/imaging-jpeg-coefficients.c
(`jcoef`, built to JCOEF, default /tmp/jcoef) dumps its quantized coefficients, numpy changes the luma blocks, and
`jcoef write` writes them back as a standard progressive file, which is scored as the bench scores (PyPI
`ssimulacra2` against the reference). Bytes are the tool's preview bytes × this file's bytes / the unchanged
template's (the tool's scan choice is not modelled). Luma coefficients before quantization are libjpeg's colour
conversion (its fixed-point Y) and the orthonormal 8×8 DCT of the edge-replicated plane: round(X / Q) is the
template's (islow) value for 99.9 % of them; a lever starts from the template's values.

  imaging-block-levers.py SET NAME "CONFIG;CONFIG;…"        (SET as imaging-validate.py's, main's outputs in
                                                              SET/OUT/main, vips' in SET/RUN/NAME/vips)
A CONFIG is key=value pairs, comma separated:
  F=f            both tables round(f × the tool's) (Klein's own steps: F 1.05 is about one step coarser)
  L=1            the luma table min(the tool's, vips' Annex K Q80) (vips' finer high frequencies)
  mode=w         weighted rounding: each block's 63 AC chosen within floor/ceil of X/Q (coordinate descent, `passes`
                 passes) to minimize Σ w_p e_p² over its pixels, w = (local variance of Y, Gaussian sig + c)^(−p):
                 p > 0 keeps flat pixels exact (error moved onto edges), p < 0 the reverse; uniform w is rounding
  mode=dz        a dead zone: AC with u + v ≥ 3 and |X/Q| < 0.5 + s sent as 0 in the blocks of `gate`: all, hi or
                 lo (mean |AC| above or below the median), mapN (every block but the N % with the largest full-scale
                 Y 1 − SSIM to the 4th of the template, and their neighbours: an oracle, it needs the reference);
                 h > 0 rounds |X/Q| from 0.5 − h up to 1 in the blocks the gate leaves out (AC with u + v ≥ hk)
  mode=dc        the DC of blocks with mean |AC| < thr quantized with Floyd–Steinberg error diffusion over the block
                 grid (a smooth gradient's block means kept on average)
Each prints its bytes over vips' preview bytes and score − vips' (the tool's at F 1 scaled as above), and the share
of blocks changed. The gain of a lever is its margin minus Klein's (F) curve's at the same bytes (decision 070).
"""
import json, os, subprocess, sys

import numpy as np
from PIL import Image
from scipy import ndimage
from scipy.fft import dctn, idctn
from ssimulacra2 import compute_ssimulacra2
import ssimulacra2.ssimulacra2 as S

JCOEF = os.environ.get("JCOEF", "/tmp/jcoef")


def read_coefs(path):
    b, off, comps = open(path, "rb").read(), 0, []
    while off < len(b):
        h, w = np.frombuffer(b, np.int32, 2, off)
        off += 8
        q = np.frombuffer(b, np.uint16, 64, off).astype(np.float64).reshape(8, 8)
        off += 128
        comps.append([q, np.frombuffer(b, np.int16, h * w * 64, off).reshape(h, w, 8, 8).copy()])
        off += h * w * 128
    return comps


def write_coefs(path, comps):
    with open(path, "wb") as f:
        for q, c in comps:
            f.write(np.array(c.shape[:2], np.int32).tobytes())
            f.write(q.astype(np.uint16).tobytes())
            f.write(c.astype(np.int16).tobytes())


def luma_dct(rgb, hb, wb):
    r, g, b = (rgb[..., i].astype(np.int64) for i in range(3))
    y = ((19595 * r + 38470 * g + 7471 * b + 32768) >> 16).astype(np.float64) - 128
    yp = np.pad(y, ((0, hb * 8 - y.shape[0]), (0, wb * 8 - y.shape[1])), mode="edge")
    return dctn(yp.reshape(hb, 8, wb, 8).transpose(0, 2, 1, 3), axes=(2, 3), norm="ortho"), yp


def basis():
    out = np.zeros((64, 8, 8))
    for k in range(64):
        e = np.zeros((8, 8))
        e[k // 8, k % 8] = 1
        out[k] = idctn(e, norm="ortho")
    return out.reshape(64, 64)


def weighted_round(X, Q, W, q0, passes):
    """Coordinate descent on Σ W e² per block, each AC moved by ±1 within floor/ceil of X/Q."""
    Bm, q = basis(), q0.astype(np.float64).copy()
    e = (X - q * Q) @ Bm
    lo, hi = np.floor(X / Q), np.ceil(X / Q)
    for _ in range(passes):
        for k in range(1, 64):
            bk = Bm[k]
            a, c = (W * e * bk).sum(1), (W * bk * bk).sum(1)
            best, bestd = np.zeros(len(q)), np.zeros(len(q))
            for d in (-1.0, 1.0):
                nq = q[:, k] + d
                dv = -2 * d * Q[k] * a + (d * Q[k]) ** 2 * c
                take = (nq >= lo[:, k]) & (nq <= hi[:, k]) & (dv < bestd)
                best[take], bestd[take] = d, dv[take]
            q[:, k] += best
            e -= np.outer(best * Q[k], bk)
    return q


def y_ssim4(ref, dist):
    i1, i2 = (S.make_positive_xyb(S.linear_rgb_to_xyb(S.srgb_to_linear(x))) for x in (ref, dist))
    s11, s22, s12 = S.blur_image(i1 * i1), S.blur_image(i2 * i2), S.blur_image(i1 * i2)
    m1, m2 = S.blur_image(i1), S.blur_image(i2)
    d = 1.0 - (1.0 - (m1 - m2) ** 2) * (2.0 * (s12 - m1 * m2) + S.kC2) / ((s11 - m1 * m1) + (s22 - m2 * m2) + S.kC2)
    return np.maximum(d, 0)[..., 1].T ** 4


class Source:
    def __init__(self, bench, name):
        scores = json.load(open(os.path.join(bench, "scores.json")))
        self.vips = scores["vips|%s|preview" % name]
        self.main = scores["main|%s|preview" % name]
        run = os.path.join(bench, "RUN", name)
        self.src = os.path.join(run, "decoded.png")
        self.rgb = np.array(Image.open(self.src).convert("RGB"))
        self.ref = os.path.join(run, "ref_%dx%d.png" % Image.open(self.src).size)
        ours = Image.open(os.path.join(bench, "OUT", "main", name, "preview.jpg"))
        # Every table the preview has: two, or three since decision 075 (Cr on its own).
        self.tables = [np.array(ours.quantization[i], float) for i in sorted(ours.quantization)]
        self.vips_luma = np.array(Image.open(os.path.join(run, "vips", "preview.jpg")).quantization[0], float)
        self.tmp = "/tmp/block-levers-%d" % os.getpid()

    def run(self, F=1.0, L=0, mode=None, c=16.0, p=1.0, passes=2, sig=1.5, s=0.0, gate="all", thr=2.0, h=0.0, hk=1):
        tmp = self.tmp
        luma = np.minimum(self.tables[0], self.vips_luma) if L else self.tables[0]
        tables = [list(np.clip(np.round(F * t), 1, 255).astype(int)) for t in [luma] + self.tables[1:]]
        Image.open(self.src).convert("RGB").save(tmp + ".jpg", "JPEG", qtables=tables, subsampling=2, optimize=True)
        subprocess.run([JCOEF, "dump", tmp + ".jpg", tmp + ".bin"], check=True)
        comps = read_coefs(tmp + ".bin")
        q, co = comps[0]
        hb, wb = co.shape[:2]
        changed = 0.0
        if mode:
            X, yp = luma_dct(self.rgb, hb, wb)
            Xf, Qf, q0 = X.reshape(-1, 64), q.ravel(), co.reshape(-1, 64).astype(float)
            act = np.abs(Xf[:, 1:]).mean(1)
            nq = q0.copy()
            if mode == "w":
                mu = ndimage.gaussian_filter(yp, sig)
                var = np.maximum(ndimage.gaussian_filter(yp * yp, sig) - mu * mu, 0)
                W = ((var + c) ** (-p)).reshape(hb, 8, wb, 8).transpose(0, 2, 1, 3).reshape(-1, 64)
                nq = weighted_round(Xf, Qf, W / W.mean(1, keepdims=True), q0, passes)
            elif mode == "dz":
                if gate.startswith("map"):
                    dm = y_ssim4(np.array(Image.open(self.ref).convert("RGB"), float),
                                 np.array(Image.open(tmp + ".jpg").convert("RGB"), float))
                    dm = np.pad(dm, ((0, hb * 8 - dm.shape[0]), (0, wb * 8 - dm.shape[1])))
                    per = ndimage.maximum_filter(dm.reshape(hb, 8, wb, 8).sum((1, 3)), 3)
                    g = (per < np.quantile(per, 1 - float(gate[3:]) / 100)).ravel()
                else:
                    g = {"all": np.ones(len(act), bool), "lo": act < np.median(act), "hi": act >= np.median(act)}[gate]
                uv = np.add.outer(np.arange(8), np.arange(8)).ravel()
                r = np.abs(Xf / Qf)
                nq[(r < 0.5 + s) & (uv >= 3)[None, :] & g[:, None]] = 0
                if h > 0:
                    up = (r >= 0.5 - h) & (r < 0.5) & (uv >= hk)[None, :] & ~g[:, None]
                    nq[up] = np.sign(Xf[up])
            elif mode == "dc":
                dc, smooth = Xf[:, 0].reshape(hb, wb) / Qf[0], (act < thr).reshape(hb, wb)
                err, out = np.zeros((hb + 1, wb + 2)), np.round(Xf[:, 0].reshape(hb, wb) / Qf[0])
                for i in range(hb):
                    for j in range(wb):
                        if smooth[i, j]:
                            v = dc[i, j] + err[i, j + 1]
                            out[i, j] = np.round(v)
                            e = v - out[i, j]
                            err[i, j + 2] += e * 7 / 16
                            err[i + 1, j] += e * 3 / 16
                            err[i + 1, j + 1] += e * 5 / 16
                            err[i + 1, j + 2] += e / 16
                nq[:, 0] = out.ravel()
            comps[0][1] = nq.reshape(co.shape).astype(np.int16)
            changed = float((nq != q0).any(1).mean())
        write_coefs(tmp + ".bin", comps)
        subprocess.run([JCOEF, "write", tmp + ".jpg", tmp + ".bin", tmp + ".o.jpg"], check=True)
        return os.path.getsize(tmp + ".o.jpg"), float(compute_ssimulacra2(self.ref, tmp + ".o.jpg")), changed


def main(argv):
    if len(argv) != 4:
        sys.exit(__doc__)
    src = Source(argv[1], argv[2])
    (vb, vs), (mb, ms) = src.vips, src.main
    base = src.run()
    print("%s base pipeline bytes %d score %.3f (tool %d %.3f, vips %d %.3f)" % (argv[2], base[0], base[1], mb, ms,
                                                                              vb, vs), flush=True)
    for cfg in argv[3].split(";"):
        kw = dict(kv.split("=") for kv in cfg.split(",") if kv)
        kw = {k: (v if k in ("mode", "gate") else int(v) if k in ("passes", "L", "hk") else float(v))
              for k, v in kw.items()}
        by, s, changed = src.run(**kw)
        print("%-40s bytes %.4f of vips' (x%.4f base)  score %+.3f vs vips (%+.3f vs base)  blocks changed %.3f" % (
            cfg, mb * by / base[0] / vb, by / base[0], s - base[1] + ms - vs, s - base[1], changed), flush=True)


if __name__ == "__main__":
    main(sys.argv)
