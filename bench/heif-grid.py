#!/usr/bin/env python3
"""Writes a grid-tiled HEIC as phones store their 12-48 MP photos (ISO/IEC 23008-12 §6.6.2.3: a `grid`
primary item of 512x512 HEVC tiles), which libheif 1.15's heif-enc does not write: the image is cut into
tiles (the last row and column padded by repeating the edge), each tile encoded by `heif-enc -q Q`, and
their `hvcC` and coded data assembled into one file, the boxes written as Tests/GalleryTestSupport/
HEIFAssembler.swift writes them (the tiles share one `hvcC` property when heif-enc gave each the same).
`heif-info OUT` then lists the grid.

Usage: bench/heif-grid.py IN OUT [--width W --height H] [--tile 512] [--quality 50] [--jobs 2]
  IN is anything Pillow opens; with --width/--height it is resized to that size first (a 48 MP
  iPhone photo is 8064x6048). Needs Pillow and heif-enc."""
import argparse
import concurrent.futures
import os
import subprocess
import sys
import tempfile

from PIL import Image


def u16(v):
    return v.to_bytes(2, "big")


def u32(v):
    return v.to_bytes(4, "big")


def box(kind, payload):
    return u32(len(payload) + 8) + kind.encode() + payload


def full_box(kind, payload, version=0, flags=0):
    return box(kind, bytes([version]) + flags.to_bytes(3, "big") + payload)


def find_box(data, kind):
    at = data.find(kind.encode())
    if at < 4:
        sys.exit(f"heif-grid: no {kind} box in heif-enc's output")
    size = int.from_bytes(data[at - 4:at], "big")
    return data[at - 4:at - 4 + size]


def encode_tile(path, quality):
    out = path + ".heic"
    subprocess.run(["heif-enc", "-q", str(quality), "--no-alpha", "-o", out, path], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    data = open(out, "rb").read()
    return find_box(data, "hvcC"), find_box(data, "mdat")[8:]


def assemble(tiles, columns, rows, width, height, tile):
    """ftyp, meta (hdlr, pitm, iloc, iinf, iref dimg, iprp) and mdat; item 1..n the tiles, n+1 the grid."""
    configs = []
    for hvcc, _ in tiles:
        if hvcc not in configs:
            configs.append(hvcc)
    properties = list(configs) + [full_box("ispe", u32(tile) + u32(tile)), full_box("ispe", u32(width) + u32(height))]
    tile_ispe, grid_ispe = len(configs) + 1, len(configs) + 2
    wide = len(properties) > 127  # property indices over 7 bits: ipma flag 1, 15-bit indices
    grid_id = len(tiles) + 1

    def assoc(index):
        return u16(0x8000 | index) if wide else bytes([0x80 | index])

    ipma = u32(len(tiles) + 1)
    for i, (hvcc, _) in enumerate(tiles):
        ipma += u16(i + 1) + bytes([2]) + assoc(configs.index(hvcc) + 1) + assoc(tile_ispe)
    ipma += u16(grid_id) + bytes([1]) + assoc(grid_ispe)
    iprp = box("iprp", box("ipco", b"".join(properties)) + full_box("ipma", ipma, flags=1 if wide else 0))

    grid_data = bytes([0, 0, rows - 1, columns - 1]) + u16(width) + u16(height)
    items = [(i + 1, "hvc1", data) for i, (_, data) in enumerate(tiles)] + [(grid_id, "grid", grid_data)]
    # Tiles hidden (infe flags 1), as phones write them: readers list only the grid.
    infos = b"".join(full_box("infe", u16(i) + u16(0) + t.encode() + b"\0", version=2, flags=int(t == "hvc1"))
                     for i, t, _ in items)
    iinf = full_box("iinf", u16(len(items)) + infos)
    iref = full_box("iref", box("dimg", u16(grid_id) + u16(len(tiles)) + b"".join(u16(i + 1) for i in range(len(tiles)))))
    ftyp = box("ftyp", b"heic" + u32(0) + b"mif1heic")
    hdlr = full_box("hdlr", u32(0) + b"pict" + u32(0) * 3 + b"\0")

    def meta(data_start):
        iloc = bytes([0x44, 0x00]) + u16(len(items))
        offset = data_start
        for item_id, _, data in items:
            iloc += u16(item_id) + u16(0) + u16(1) + u32(offset) + u32(len(data))
            offset += len(data)
        return full_box("meta", hdlr + full_box("pitm", u16(grid_id)) + full_box("iloc", iloc) + iinf + iref + iprp)

    start = len(ftyp) + len(meta(0)) + 8
    return ftyp + meta(start) + box("mdat", b"".join(data for _, _, data in items))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--width", type=int)
    p.add_argument("--height", type=int)
    p.add_argument("--tile", type=int, default=512)
    p.add_argument("--quality", type=int, default=50)
    p.add_argument("--jobs", type=int, default=2)
    a = p.parse_args()
    image = Image.open(a.input).convert("RGB")
    if a.width and a.height:
        image = image.resize((a.width, a.height), Image.LANCZOS)
    width, height = image.size
    if width > 65535 or height > 65535:
        sys.exit("heif-grid: at most 65535 on a side")
    columns, rows = -(-width // a.tile), -(-height // a.tile)
    if columns > 256 or rows > 256:
        sys.exit("heif-grid: at most 256 tiles a side; use a larger --tile")
    padded = Image.new("RGB", (columns * a.tile, rows * a.tile))
    padded.paste(image, (0, 0))
    if columns * a.tile > width:  # repeat the edge, as encoders pad
        padded.paste(image.crop((width - 1, 0, width, height)).resize((columns * a.tile - width, height)), (width, 0))
    if rows * a.tile > height:
        padded.paste(padded.crop((0, height - 1, columns * a.tile, height)).resize((columns * a.tile, rows * a.tile - height)), (0, height))
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for r in range(rows):
            for c in range(columns):
                path = os.path.join(tmp, f"t{r:03d}_{c:03d}.png")
                padded.crop((c * a.tile, r * a.tile, (c + 1) * a.tile, (r + 1) * a.tile)).save(path)
                paths.append(path)
        with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
            tiles = list(pool.map(lambda path: encode_tile(path, a.quality), paths))
    data = assemble(tiles, columns, rows, width, height, a.tile)
    with open(a.output, "wb") as f:
        f.write(data)
    configs = len({hvcc for hvcc, _ in tiles})
    print(f"{a.output}: {width}x{height}, grid {columns}x{rows} of {a.tile}x{a.tile} tiles ({configs} hvcC), {len(data)} bytes")


if __name__ == "__main__":
    main()
