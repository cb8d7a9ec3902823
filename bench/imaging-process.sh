#!/usr/bin/env bash
# Builds bench/imaging-process.swift against a release build of the Imaging target only (as
# bench/sizes-render.sh does: a release build of the whole server takes far longer) and prints the
# binary's path, for GALLERYD=… bench/imaging-formats.sh on a machine where that matters. Beside it,
# imaging-decode (bench/imaging-decode.swift, the decode alone for imaging-formats.sh's decode
# columns), compiled with the Imaging sources in one module because the decoders are internal.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch="${SCRATCH:-.build-rel}"
swift build -c release --target Imaging --scratch-path "$scratch" >&2
r="$scratch/x86_64-unknown-linux-gnu/release"
s=Sources
out="$scratch/imaging-process"
maps=()
for m in CJPEG CPNG CWebP CHeif CZlib; do maps+=(-Xcc "-fmodule-map-file=$s/$m/module.modulemap"); done
for m in CJPEGShim CPNGShim CResampleKernels; do maps+=(-Xcc "-fmodule-map-file=$r/$m.build/module.modulemap" -Xcc "-I$s/$m/include"); done
swiftc -O bench/imaging-process.swift -I "$r/Modules" "${maps[@]}" "$r"/Imaging.build/*.o "$r"/CJPEGShim.build/*.o \
  "$r"/CPNGShim.build/*.o "$r"/CResampleKernels.build/*.o "$r"/CivilCalendar.build/*.o "$r"/Logging.build/*.o -ljpeg -lpng16 -lwebp -lwebpdemux -lheif -lz -o "$out" 2>&1 \
  | grep -v warning >&2 || true
swiftc -O -wmo -swift-version 6 -parse-as-library -module-name ImagingDecode bench/imaging-decode.swift \
  Sources/Imaging/*.swift -I "$r/Modules" "${maps[@]}" "$r"/CJPEGShim.build/*.o "$r"/CPNGShim.build/*.o \
  "$r"/CResampleKernels.build/*.o "$r"/CivilCalendar.build/*.o "$r"/Logging.build/*.o -ljpeg -lpng16 -lwebp -lwebpdemux -lheif -lz \
  -o "$scratch/imaging-decode" 2>&1 | grep -v warning >&2 || true
[ -x "$scratch/imaging-decode" ] || { echo "imaging-process.sh: imaging-decode did not build" >&2; exit 1; }
echo "$out"
