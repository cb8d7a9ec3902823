#!/usr/bin/env bash
# Imaging bench: `galleryd process` against libvips on every photo of a folder.
#
#   bench/imaging.sh [PHOTO_DIR]     (default: PHOTOS_DIR, itself samples/photos by default;
#                                     see bench/photos.sh for the 39-photo set of the figures)
#   RUNS=5 WARMUP=1 SSIM=1 KEEP=0 QUALITY=80 bench/imaging.sh
#   PHOTOS="mate_Storm.jpg orientation/Portrait_6.jpg" bench/imaging.sh   (a subset, paths under PHOTO_DIR)
#   (QUALITY sets galleryd's --quality only; vips stays at Q80, to compare at equal SSIMULACRA2;
#   galleryd encodes thumbnails and original-size previews 2 higher, see DerivativeSpec)
#   QUANTIZER=trellis bench/imaging.sh   (galleryd's --quantizer: libjpeg, the default, or trellis)
#   GALLERYD=$(bench/imaging-process.sh) PYTHON=… bench/imaging.sh   (another binary, such as the
#                                     Imaging-only release build, and another bench virtualenv)
#
# For each JPEG (recursively) it makes the two derivatives three ways, at Q80 with metadata
# stripped: galleryd in one run (thumbnail: shorter edge 400, preview: longer edge 2048, one
# decode); vipsthumbnail in two processes, i.e. two decodes of the original (`--size 2048x2048>`
# and `--size x400>` / `400x>`, the box that makes the displayed shorter edge 400; `>` = never
# enlarge, like galleryd); and, as a second anchor, one pyvips process making both sizes from one
# `new_from_file` (bench/imaging-pyvips.py: one shrink-on-load decode, timed inside the process,
# so without the interpreter's start-up). It measures
#   wall   median of our one run vs the median of the two vips runs back to back, and vs the
#          median pyvips time, the sides alternating run by run so that all see the same load
#   rss    peak RSS (/usr/bin/time -f %M) of our run vs the larger of the two vips runs
#   bytes  thumbnail + preview
#   ssim2  SSIMULACRA2 (PyPI `ssimulacra2`) of every output against a reference made from the
#          original with PIL: EXIF transpose, then Lanczos to that output's exact size, as PNG
# and prints a table with totals. Targets: wall ≤ 0.45× the two vips runs, rss ≤ vips, bytes ≤
# 0.91× vips, and SSIMULACRA2 ≥ vips on every output. Needs libvips-tools, time, jq and the
# virtualenv .build-venv-bench with pyvips and ssimulacra2: `scripts/deps.sh --bench` makes all.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
photos=${1:-${PHOTOS_DIR:-$repo/samples/photos}}
runs=${RUNS:-5}
warmup=${WARMUP:-1}
ssim=${SSIM:-1}
bin=${GALLERYD:-$repo/.build/release/galleryd}
python=${PYTHON:-$repo/.build-venv-bench/bin/python}

for tool in vipsthumbnail jq awk; do
  command -v "$tool" >/dev/null || { echo "imaging.sh: $tool is missing (scripts/deps.sh --bench)" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "imaging.sh: /usr/bin/time is missing (scripts/deps.sh --bench)" >&2; exit 1; }
if ! "$python" -c 'import pyvips, ssimulacra2, PIL' 2>/dev/null; then
  echo "imaging.sh: $python with pyvips and ssimulacra2 is missing (scripts/deps.sh --bench)" >&2
  exit 1
fi
if [ -z "${GALLERYD:-}" ] && { [ ! -x "$bin" ] || [ -n "$(find "$repo/Sources" -newer "$bin" -name '*.swift' -o -newer "$bin" -name '*.c' | head -1)" ]; }; then
  echo "imaging.sh: building galleryd (release)" >&2
  (cd "$repo" && swift build -c release --static-swift-stdlib --product galleryd >&2)  # as `make release` builds it
fi

work=$(mktemp -d /tmp/imaging-bench.XXXXXX)
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT
results=$work/results.jsonl
: >"$results"

if [ -n "${PHOTOS:-}" ]; then
  files=()
  for p in $PHOTOS; do
    case $p in /*) ;; *) p=$photos/$p ;; esac
    [ -f "$p" ] || { echo "imaging.sh: no such photo: $p" >&2; exit 1; }
    files+=("$p")
  done
else
  mapfile -t files < <(find "$photos" -type f \( -iname '*.jpg' -o -iname '*.jpeg' \) | sort)
fi
[ ${#files[@]} -gt 0 ] || { echo "imaging.sh: no JPEG under $photos" >&2; exit 1; }
echo "imaging.sh: ${#files[@]} photos from $photos, $runs runs each (+$warmup warm-up)" >&2
echo "imaging.sh: vips runs as two vipsthumbnail processes per photo (two decodes of the original);" \
  "pyvips as one process making both sizes from one new_from_file (one decode)" >&2

i=0
for f in "${files[@]}"; do
  i=$((i + 1))
  name=$(basename "$(dirname "$f")")_$(basename "$f" .jpg)
  [ "$(dirname "$f")" = "$photos" ] && name=$(basename "$f" .jpg)
  dir=$work/$name
  mkdir -p "$dir/ours" "$dir/vips" "$dir/pyvips"
  echo "[$i/${#files[@]}] $name" >&2

  ours_json=$("$bin" process "$f" --out "$dir/ours" --quality "${QUALITY:-80}" --quantizer "${QUANTIZER:-libjpeg}")
  dw=$(jq -r .displayWidth <<<"$ours_json")
  dh=$(jq -r .displayHeight <<<"$ours_json")
  # Box for a shorter displayed edge of 400: bound the height of a landscape, the width of a portrait.
  if [ "$dw" -ge "$dh" ]; then thumb_box="x400>"; else thumb_box="400x>"; fi
  vips_preview=(vipsthumbnail "$f" --size "2048x2048>" -o "$dir/vips/preview.jpg[Q=80,strip]")
  vips_thumb=(vipsthumbnail "$f" --size "$thumb_box" -o "$dir/vips/thumbnail.jpg[Q=80,strip]")
  ours=("$bin" process "$f" --out "$dir/ours" --quality "${QUALITY:-80}" --quantizer "${QUANTIZER:-libjpeg}")
  pyvips=("$python" "$repo/bench/imaging-pyvips.py" "$f" "$dir/pyvips" "${thumb_box%>}")

  # Wall time: the two sides alternate run by run, so both see the same machine load (the box
  # may be shared), and the median of each is kept. EPOCHREALTIME avoids spawning a clock.
  # pyvips reports its own time (from new_from_file on), in seconds.
  for ((w = 0; w < warmup; w++)); do
    "${ours[@]}" >/dev/null; "${vips_preview[@]}" 2>/dev/null; "${vips_thumb[@]}" 2>/dev/null; "${pyvips[@]}" >/dev/null
  done
  t_ours=(); t_vips=(); t_pyvips=()
  for ((r = 0; r < runs; r++)); do
    s=${EPOCHREALTIME/./}; "${ours[@]}" >/dev/null; e=${EPOCHREALTIME/./}; t_ours+=($((e - s)))
    s=${EPOCHREALTIME/./}; "${vips_preview[@]}" 2>/dev/null; "${vips_thumb[@]}" 2>/dev/null; e=${EPOCHREALTIME/./}; t_vips+=($((e - s)))
    t_pyvips+=("$("${pyvips[@]}" | awk '{printf "%d", $1 * 1e6}')")
  done
  median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2) / 1e6}'; }
  wall_ours=$(median "${t_ours[@]}")
  wall_vips=$(median "${t_vips[@]}")
  wall_pyvips=$(median "${t_pyvips[@]}")

  /usr/bin/time -f %M -o "$dir/rss_ours" "${ours[@]}" >/dev/null 2>&1
  /usr/bin/time -f %M -o "$dir/rss_v1" "${vips_preview[@]}" >/dev/null 2>&1
  /usr/bin/time -f %M -o "$dir/rss_v2" "${vips_thumb[@]}" >/dev/null 2>&1
  rss_ours=$(tail -1 "$dir/rss_ours") rss_v1=$(tail -1 "$dir/rss_v1") rss_v2=$(tail -1 "$dir/rss_v2")

  jq -c --arg name "$name" --arg file "$f" --arg dir "$dir" \
    --argjson rss_ours "$rss_ours" --argjson rss_vips "$(( rss_v1 > rss_v2 ? rss_v1 : rss_v2 ))" \
    --argjson wall_ours "$wall_ours" --argjson wall_vips "$wall_vips" --argjson wall_pyvips "$wall_pyvips" \
    '{name: $name, file: $file, dir: $dir, rss_ours: $rss_ours, rss_vips: $rss_vips,
      wall_ours: $wall_ours, wall_vips: $wall_vips, wall_pyvips: $wall_pyvips,
      ours: .}' <<<"$ours_json" >>"$results"
done

SSIM=$ssim "$python" - "$results" <<'PY'
import json, os, sys

rows = [json.loads(line) for line in open(sys.argv[1])]
from PIL import Image, ImageOps

use_ssim = os.environ.get("SSIM", "1") == "1"
if use_ssim:
    from ssimulacra2 import compute_ssimulacra2

def size(path):
    return os.path.getsize(path)

def reference(original, width, height, cache):
    key = (width, height)
    if key not in cache:
        image = cache.setdefault("image", None)
        if image is None:
            image = ImageOps.exif_transpose(Image.open(original)).convert("RGB")
            cache["image"] = image
        path = os.path.join(cache["dir"], f"ref_{width}x{height}.png")
        image.resize((width, height), Image.LANCZOS).save(path)
        cache[key] = path
    return cache[key]

def score(original, output, cache):
    if not use_ssim:
        return float("nan")
    with Image.open(output) as im:
        w, h = im.size
    return compute_ssimulacra2(reference(original, w, h, cache), output)

def dims(path):
    with Image.open(path) as im:
        return "%dx%d" % im.size

header = ("photo", "wall ours", "wall vips×2", "ratio", "pyvips×1", "ratio", "rss ours", "rss vips", "bytes ours", "bytes vips",
          "saved", "ssim2 T ours/vips", "ssim2 P ours/vips", "thumb ours/vips")
table = []
total = dict(wo=0.0, wv=0.0, wp=0.0, bp=0, bo=0, bv=0, n=0, rss_ok=0, ssim_ok=0, so=0.0, sv=0.0)
for r in rows:
    d = r["dir"]
    cache = {"dir": d}
    o_t, o_p = os.path.join(d, "ours/thumbnail.jpg"), os.path.join(d, "ours/preview.jpg")
    v_t, v_p = os.path.join(d, "vips/thumbnail.jpg"), os.path.join(d, "vips/preview.jpg")
    bo, bv = size(o_t) + size(o_p), size(v_t) + size(v_p)
    st = (score(r["file"], o_t, cache), score(r["file"], v_t, cache))
    sp = (score(r["file"], o_p, cache), score(r["file"], v_p, cache))
    total["wo"] += r["wall_ours"]; total["wv"] += r["wall_vips"]; total["wp"] += r["wall_pyvips"]
    total["bp"] += size(os.path.join(d, "pyvips/thumbnail.jpg")) + size(os.path.join(d, "pyvips/preview.jpg"))
    total["bo"] += bo; total["bv"] += bv; total["n"] += 1
    total["rss_ok"] += r["rss_ours"] <= r["rss_vips"]
    # vips writes CMYK originals as CMYK JPEGs that score far below zero; such photos would
    # swamp the means, so the SSIMULACRA2 totals leave them out (and say how many).
    if use_ssim and min(st[1], sp[1]) < 0:
        total["ssim_skipped"] = total.get("ssim_skipped", 0) + 1
    else:
        total["ssim_n"] = total.get("ssim_n", 0) + 1
        total["ssim_ok"] += (st[0] >= st[1]) and (sp[0] >= sp[1])
        total["outputs_ok"] = total.get("outputs_ok", 0) + (st[0] >= st[1]) + (sp[0] >= sp[1])
        total["so"] += st[0] + sp[0]; total["sv"] += st[1] + sp[1]
        for kind, (ours, vips) in (("thumbnail", st), ("preview", sp)):
            if ours < vips:
                total.setdefault("below", []).append("%s %s %+.2f" % (r["name"], kind, ours - vips))
    table.append((r["name"][:28], "%.0f ms" % (r["wall_ours"] * 1e3), "%.0f ms" % (r["wall_vips"] * 1e3),
                  "%.2f" % (r["wall_ours"] / r["wall_vips"]), "%.0f ms" % (r["wall_pyvips"] * 1e3),
                  "%.2f" % (r["wall_ours"] / r["wall_pyvips"]), "%d MB" % (r["rss_ours"] // 1024),
                  "%d MB" % (r["rss_vips"] // 1024), "%d" % bo, "%d" % bv, "%+.1f%%" % (100.0 * (bv - bo) / bv),
                  "%.1f/%.1f" % st, "%.1f/%.1f" % sp, "%s/%s" % (dims(o_t), dims(v_t))))

widths = [max(len(str(x)) for x in col) for col in zip(header, *table)]
line = lambda cells: "  ".join(str(c).rjust(w) if i else str(c).ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))
print(line(header))
print("  ".join("-" * w for w in widths))
for row in table:
    print(line(row))
n = total["n"]
print()
print("total wall: ours %.2f s, vips %.2f s as two vipsthumbnail processes, two decodes (ratio %.2f, target <= 0.45)"
      % (total["wo"], total["wv"], total["wo"] / total["wv"]))
print("total wall: pyvips %.2f s as one process, one decode, timed from new_from_file (ours/pyvips %.2f)"
      % (total["wp"], total["wo"] / total["wp"]))
print("total bytes: ours %d, vips %d (ours/vips %.3f, target <= 0.91); pyvips %d" % (total["bo"], total["bv"], total["bo"] / total["bv"], total["bp"]))
print("peak RSS <= vips on %d/%d photos" % (total["rss_ok"], n))
if use_ssim:
    m = total.get("ssim_n", 0)
    skipped = total.get("ssim_skipped", 0)
    print("mean SSIMULACRA2: ours %.2f, vips %.2f; ours >= vips on %d/%d outputs, on both outputs for %d/%d photos%s"
          % (total["so"] / max(2 * m, 1), total["sv"] / max(2 * m, 1), total.get("outputs_ok", 0), 2 * m,
             total["ssim_ok"], m, " (%d photo(s) left out: vips output scores below 0)" % skipped if skipped else ""))
    if total.get("below"):
        print("below vips: " + "; ".join(total["below"]))
PY
