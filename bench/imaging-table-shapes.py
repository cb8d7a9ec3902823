#!/usr/bin/env python3
"""Quantisation-table shapes for previews that keep the original's size (#28, decision 058).

Works on a RUN directory of bench/imaging-quality-sweep.py (RUN/<fixture>/decoded.png and ref_WxH.png).
Such a preview is the decoded original re-encoded, and PIL's libjpeg-turbo fed explicit tables writes
exactly our encoder's pixels (checked: our preview's tables read back and re-encoded with PIL decode to
the same pixels), so a table shape can be scored without building anything. Bytes are PIL's 4:2:0
progressive, optimized files without an ICC profile: `jpegtran -copy none -optimize -progressive` of our
own file gives the same count.

  imaging-table-shapes.py at-e80 RUN VIPS_JSON FIXTURE,… CANDIDATE,…     each candidate at ours-E80's bytes
  imaging-table-shapes.py in-force RUN VIPS_JSON DECISION_MD CANDIDATE [STEP]
                                         at the bytes of the quality in force (then STEP qualities from there)

For each fixture and candidate: the quality whose bytes come nearest the target, then SSIMULACRA2 there
(PyPI ssimulacra2 against the sweep's reference). One JSON line per result on stdout. VIPS_JSON maps a
fixture to {"preview": [bytes, score]}; DECISION_MD is a decision whose per-photo table gives each
fixture's preview E and scores (056's or 058's). Needs .build-venv-bench (ssimulacra2, Pillow).
"""
import io, json, os, re, sys
from multiprocessing import Pool
from PIL import Image

ROBIDOUX = [16, 16, 16, 18, 25, 37, 56, 85, 16, 17, 20, 27, 34, 40, 53, 75, 16, 20, 24, 31, 43, 62, 91, 135,
            18, 27, 31, 40, 53, 74, 106, 156, 25, 34, 43, 53, 69, 94, 131, 189, 37, 40, 62, 74, 94, 124, 169, 238,
            56, 53, 91, 106, 131, 169, 226, 311, 85, 75, 135, 156, 189, 238, 311, 418]
# mozjpeg's jcparam.c tables 0, 2, 4 and 5 (luma, chroma); natural order.
TABLES = {
    "annexk": ([16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57, 69, 56,
                14, 17, 22, 29, 51, 87, 80, 62, 18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92,
                49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99],
               [17, 18, 24, 47, 99, 99, 99, 99, 18, 21, 26, 66, 99, 99, 99, 99, 24, 26, 56, 99, 99, 99, 99, 99,
                47, 66, 99, 99, 99, 99, 99, 99] + [99] * 32),
    "mssim": ([12, 17, 20, 21, 30, 34, 56, 63, 18, 20, 20, 26, 28, 51, 61, 55, 19, 20, 21, 26, 33, 58, 69, 55,
               26, 26, 26, 30, 46, 87, 86, 66, 31, 33, 36, 40, 46, 96, 100, 73, 40, 35, 46, 62, 81, 100, 111, 91,
               46, 66, 76, 86, 102, 121, 120, 101, 68, 90, 90, 96, 113, 102, 105, 103],
              [8, 12, 15, 15, 86, 96, 96, 98, 13, 13, 15, 26, 90, 96, 99, 98, 12, 15, 18, 96, 99, 99, 99, 99,
               17, 16, 90, 96, 99, 99, 99, 99, 96, 96, 99, 99, 99, 99, 99, 99] + [99] * 24),
    "psnrhvs": ([9, 10, 12, 14, 27, 32, 51, 62, 11, 12, 14, 19, 27, 44, 59, 73, 12, 14, 18, 25, 42, 59, 79, 78,
                 17, 18, 25, 42, 61, 92, 87, 92, 23, 28, 42, 75, 79, 112, 112, 99, 40, 42, 59, 84, 88, 124, 132, 111,
                 42, 64, 78, 95, 105, 126, 125, 99, 70, 75, 100, 102, 116, 100, 107, 98],
                [9, 10, 17, 19, 62, 89, 91, 97, 12, 13, 18, 29, 84, 91, 88, 98, 14, 19, 29, 93, 95, 95, 98, 97,
                 20, 26, 84, 88, 95, 95, 98, 94, 26, 86, 91, 93, 97, 99, 98, 99, 99, 100, 98, 99, 99, 99, 99, 99]
                + [99] * 8 + [97, 97, 99, 99, 99, 99, 97, 99]),
}
KLEIN = [10, 12, 14, 19, 26, 38, 57, 86, 12, 18, 21, 28, 35, 41, 54, 76, 14, 21, 25, 32, 44, 63, 92, 136,
         19, 28, 32, 41, 54, 75, 107, 157, 26, 35, 44, 54, 70, 95, 132, 190, 38, 41, 63, 75, 95, 125, 170, 239,
         57, 54, 92, 107, 132, 170, 227, 312, 86, 76, 136, 157, 190, 239, 312, 419]
TABLES["klein"] = (KLEIN, KLEIN)


def scaled(table, q):
    """libjpeg's jpeg_quality_scaling and jpeg_add_quant_table (baseline)."""
    q = min(max(q, 1), 100)
    s = 5000 // q if q < 50 else 200 - 2 * q
    return [min(max((v * s + 50) // 100, 1), 255) for v in table]


def ours(q, chroma_boost=3):
    """QuantizationTables(quality:): Robidoux, luma DC at q + 4, chroma at q + chroma_boost."""
    luma = scaled(ROBIDOUX, q)
    luma[0] = scaled([ROBIDOUX[0]], q + 4)[0]
    return luma, scaled(ROBIDOUX, q + chroma_boost)


def variant(candidate, q):
    """(luma, chroma, PIL subsampling) of a candidate at quality q."""
    if candidate == "ours": return (*ours(q), 2)
    if candidate == "ours-chroma-at-q": return (*ours(q, 0), 2)
    if candidate == "ours-444-chroma-6": return (*ours(q, -6), 0)
    if candidate == "annexk-luma": return scaled(TABLES["annexk"][0], q), ours(q)[1], 2
    if candidate == "annexk-chroma": return ours(q)[0], scaled(TABLES["annexk"][1], q), 2
    luma, chroma = TABLES[candidate]
    return scaled(luma, q), scaled(chroma, q), 2


def encode(image, luma, chroma, subsampling):
    out = io.BytesIO()
    image.save(out, "JPEG", qtables=[luma, chroma], subsampling=subsampling, progressive=True, optimize=True)
    return out.getvalue()


def job(args):
    run, name, candidate, target_quality, vips, step = args
    from ssimulacra2 import compute_ssimulacra2
    d = os.path.join(run, name)
    image = Image.open(d + "/decoded.png").convert("RGB")
    target = len(encode(image, *ours(target_quality), 2))
    sizes = {}

    def size(q):
        if q not in sizes: sizes[q] = len(encode(image, *variant(candidate, q)))
        return sizes[q]

    lo, hi = 30, 100
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if size(mid) <= target else (lo, mid)
    q = min((lo, hi), key=lambda v: abs(size(v) - target)) + step
    path = "%s/shape_%s_%d.jpg" % (d, candidate, q)
    with open(path, "wb") as f:
        f.write(encode(image, *variant(candidate, q)))
    score = compute_ssimulacra2(d + "/ref_%dx%d.png" % image.size, path)
    return dict(name=name, candidate=candidate, ours_E=target_quality, step=step, q=q, bytes=size(q), target=target,
                vips_bytes=vips[0], vips_score=vips[1], score=float(score))


def in_force(decision):
    """fixture → (preview E, ours' score) from a decision's per-photo table."""
    rows = {}
    for line in open(decision):
        m = re.match(r"\| (\S+) \| (png|webp) \| t E\d+ .*\| p E(\d+) [\d.]+ ([\d.]+)/", line)
        if m:
            suffix = "-screenshot-1170x2532.png" if m.group(2) == "png" else "-photo-4000x3000.webp"
            rows[m.group(1) + suffix] = (int(m.group(3)), float(m.group(4)))
    return rows


def main():
    command, run, vips = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))
    if command == "at-e80":
        work = [(run, f, c, 80, vips[f]["preview"], 0) for c in sys.argv[5].split(",") for f in sys.argv[4].split(",")]
    elif command == "in-force":
        work = []
        for name, (e, _) in sorted(in_force(sys.argv[4]).items()):
            with Image.open(os.path.join(run, name, "decoded.png")) as im:
                if max(im.size) <= 2048:  # the preview keeps the original's size
                    step = int(sys.argv[6]) if len(sys.argv) > 6 else 0
                    work.append((run, name, sys.argv[5], e, vips[name]["preview"], step))
    else:
        sys.exit(__doc__)
    with Pool(2) as pool:
        for result in pool.imap_unordered(job, work):
            print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
