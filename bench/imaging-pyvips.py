"""Single-process libvips anchor for bench/imaging.sh: both derivatives from one decode.

    imaging-pyvips.py ORIGINAL OUT_DIR THUMB_BOX     (THUMB_BOX: "x400" or "400x", as imaging.sh)

One `new_from_file` (random access: decoded once, then held), with the JPEG shrink-on-load
vips_thumbnail would pick for the 2048 preview (the largest of 1, 2, 4, 8 that still leaves at
least twice the preview, vips' own margin), then `thumbnail_image` for each size from that one
image (auto-rotated, Lanczos-3, never enlarging) and `jpegsave` at Q80 with metadata stripped,
like the vipsthumbnail runs. Prints the seconds from `new_from_file` to the second file written:
interpreter start-up and `import pyvips` are left out, so the anchor is libvips' own work.
"""
import sys
import time

import pyvips

original, out_dir, thumb_box = sys.argv[1:4]
pyvips.cache_set_max(0)  # every run decodes again, as a new process would

start = time.perf_counter()
header = pyvips.Image.new_from_file(original)  # the header only; pixels are read on first use
long_edge = max(header.width, header.height)
shrink = 1
while shrink < 8 and long_edge / (shrink * 2) >= 2 * 2048:
    shrink *= 2
image = pyvips.Image.new_from_file(original, shrink=shrink) if shrink > 1 else header
# One decode: `copy_memory` renders the (shrunk) original once; both sizes are made from it.
image = image.copy_memory()
big = 10_000_000
preview = image.thumbnail_image(2048, height=2048, size="down")
preview.jpegsave(f"{out_dir}/preview.jpg", Q=80, strip=True)
if thumb_box.startswith("x"):
    thumbnail = image.thumbnail_image(big, height=int(thumb_box[1:]), size="down")
else:
    thumbnail = image.thumbnail_image(int(thumb_box[:-1]), height=big, size="down")
thumbnail.jpegsave(f"{out_dir}/thumbnail.jpg", Q=80, strip=True)
print("%.6f" % (time.perf_counter() - start))
