#!/usr/bin/env bash
# Cold `s` render CPU without the server, in a release build of the Imaging target only (a release
# build of the whole server takes far longer): bench/sizes-render.swift linked against it.
# Usage: bench/sizes-render.sh ORIGINAL.jpg — prints the median CPU per render from the preview and
# from the thumbnail (the server takes the thumbnail when it holds twice the size, as for `s`).
set -euo pipefail
cd "$(dirname "$0")/.."
original="${1:?usage: bench/sizes-render.sh ORIGINAL.jpg}"
scratch="${SCRATCH:-.build-rel}"
swift build -c release --target Imaging --scratch-path "$scratch" >&2
r="$scratch/x86_64-unknown-linux-gnu/release"
s=Sources
tmp="$(mktemp -d /tmp/galleryd-sizes-render.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
maps=()
for m in CJPEG CPNG CWebP CHeif CZlib; do maps+=(-Xcc "-fmodule-map-file=$s/$m/module.modulemap"); done
swiftc -O bench/sizes-render.swift -I "$r/Modules" -Xcc "-fmodule-map-file=$r/CJPEGShim.build/module.modulemap" "${maps[@]}" \
  -Xcc "-I$s/CJPEGShim/include" "$r"/Imaging.build/*.o "$r"/CJPEGShim.build/*.o "$r"/CivilCalendar.build/*.o \
  -ljpeg -lpng -lwebp -lheif -lz -o "$tmp/sizes-render" 2>&1 | grep -v warning >&2 || true
"$tmp/sizes-render" "$original"
"$tmp/sizes-render" "$original" thumbnail
