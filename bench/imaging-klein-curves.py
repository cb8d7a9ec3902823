#!/usr/bin/env python3
"""Per-photo curves of a table shape on previews that keep the original's size (#28, decision 060).

Works on a RUN directory of bench/imaging-quality-sweep.py (RUN/<fixture>/decoded.png, vips/, ref_WxH.png)
and BASE, the release tool's outputs at the settings in force (`$BIN process FIXTURE --out BASE/<fixture>`).
Such a preview is the decoded original re-encoded, and PIL's libjpeg-turbo fed explicit tables writes our
pixels exactly (decision 058), so each step is scored without building anything. E, the quality in force, is
read back from BASE's preview; its bytes scale PIL's (the scan script is the only difference).

  imaging-klein-curves.py sweep RUN BASE CANDIDATE STEP,…   CANDIDATE at E + STEP: klein, kleindcN (Klein with
                                                            its luma DC step at E + STEP + N), or a shape of
                                                            imaging-table-shapes.py; scores go to RUN/klein.json
  imaging-klein-curves.py table RUN BASE DECISION_MD CANDIDATE   per preview and step: score − vips', and both
                                                            files of the photo against vips' bytes (thumbnail
                                                            as in BASE); DECISION_MD gives vips' and ours' scores
  imaging-klein-curves.py features RUN                      the content measures of decision 060 per fixture

Needs .build-venv-bench (ssimulacra2, Pillow, numpy).
"""
import importlib.util, json, os, sys
from multiprocessing import Pool
from PIL import Image

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("shapes", os.path.join(here, "imaging-table-shapes.py"))
shapes = importlib.util.module_from_spec(spec)
spec.loader.exec_module(shapes)
spec = importlib.util.spec_from_file_location("sweep", os.path.join(here, "imaging-quality-sweep.py"))
sweep = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sweep)
ZIGZAG = [0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7,
          14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46,
          53, 60, 61, 54, 47, 55, 62, 63]


def quality_in_force(path):
    """The quality whose tables (ours: Robidoux, DC at q + 4) the file was written with."""
    with Image.open(path) as im:
        table = [im.quantization[0][i] for i in range(64)]
    natural = [0] * 64
    for i, z in enumerate(ZIGZAG): natural[z] = table[i]
    for q in range(1, 101):
        if shapes.ours(q)[0][1:] in (table[1:], natural[1:]): return q
    raise SystemExit("%s: not our table" % path)


def variant(candidate, q):
    if candidate.startswith("kleindc"):
        luma, chroma, subsampling = shapes.variant("klein", q)
        luma = list(luma)
        luma[0] = shapes.scaled([shapes.KLEIN[0]], q + int(candidate[7:]))[0]
        return luma, chroma, subsampling
    return shapes.variant(candidate, q)


def keep_size(run):
    names = sorted(n for n in os.listdir(run) if os.path.exists(os.path.join(run, n, "decoded.png")))
    return [n for n in names if max(Image.open(os.path.join(run, n, "decoded.png")).size) <= 2048]


def job(args):
    run, name, candidate, q = args
    from ssimulacra2 import compute_ssimulacra2
    d = os.path.join(run, name)
    image = Image.open(d + "/decoded.png").convert("RGB")
    data = shapes.encode(image, *variant(candidate, q))
    path = "%s/curve_%s_%d.jpg" % (d, candidate, q)
    with open(path, "wb") as f: f.write(data)
    ref = d + "/ref_%dx%d.png" % image.size
    if not os.path.exists(ref):
        image.save(ref + ".%d.png" % os.getpid())
        os.replace(ref + ".%d.png" % os.getpid(), ref)
    return "%s|%s|%d" % (name, candidate, q), [len(data), float(compute_ssimulacra2(ref, path))]


def features(path):
    import numpy as np
    rgb = np.asarray(Image.open(path).convert("RGB"), dtype=np.float64)
    y = 0.299 * rgb[..., 0] + 0.587 * rgb[..., 1] + 0.114 * rgb[..., 2]
    h, w = y.shape[0] // 8 * 8, y.shape[1] // 8 * 8
    blocks = y[:h, :w].reshape(h // 8, 8, w // 8, 8).transpose(0, 2, 1, 3).reshape(-1, 64)
    flat = blocks.std(axis=1) < 2
    gradient = (np.abs(np.diff(y, axis=1)).mean() + np.abs(np.diff(y, axis=0)).mean()) / 2
    return dict(flat=round(float(flat.mean()), 3), flat_bright=round(float((flat & (blocks.mean(axis=1) > 100)).mean()), 3),
                gradient=round(float(gradient), 2))


def main():
    command, run = sys.argv[1], sys.argv[2]
    store = os.path.join(run, "klein.json")
    if command == "sweep":
        base, candidate, steps = sys.argv[3], sys.argv[4], [int(s) for s in sys.argv[5].split(",")]
        done = json.load(open(store)) if os.path.exists(store) else {}
        work = []
        for name in keep_size(run):
            e = quality_in_force(os.path.join(base, name, "preview.jpg"))
            work += [(run, name, candidate, e + s) for s in steps if "%s|%s|%d" % (name, candidate, e + s) not in done]
        with Pool(int(os.environ.get("JOBS", "2"))) as pool:
            for key, value in pool.imap_unordered(job, work):
                sweep.store_score(store, key, value)
                print(key, "%d %.2f" % (value[0], value[1]), flush=True)
    elif command == "table":
        base, decision, candidate = sys.argv[3], sys.argv[4], sys.argv[5]
        scores, in_force = json.load(open(store)), shapes.in_force(decision)
        vips = {}
        for line in open(decision):  # the preview's "ours/vips" scores of the per-photo table
            cells = line.split("| p E")
            if len(cells) == 2 and line.startswith("| "):
                parts = line.split(" | ")
                suffix = "-screenshot-1170x2532.png" if parts[1] == "png" else "-photo-4000x3000.webp"
                vips[parts[0][2:] + suffix] = float(cells[1].split()[2].split("/")[1])
        for name in keep_size(run):
            b = {k: os.path.getsize(os.path.join(base, name, k + ".jpg")) for k in ("thumbnail", "preview")}
            v = {k: os.path.getsize(os.path.join(run, name, "vips", k + ".jpg")) for k in ("thumbnail", "preview")}
            e = quality_in_force(os.path.join(base, name, "preview.jpg"))
            image = Image.open(os.path.join(run, name, "decoded.png")).convert("RGB")
            scale = b["preview"] / len(shapes.encode(image, *shapes.ours(e), 2))
            cells = ["ours E%d %+.2f / %.3f" % (e, in_force[name][1] - vips[name], sum(b.values()) / sum(v.values()))]
            for key in sorted((k for k in scores if k.startswith(name + "|" + candidate + "|")), key=lambda k: int(k.split("|")[2])):
                size, score = scores[key]
                photo = (b["thumbnail"] + size * scale) / sum(v.values())
                cells.append("%+d: %+.2f / %.3f" % (int(key.split("|")[2]) - e, score - vips[name], photo))
            print(name, " | ".join(cells))
    elif command == "features":
        for name in sorted(os.listdir(run)):
            path = os.path.join(run, name, "decoded.png")
            if os.path.exists(path): print(name, json.dumps(features(path)), flush=True)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
