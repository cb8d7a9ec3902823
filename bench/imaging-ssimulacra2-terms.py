#!/usr/bin/env python3
"""Where two files' SSIMULACRA2 scores differ: the score's 108 terms, per region and per block (#28, decision 076).

The bench's scorer (PyPI `ssimulacra2`, .build-venv-bench) sums 108 weighted terms: 3 XYB channels × 6 scales × 2
norms (the mean, "L1", and the 4-norm, "L4") × 3 maps (1 − SSIM, "ssim"; the edge maps' ringing, "art", where the
distorted image has edges the reference lacks; and their blurring, "lost"), then maps the sum through a fixed
polynomial and power to the score. This recomputes the terms exactly as the package does (its score is reproduced
to the last digit) for a reference and two distorted files A and B, and prints each term's share of score(A) −
score(B), linearized at the mean of the two sums (the shares add up to the difference within 0.01 on a preview),
grouped by channel, scale, map and norm, then the largest terms.

  imaging-ssimulacra2-terms.py terms REF A B [ROWS]
        ROWS (e.g. 0-256,560-1048) scores those bands of rows alone as well: each band cropped from the three
        images and broken down the same way
  imaging-ssimulacra2-terms.py blocks REF A B
        the full-scale Y channel's 1 − SSIM map (the term "Y s0 ssim L4" is the 4-norm of it): its 4th power
        summed per 8×8 block of A and of B, the share of the sum in the worst 0.1/1/5/20 % of blocks, and the
        blocks where A's exceeds B's most

Note: the package loops over the scales an image has; one under 256 pixels on a side has fewer than 6, and the
package then reads the weights out of line (its index runs on without the missing scales). This script keeps each
term at its own weight, so on such small crops its score differs from the package's; on previews it is the same.
"""
import sys

import numpy as np
from PIL import Image
import ssimulacra2.ssimulacra2 as S


def load(path):
    return np.array(Image.open(path).convert("RGB"), dtype=np.float64)


def xyb(linear):
    return S.make_positive_xyb(S.linear_rgb_to_xyb(linear))


def raw_terms(ref, dist):
    """The 108 unweighted terms in the package's weight order, and their names."""
    l1, l2 = S.srgb_to_linear(ref), S.srgb_to_linear(dist)
    i1, i2 = xyb(l1), xyb(l2)
    scales = []
    for sc in range(S.kNumScales):
        if i1.shape[0] < 8 or i1.shape[1] < 8:
            break
        s11, s22, s12 = S.blur_image(i1 * i1), S.blur_image(i2 * i2), S.blur_image(i1 * i2)
        m1, m2 = S.blur_image(i1), S.blur_image(i2)
        scales.append((S.ssim_map(m1, m2, s11, s22, s12), S.edge_diff_map(i1, m1, i2, m2)))
        if sc < S.kNumScales - 1:
            l1, l2 = S.downsample(l1, 2, 2), S.downsample(l2, 2, 2)
            i1, i2 = xyb(l1), xyb(l2)
    terms, names = np.zeros(108), []
    i = 0
    for c in range(3):
        for sc in range(6):
            for n in range(2):
                for kind in ("ssim", "art", "lost"):
                    if sc < len(scales):
                        ssim, edge = scales[sc]
                        terms[i] = abs(ssim[c * 2 + n] if kind == "ssim" else edge[c * 4 + n + (2 if kind == "lost" else 0)])
                    names.append("%s s%d %s %s" % ("XYB"[c], sc, kind, ("L1", "L4")[n]))
                    i += 1
    return terms, names


def final(weighted_sum):
    s = weighted_sum * 0.9562382616834844
    s = 2.326765642916932 * s - 0.020884521182843837 * s * s + 6.248496625763138e-05 * s**3
    return 100.0 - 10.0 * s**0.6276336467831387 if s > 0 else 100.0


def compare(ref, a, b, label, top=12):
    ta, names = raw_terms(ref, a)
    tb, _ = raw_terms(ref, b)
    sa, sb = (S.weights * ta).sum(), (S.weights * tb).sum()
    mid, eps = (sa + sb) / 2, 1e-4
    slope = (final(mid + eps) - final(mid - eps)) / (2 * eps)
    share = slope * S.weights * (ta - tb)
    print("%s: A %.3f, B %.3f, A − B %+.3f (terms' shares add up to %+.3f)" % (label, final(sa), final(sb),
                                                                              final(sa) - final(sb), share.sum()))
    groups = {}
    for name, v in zip(names, share):
        ch, sc, kind, norm = name.split()
        for key in (ch, sc, kind, norm, ch + " " + kind):
            groups[key] = groups.get(key, 0.0) + v
    for keys in (("X", "Y", "B"), tuple("s%d" % k for k in range(6)), ("ssim", "art", "lost"), ("L1", "L4"),
                 tuple(c + " " + k for c in "XYB" for k in ("ssim", "art", "lost"))):
        print("  " + "  ".join("%s %+.3f" % (k, groups[k]) for k in keys))
    for j in np.argsort(-np.abs(share))[:top]:
        if S.weights[j] > 0:
            print("    %-16s weight %8.3f  A %.5f  B %.5f  → %+.3f" % (names[j], S.weights[j], ta[j], tb[j], share[j]))


def y_ssim_map(ref, dist):
    """The full-scale Y channel's 1 − SSIM per pixel, rows × columns (the package works on transposed planes)."""
    i1, i2 = xyb(S.srgb_to_linear(ref)), xyb(S.srgb_to_linear(dist))
    s11, s22, s12 = S.blur_image(i1 * i1), S.blur_image(i2 * i2), S.blur_image(i1 * i2)
    m1, m2 = S.blur_image(i1), S.blur_image(i2)
    num = (1.0 - (m1 - m2) ** 2) * (2.0 * (s12 - m1 * m2) + S.kC2)
    den = (s11 - m1 * m1) + (s22 - m2 * m2) + S.kC2
    return np.maximum(1.0 - num / den, 0.0)[..., 1].T


def blocks(ref, a, b):
    da, db = y_ssim_map(ref, a) ** 4, y_ssim_map(ref, b) ** 4
    h, w = da.shape[0] // 8, da.shape[1] // 8
    per = [d[: h * 8, : w * 8].reshape(h, 8, w, 8).sum((1, 3)) for d in (da, db)]
    for label, p in zip("AB", per):
        v = np.sort(p.ravel())[::-1]
        print("%s: mean d^4 %.3e; share in the worst 0.1/1/5/20 %% of blocks: %s" % (
            label, p.sum() / da.size, " ".join("%.2f" % (v[: max(1, int(len(v) * f))].sum() / v.sum())
                                               for f in (0.001, 0.01, 0.05, 0.2))))
    diff = per[0] - per[1]
    worst = np.argsort(-diff.ravel())[:12]
    print("blocks where A's exceeds B's most (row, column of the top-left pixel): " +
          " ".join("(%d, %d)" % (k // w * 8, k % w * 8) for k in worst))


def main(argv):
    if len(argv) < 5 or argv[1] not in ("terms", "blocks"):
        sys.exit(__doc__)
    ref, a, b = (load(p) for p in argv[2:5])
    if argv[1] == "blocks":
        return blocks(ref, a, b)
    compare(ref, a, b, "whole")
    for band in argv[5].split(",") if len(argv) > 5 else []:
        top, bottom = (int(x) for x in band.split("-"))
        compare(ref[top:bottom], a[top:bottom], b[top:bottom], "rows %d-%d" % (top, bottom), top=4)


if __name__ == "__main__":
    main(sys.argv)
