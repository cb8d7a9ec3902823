#!/usr/bin/env bash
# Imaging bench for the formats phones make besides JPEG (#28): `galleryd process` against two
# `vipsthumbnail` runs (preview, then thumbnail: two decodes, as bench/imaging.sh) on
#   a 12 MP HEIC (4032×3024), a 1170×2532 PNG screenshot and a 4000×3000 WebP, made from each photo
#   of PHOTO_DIR (default PHOTOS_DIR, else the repository's samples/photos) that SOURCES names (file names, space
#   separated; default SOURCE, default every .jpg there; a photo smaller than a fixture gives
#   a smaller fixture: nothing is enlarged), FORMATS of them (default "heic png webp"), and
#   with BIG=1, a 48 MP HEIC (8064×6048) for peak RSS.
# It prints, per file: median wall time of each side over RUNS alternating rounds (WARMUP first),
# peak RSS (/usr/bin/time -f %M) of ours and of the larger vips run, the CPU seconds (user + system)
# of that one run of ours and of the two vips runs (steadier than wall time on a loaded machine),
# the derivatives' bytes and their ratio, the decode time alone (medians, ms; below), and
# SSIMULACRA2 (PyPI `ssimulacra2`, SSIM=0 skips it) of each side's
# thumbnail and preview against a reference made as bench/imaging.sh makes it: the original decoded
# by its own tool (`heif-convert`/`dwebp` to PNG; a PNG as it is), then PIL Lanczos to that output's
# exact size. The run directory (KEEP=1 keeps it) has results.jsonl and the references, so
# bench/imaging-oracle.py runs on it as on an imaging.sh run. Last, per format: the bytes of
# all its files against vips', and how many outputs scored below vips'.
# The decode columns (decision 066), each the decode alone, in-process where the tool can say so:
#   lap_dec   the pipeline's own "decode" lap (`ms.decode` of `process`). NOT a decode time for a
#             WebP or a non-interlaced PNG: those are decoded while resampled, so the lap is the
#             header parse and the decode is inside "resize". Kept to show that; HEIC's is whole.
#   dec_ours  bench/imaging-decode.swift (DECODER; bench/imaging-process.sh builds it): the
#             pipeline's own decoder for the pipeline's plan, every row drained and discarded: a
#             WebP shrunk by libwebp to the preview's size (as the pipeline asks), PNG rows, HEIC
#             whole (libheif, to interleaved RGB).
#   dec_tool  the same decode by the library's own tool, at the same size: `dwebp -mt -resize W H`
#             (its `-v` "Time to decode picture", in-process); `heif-convert` to Y4M (wall time,
#             with its start and the Y4M write; it skips the YCbCr→RGB conversion ours does);
#             PNG: Pillow's `Image.load()` (zlib and unfilter in C, in-process; `vips copy` to .v,
#             wall time, without the venv).
#   full_o/full_t  a WebP decoded at its full size: `imaging-decode --full` and `dwebp -mt`
#             (`-v`); "-" for formats always decoded at full size (then dec_* are full size).
#   RUNS=5 WARMUP=1 BIG=1 FIXTURES=/tmp/formats bench/imaging-formats.sh [PHOTO_DIR]
#   RUNS=1 WARMUP=0 FORMATS="png webp" SOURCES="kleiber_6028x3391.jpg dune_canon_1680x1050.jpg" bench/imaging-formats.sh <photos>
# Needs heif-enc/heif-convert (libheif-examples), cwebp/dwebp (webp), vips, jq, /usr/bin/time and
# .build-venv-bench (ssimulacra2, Pillow): scripts/deps.sh --bench and scripts/deps.sh.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
photos=${1:-${PHOTOS_DIR:-$repo/samples/photos}}
read -r -a sources <<<"${SOURCES:-${SOURCE:-$(cd "$photos" && ls -- *.jpg | tr '\n' ' ')}}"
read -r -a formats <<<"${FORMATS:-heic png webp}"
runs=${RUNS:-5}
warmup=${WARMUP:-1}
bin=${GALLERYD:-$repo/.build/release/galleryd}
python=${PYTHON:-$repo/.build-venv-bench/bin/python}
ssim=${SSIM:-1}
if [ "$ssim" = 1 ] && ! "$python" -c 'import ssimulacra2, PIL' 2>/dev/null; then
  echo "imaging-formats.sh: $python with ssimulacra2 is missing (scripts/deps.sh --bench; SSIM=0 skips scores)" >&2
  exit 1
fi

for tool in vips vipsthumbnail heif-enc heif-convert cwebp dwebp jq; do
  command -v "$tool" >/dev/null || { echo "imaging-formats.sh: $tool is missing (scripts/deps.sh --bench)" >&2; exit 1; }
done
[ -x "$bin" ] || (cd "$repo" && swift build -c release --static-swift-stdlib --product galleryd >&2)
decoder=${DECODER:-$repo/.build-rel/imaging-decode}
[ -x "$decoder" ] || (cd "$repo" && SCRATCH=.build-rel bench/imaging-process.sh >/dev/null)
pil=0
"$python" -c 'import PIL' 2>/dev/null && pil=1

work=$(mktemp -d /tmp/imaging-formats.XXXXXX)
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT

# Fixtures: each source photo cropped and scaled down to each size, then encoded as a phone
# would, named <photo>-<kind>; kept in FIXTURES (default: the temporary directory) and made only
# when missing there.
fixtures=${FIXTURES:-$work}
mkdir -p "$fixtures"
files=()
make_fixture() {  # SOURCE NAME WIDTH HEIGHT ENCODER...
  local source=$1 name=$2 width=$3 height=$4; shift 4
  files+=("$fixtures/$name")
  [ -s "$fixtures/$name" ] && return
  vips thumbnail "$photos/$source" "$work/source.png" "$width" --height "$height" --crop centre --size down
  "$@" "$work/source.png" "$fixtures/$name"
}
heic() { heif-enc -q 80 -o "$2" "$1" >/dev/null; }
webp() { cwebp -quiet -q 80 "$1" -o "$2"; }
for source in "${sources[@]}"; do
  stem=${source%.*}
  for format in "${formats[@]}"; do
    case $format in
      heic) make_fixture "$source" "$stem-photo-12mp.heic" 4032 3024 heic ;;
      png) make_fixture "$source" "$stem-screenshot-1170x2532.png" 1170 2532 cp ;;
      webp) make_fixture "$source" "$stem-photo-4000x3000.webp" 4000 3000 webp ;;
      *) echo "imaging-formats.sh: unknown format $format (heic, png, webp)" >&2; exit 1 ;;
    esac
  done
  [ "${BIG:-0}" = 1 ] && make_fixture "$source" "$stem-photo-48mp.heic" 8064 6048 heic
done

declare -A total_ours total_vips below
wall() { local s=${EPOCHREALTIME/./}; "$@" >/dev/null 2>&1; echo $((${EPOCHREALTIME/./} - s)); }
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2) / 1e3}'; }
# Microseconds from dwebp's "-v" report ("Time to decode picture: 0.123s").
dwebp_us() { dwebp -v "$@" 2>&1 | awk '/Time to decode picture/ {sub(/s$/, "", $NF); print int($NF * 1e6)}'; }
printf '%-48s %8s %8s %6s %9s %9s %7s %7s %7s %7s %6s %7s %8s %8s %7s %7s %13s %13s\n' file ours_ms vips_ms ratio rss_ours \
  rss_vips cpu_o_s cpu_v_s kB_ours kB_vips bytes lap_dec dec_ours dec_tool full_o full_t ssim2_T_o/v ssim2_P_o/v
for f in "${files[@]}"; do
  name=$(basename "$f")
  dir=$work/out-$name
  mkdir -p "$dir/ours" "$dir/vips"
  json=$("$bin" process "$f" --out "$dir/ours")
  dw=$(jq -r .displayWidth <<<"$json")
  dh=$(jq -r .displayHeight <<<"$json")
  if [ "$dw" -ge "$dh" ]; then box="x400>"; else box="400x>"; fi
  ours=("$bin" process "$f" --out "$dir/ours")
  v1=(vipsthumbnail "$f" --size "2048x2048>" -o "$dir/vips/preview.jpg[Q=80,strip]")
  v2=(vipsthumbnail "$f" --size "$box" -o "$dir/vips/thumbnail.jpg[Q=80,strip]")
  # The decode alone (see the header): ours and the tool's, each at the size the pipeline decodes
  # at; for a WebP also both at full size. Each prints microseconds.
  size=$("$decoder" "$f" | jq -r '"\(.width) \(.height)"')
  dec_ours=("$decoder" "$f")
  full_ours=(); full_tool=()
  case $name in
    *.heic) dec_tool=(wall heif-convert "$f" "$dir/decoded.y4m") ;;
    *.webp)
      # shellcheck disable=SC2206 # the size is two numbers
      dec_tool=(dwebp_us -mt "$f" -resize ${size} -ppm -o "$dir/decoded.ppm")
      full_ours=("$decoder" "$f" --full)
      full_tool=(dwebp_us -mt "$f" -ppm -o "$dir/decoded.ppm") ;;
    *)
      if [ "$pil" = 1 ]; then
        dec_tool=("$python" -c 'import sys, time
from PIL import Image
im = Image.open(sys.argv[1]); s = time.perf_counter(); im.load(); print(int((time.perf_counter() - s) * 1e6))' "$f")
      else
        dec_tool=(wall vips copy "$f" "$dir/decoded.v")
      fi ;;
  esac
  for ((w = 0; w < warmup; w++)); do
    "${ours[@]}" >/dev/null; "${v1[@]}"; "${v2[@]}"; "${dec_ours[@]}" >/dev/null; "${dec_tool[@]}" >/dev/null
  done
  t_ours=(); t_vips=(); d_lap=(); d_ours=(); d_tool=(); f_ours=(); f_tool=()
  for ((r = 0; r < runs; r++)); do
    s=${EPOCHREALTIME/./}; out=$("${ours[@]}"); e=${EPOCHREALTIME/./}; t_ours+=($((e - s)))
    d_lap+=("$(jq '.ms.decode * 1000 | floor' <<<"$out")")
    s=${EPOCHREALTIME/./}; "${v1[@]}"; "${v2[@]}"; e=${EPOCHREALTIME/./}; t_vips+=($((e - s)))
    d_ours+=("$("${dec_ours[@]}" | jq '.ms.decode * 1000 | floor')")
    d_tool+=("$("${dec_tool[@]}")")
    if [ ${#full_ours[@]} -gt 0 ]; then
      f_ours+=("$("${full_ours[@]}" | jq '.ms.decode * 1000 | floor')")
      f_tool+=("$("${full_tool[@]}")")
    fi
  done
  full=("-" "-")
  [ ${#f_ours[@]} -gt 0 ] && full=("$(printf %.1f "$(median "${f_ours[@]}")")" "$(printf %.1f "$(median "${f_tool[@]}")")")
  /usr/bin/time -f '%M %U %S' -o "$dir/time_ours" "${ours[@]}" >/dev/null
  /usr/bin/time -f '%M %U %S' -o "$dir/time_v1" "${v1[@]}"
  /usr/bin/time -f '%M %U %S' -o "$dir/time_v2" "${v2[@]}"
  rss_ours=$(awk '{print $1}' "$dir/time_ours")
  rss_vips=$(awk '{print $1}' "$dir/time_v1" "$dir/time_v2" | sort -n | tail -1)
  cpu_ours=$(awk '{print $2 + $3}' "$dir/time_ours")
  cpu_vips=$(awk '{s += $2 + $3} END {print s}' "$dir/time_v1" "$dir/time_v2")
  b_ours=$(( $(stat -c %s "$dir/ours/preview.jpg") + $(stat -c %s "$dir/ours/thumbnail.jpg") ))
  b_vips=$(( $(stat -c %s "$dir/vips/preview.jpg") + $(stat -c %s "$dir/vips/thumbnail.jpg") ))
  ext=${name##*.}
  total_ours[$ext]=$(( ${total_ours[$ext]:-0} + b_ours ))
  total_vips[$ext]=$(( ${total_vips[$ext]:-0} + b_vips ))
  wo=$(median "${t_ours[@]}"); wv=$(median "${t_vips[@]}")
  scores=("-" "-")
  if [ "$ssim" = 1 ]; then
    case $name in
      # heif-convert leaves an empty PNG (exit 0) when libpng refuses the file's ICC profile ("known
      # incorrect sRGB profile": flower's and path's HEICs); vips decodes those, the profile stripped
      # (on china, pixel for pixel heif-convert's).
      *.heic)
        heif-convert "$f" "$dir/decoded.png" >/dev/null 2>&1 || true
        [ -s "$dir/decoded.png" ] || vips copy "$f" "$dir/decoded.png[strip]" ;;
      *.webp) dwebp -quiet "$f" -o "$dir/decoded.png" ;;
      *) cp "$f" "$dir/decoded.png" ;;
    esac
    jq -cn --arg name "$name" --arg file "$f" --arg dir "$dir" '{name: $name, file: $file, dir: $dir}' >>"$work/results.jsonl"
    mapfile -t scores < <("$python" - "$dir" <<'PY'
import os, sys
from PIL import Image
from ssimulacra2 import compute_ssimulacra2
d = sys.argv[1]
original = Image.open(os.path.join(d, "decoded.png")).convert("RGB")
def score(path):
    with Image.open(path) as im:
        w, h = im.size
    ref = os.path.join(d, "ref_%dx%d.png" % (w, h))
    if not os.path.exists(ref):
        original.resize((w, h), Image.LANCZOS).save(ref)
    return compute_ssimulacra2(ref, path)
for kind in ("thumbnail", "preview"):
    print("%.2f/%.2f" % (score(os.path.join(d, "ours", kind + ".jpg")), score(os.path.join(d, "vips", kind + ".jpg"))))
PY
)
  fi
  for s in "${scores[@]}"; do
    [ "$s" = - ] || below[$ext]=$(( ${below[$ext]:-0} + $(awk -F/ '{print ($1 < $2)}' <<<"$s") ))
  done
  printf '%-48s %8.0f %8.0f %6.2f %8sk %8sk %7.2f %7.2f %7d %7d %6.3f %7.1f %8.1f %8.1f %7s %7s %13s %13s\n' "$name" \
    "$wo" "$wv" "$(awk "BEGIN {print $wo / $wv}")" "$rss_ours" "$rss_vips" "$cpu_ours" "$cpu_vips" $((b_ours / 1024)) \
    $((b_vips / 1024)) "$(awk "BEGIN {print $b_ours / $b_vips}")" "$(median "${d_lap[@]}")" "$(median "${d_ours[@]}")" \
    "$(median "${d_tool[@]}")" "${full[0]}" "${full[1]}" "${scores[0]}" "${scores[1]}"
done
for ext in "${!total_ours[@]}"; do
  printf '%s: bytes %d / %d = %.3f× vips, %s outputs scored below vips\n' "$ext" "${total_ours[$ext]}" "${total_vips[$ext]}" \
    "$(awk "BEGIN {print ${total_ours[$ext]} / ${total_vips[$ext]}}")" "${below[$ext]:-0}"
done
