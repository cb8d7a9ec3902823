#!/usr/bin/env python3
"""Per-output quality oracle for #17: the lowest galleryd quality at which each output scores at
least vips' output, and the bytes a perfect per-output chooser would write.

    KEEP=1 bench/imaging.sh             # keeps /tmp/imaging-bench.XXXXXX (outputs, references)
    KEEP=1 bench/imaging-formats.sh     # or HEIC, PNG and WebP originals: /tmp/imaging-formats.XXXXXX
    .build-venv-bench/bin/python bench/imaging-oracle.py /tmp/imaging-bench.XXXXXX [74,77,80,82,84,86]

For every photo of that run (CMYK left out, as the bench does) it encodes both outputs at each
quality with `galleryd process --quality Q --thumbnail-quality Q` (a preview that keeps the
original's size is still encoded at Q + 2, DerivativeSpec), scores them with the bench's scorer (PyPI
ssimulacra2 against the run's PIL Lanczos references) and prints, per fixed quality, bytes/vips and
the outputs below vips; then the oracle's total (the needed quality interpolated linearly between
the measured ones, and its bytes likewise) and each output's needed quality.
"""
import json, os, subprocess, sys
from PIL import Image
from ssimulacra2 import compute_ssimulacra2

run = sys.argv[1]
qualities = [int(q) for q in (sys.argv[2] if len(sys.argv) > 2 else "74,77,80,82,84,86").split(",")]
binary = os.environ.get("BIN", os.path.join(os.path.dirname(__file__), "..", ".build/release/galleryd"))
kinds = ("thumbnail", "preview")

def measure(directory, path):
    with Image.open(path) as im:
        w, h = im.size
    return os.path.getsize(path), compute_ssimulacra2(os.path.join(directory, "ref_%dx%d.png" % (w, h)), path)

rows = [json.loads(line) for line in open(os.path.join(run, "results.jsonl"))]
vips, ours = {}, {}
for r in rows:
    d = r["dir"]
    v = {k: measure(d, os.path.join(d, "vips", k + ".jpg")) for k in kinds}
    if min(s for _, s in v.values()) < 0:  # vips writes CMYK originals as CMYK: left out
        continue
    vips[r["name"]] = v
    for q in qualities:
        out = os.path.join(d, "oracle_q%d" % q)
        subprocess.run([binary, "process", r["file"], "--out", out, "--quality", str(q),
                        "--thumbnail-quality", str(q)], check=True,
                       stdout=subprocess.DEVNULL)
        ours.setdefault(r["name"], {})[q] = {k: measure(d, os.path.join(out, k + ".jpg")) for k in kinds}
    print(r["name"], file=sys.stderr)

total_vips = sum(vips[n][k][0] for n in vips for k in kinds)
for q in qualities:
    total = sum(ours[n][q][k][0] for n in ours for k in kinds)
    below = sum(ours[n][q][k][1] < vips[n][k][1] for n in ours for k in kinds)
    print("Q%d: bytes/vips %.3f, %d outputs below vips" % (q, total / total_vips, below))

oracle, lines = 0.0, []
for n in sorted(ours):
    for k in kinds:
        target = vips[n][k][1]
        points = [(q, ours[n][q][k][0], ours[n][q][k][1]) for q in qualities]
        need = None
        for (q0, b0, s0), (q1, b1, s1) in zip(points, points[1:]):
            if s0 >= target:
                need = (q0, b0)
                break
            if s1 >= target:
                t = (target - s0) / (s1 - s0)
                need = (q0 + t * (q1 - q0), b0 + t * (b1 - b0))
                break
        if need is None:
            need = (float("inf"), points[-1][1])
        oracle += need[1]
        lines.append("%-34s %-9s needs Q%5.1f (vips %.2f, ours at Q80 %+.2f)"
                     % (n, k, need[0], target, ours[n].get(80, ours[n][qualities[0]])[k][1] - target))
print("per-output oracle: bytes/vips %.3f (an output that no measured quality lifts counts at the highest)"
      % (oracle / total_vips))
print("\n".join(lines))
