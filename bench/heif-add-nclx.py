#!/usr/bin/env python3
# addnclx.py IN OUT PRIMARIES TRANSFER [MATRIX=6] [CLLI]: adds an nclx colr property (and a clli one) to the
# primary item of a heif-enc 1.15 HEIC (which writes none), fixing ipma and iloc (offsets after meta shift).
import struct, sys
src, dst, prim, trc = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
mat = int(sys.argv[5]) if len(sys.argv) > 5 else 6
clli = int(sys.argv[6]) if len(sys.argv) > 6 else None
d = bytearray(open(src, 'rb').read())
def boxes(buf, start, end):
    out = []; i = start
    while i < end:
        size, typ = struct.unpack('>I4s', buf[i:i+8]); out.append((typ.decode(), i, size)); i += size
    return out
def box(t, payload): return struct.pack('>I', len(payload) + 8) + t.encode() + payload
top = boxes(d, 0, len(d))
meta = [b for b in top if b[0] == 'meta'][0]
mb, ms = meta[1], meta[2]
kids = boxes(d, mb + 12, mb + ms)
get = lambda n: [b for b in kids if b[0] == n][0]
pitm = get('pitm'); primary = struct.unpack('>H', d[pitm[1]+12:pitm[1]+14])[0]
iprp = get('iprp'); ik = boxes(d, iprp[1] + 8, iprp[1] + iprp[2])
ipco = [b for b in ik if b[0] == 'ipco'][0]; ipma = [b for b in ik if b[0] == 'ipma'][0]
props = boxes(d, ipco[1] + 8, ipco[1] + ipco[2])
new = [box('colr', b'nclx' + struct.pack('>HHHB', prim, trc, mat, 0x80))]
if clli: new.append(box('clli', struct.pack('>HH', clli, clli // 4)))
newidx = list(range(len(props) + 1, len(props) + 1 + len(new)))
# ipma: version/flags, entry_count, entries
ver = d[ipma[1] + 8]; flags = int.from_bytes(d[ipma[1]+9:ipma[1]+12], 'big')
p = ipma[1] + 12; n = struct.unpack('>I', d[p:p+4])[0]; p += 4
ent = bytearray(struct.pack('>I', n))
for _ in range(n):
    if ver < 1: item = struct.unpack('>H', d[p:p+2])[0]; ib = d[p:p+2]; p += 2
    else: item = struct.unpack('>I', d[p:p+4])[0]; ib = d[p:p+4]; p += 4
    cnt = d[p]; p += 1; w = 2 if flags & 1 else 1
    assoc = d[p:p + cnt * w]; p += cnt * w
    if item == primary:
        for k in newidx: assoc += (bytes([0x80 | k]) if w == 1 else struct.pack('>H', 0x8000 | k))
        cnt += len(newidx)
    ent += ib + bytes([cnt]) + assoc
newipma = box('ipma', bytes(d[ipma[1]+8:ipma[1]+12]) + ent)
newipco = box('ipco', bytes(d[ipco[1]+8:ipco[1]+ipco[2]]) + b''.join(new))
# rebuild iprp in order
parts = []
for b in ik:
    parts.append(newipco if b[0] == 'ipco' else newipma if b[0] == 'ipma' else bytes(d[b[1]:b[1]+b[2]]))
newiprp = box('iprp', b''.join(parts))
delta = len(newiprp) - iprp[2]
# iloc offsets
il = get('iloc'); q = il[1] + 8; v = d[q]; q += 4
os_, ls = d[q] >> 4, d[q] & 15; bs = d[q+1] >> 4; xs = d[q+1] & 15 if v in (1, 2) else 0; q += 2
def rd(k):
    global q
    val = int.from_bytes(d[q:q+k], 'big') if k else 0; return val
cnt = struct.unpack('>H', d[q:q+2])[0] if v < 2 else struct.unpack('>I', d[q:q+4])[0]; q += 2 if v < 2 else 4
for _ in range(cnt):
    q += 2 if v < 2 else 4
    cm = 0
    if v in (1, 2): cm = d[q+1] & 15; q += 2
    q += 2  # data ref
    base = q; q += bs
    ec = struct.unpack('>H', d[q:q+2])[0]; q += 2
    for _ in range(ec):
        q += xs
        if cm == 0 and bs == 0 and os_:
            off = int.from_bytes(d[q:q+os_], 'big'); d[q:q+os_] = (off + delta).to_bytes(os_, 'big')
        q += os_ + ls
    if cm == 0 and bs:
        off = int.from_bytes(d[base:base+bs], 'big'); d[base:base+bs] = (off + delta).to_bytes(bs, 'big')
out = bytes(d[:iprp[1]]) + newiprp + bytes(d[iprp[1] + iprp[2]:])
# meta size
ms2 = ms + delta; out = out[:mb] + struct.pack('>I', ms2) + out[mb+4:]
open(dst, 'wb').write(out)
