#!/usr/bin/env python3
# hdr-from-photo.py SRC OUT.png W H pq|hlg [K=3]: decision 074's real-photo fixture (needs numpy, Pillow:
# the bench venv). Then heif-enc -b 10 OUT.png and bench/heif-add-nclx.py for the colr box.
# A photo resized to WxH as a 16-bit PNG of PQ (or HLG) code values:
# sRGB -> linear, SDR white at 203 cd/m2, highlights expanded (L * (1 + K L^2): white 812 cd/m2 at K = 3), BT.709 -> BT.2020.
import sys, numpy as np
from PIL import Image
src, out, w, h, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
im = Image.open(src).convert('RGB').resize((w, h), Image.LANCZOS)
v = np.asarray(im).astype(np.float32) / 255
lin = np.where(v <= 0.04045, v / 12.92, ((v + 0.055) / 1.055) ** 2.4)
M = np.array([[0.6274, 0.3293, 0.0433], [0.0691, 0.9195, 0.0114], [0.0164, 0.0880, 0.8956]], np.float32)
lin = lin @ M.T
K = float(sys.argv[6]) if len(sys.argv) > 6 else 3.0
nits = 203 * lin * (1 + K * lin * lin)
if mode == 'pq':
    m1, m2, c1, c2, c3 = 2610/16384, 2523/4096*128, 3424/4096, 2413/4096*32, 2392/4096*32
    y = np.clip(nits / 10000, 0, 1) ** m1
    code = ((c1 + c2 * y) / (1 + c3 * y)) ** m2
else:
    yd = nits @ np.array([0.2627, 0.6780, 0.0593], np.float32)
    ys = np.maximum(yd / 1000, 1e-9) ** (1 / 1.2)
    e = np.clip(nits / (1000 * ys[..., None] ** 0.2), 0, 1)
    a = 0.17883277; b = 1 - 4 * a; c = 0.5 - a * np.log(4 * a)
    code = np.where(e <= 1 / 12, np.sqrt(3 * e), a * np.log(np.maximum(12 * e - b, 1e-9)) + c)
arr = np.clip(np.round(code * 65535), 0, 65535).astype('>u2')
import zlib, struct
raw = b''.join(b'\0' + arr[y].tobytes() for y in range(h))
def chunk(t, d): return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
open(out, 'wb').write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 16, 2, 0, 0, 0)) + chunk(b'IDAT', zlib.compress(raw, 6)) + chunk(b'IEND', b''))
