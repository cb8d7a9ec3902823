#!/usr/bin/env python3
"""Sweeps progressive scan options per group of scans (decision 061).

    bench/imaging-scan-sweep.py sweep OUT.json FILE.jpg...   # jpegtran -optimize -scans, 21 probe scripts each
    bench/imaging-scan-sweep.py table OUT.json               # mean size over the fixed script's per option set

A file's scans fall into independent groups (DC; each component's AC scans): with optimized
Huffman coding every scan carries its own tables, so a group's bytes do not depend on the others.
Each probe script pairs one luma option (split after 1, 2, 3, 5, 8, 12 or none; Al 0, 1 or 2) with
one chroma option (split after 1, 2, 3, 5, 8 or none; Al 0 or 1) and DC together or per component;
the file written with it is cut at its scans and each group's bytes recorded. The input files must
have been written with galleryd's fixed script (JPEGEncoder.colorScans / grayScans).
"""
import json, os, struct, subprocess, sys, tempfile, threading
from concurrent.futures import ThreadPoolExecutor


def scans(data):
    """(header bytes, [(component ids, Ss, Se, Ah, Al, bytes of DHTs + SOS + data)])."""
    i, out, start, header = 2, [], None, None
    while i < len(data):
        marker = data[i + 1]
        if marker == 0xD9:
            break
        length = struct.unpack('>H', data[i + 2:i + 4])[0]
        if marker in (0xC4, 0xDA) and start is None:
            start = i
            header = i if header is None else header
        if marker == 0xDA:
            ns = data[i + 4]
            comps = tuple(data[i + 5 + 2 * k] for k in range(ns))
            p = i + 5 + 2 * ns
            j = i + 2 + length
            while not (data[j] == 0xFF and data[j + 1] != 0 and not 0xD0 <= data[j + 1] <= 0xD7):
                j += 1
            out.append((comps, data[p], data[p + 1], data[p + 2] >> 4, data[p + 2] & 15, j - start))
            start, i = None, j
            continue
        i += 2 + length
    return header, out


def band(component, split, al):
    s = [f"{component}: 1 63 0 {al};"] if split == 63 else [f"{component}: 1 {split} 0 {al};", f"{component}: {split + 1} 63 0 {al};"]
    return s + [f"{component}: 1 63 {a} {a - 1};" for a in range(al, 0, -1)]


LUMA = [(s, a) for s in (1, 2, 3, 5, 8, 12, 63) for a in (0, 1, 2)]
CHROMA = [(s, a) for s in (1, 2, 3, 5, 8, 63) for a in (0, 1)]
FIXED = {'D': '0', 'L': '8,1', 'C': '8,0'}


def probe(path):
    data = open(path, 'rb').read()
    sof = data.find(b'\xff\xc2')
    gray = data[sof + 9] == 1
    result = {'size': len(data), 'L': {}, 'Cb': {}, 'Cr': {}, 'D': {}}
    script = os.path.join(tempfile.gettempdir(), f'scan-sweep-{os.getpid()}-{threading.get_ident()}.txt')
    for k, (ls, la) in enumerate(LUMA):
        cs, ca = CHROMA[k % len(CHROMA)]
        dc = k % 2
        lines = ["0: 0 0 0 0;"] if gray else (["0: 0 0 0 0;", "1: 0 0 0 0;", "2: 0 0 0 0;"] if dc else ["0,1,2: 0 0 0 0;"])
        lines += band(0, ls, la) + ([] if gray else band(1, cs, ca) + band(2, cs, ca))
        open(script, 'w').write("\n".join(lines) + "\n")
        out = subprocess.run(['jpegtran', '-optimize', '-scans', script, path], capture_output=True, check=True).stdout
        groups = {'L': 0, 'Cb': 0, 'Cr': 0, 'D': 0}
        for comps, ss, _, _, _, n in scans(out)[1]:
            groups['D' if ss == 0 else {1: 'L', 2: 'Cb', 3: 'Cr'}[comps[0]]] += n
        result['L'][f'{ls},{la}'] = groups['L']
        result['D'][str(0 if gray else dc)] = groups['D']
        if not gray:
            result['Cb'][f'{cs},{ca}'] = groups['Cb']
            result['Cr'][f'{cs},{ca}'] = groups['Cr']
    os.unlink(script)
    return path, result


def ratio(r, chosen):
    """Size with the smallest option of `chosen` per group, over the fixed script's file."""
    fixed = r['D'][FIXED['D']] + r['L'][FIXED['L']] + (r['Cb'][FIXED['C']] + r['Cr'][FIXED['C']] if r['Cb'] else 0)
    size = r['size'] - fixed + min(r['D'][o] for o in chosen['D'] if o in r['D']) + min(r['L'][o] for o in chosen['L'])
    if r['Cb']:
        size += min(r['Cb'][o] for o in chosen['C']) + min(r['Cr'][o] for o in chosen['C'])
    return size / r['size']


def table(results):
    everything = {'D': ['0', '1'], 'L': [f'{s},{a}' for s, a in LUMA], 'C': [f'{s},{a}' for s, a in CHROMA]}
    sets = [
        ('the fixed script', {'D': ['0'], 'L': ['8,1'], 'C': ['8,0']}),
        ('+ DC per component', {'D': ['0', '1'], 'L': ['8,1'], 'C': ['8,0']}),
        ('+ probe 1', {'D': ['0', '1'], 'L': ['8,1', '2,0'], 'C': ['8,0', '2,0']}),
        ('+ probes 1 and 2', {'D': ['0', '1'], 'L': ['8,1', '2,0', '2,1'], 'C': ['8,0', '2,0', '63,0']}),
        ('+ 4 options per group', {'D': ['0', '1'], 'L': ['8,1', '2,0', '2,1', '1,1'], 'C': ['8,0', '2,0', '63,0', '2,1']}),
        ('every option', everything),
    ]
    for name, chosen in sets:
        def mean(kind):
            values = [ratio(r, chosen) for f, r in results.items() if kind in os.path.basename(f)]
            return sum(values) / len(values)
        print(f'| {name} | {mean(".jpg"):.4f} | {mean("preview"):.4f} | {mean("thumbnail"):.4f} |')


if __name__ == '__main__':
    if sys.argv[1] == 'sweep':
        with ThreadPoolExecutor(2) as pool:
            json.dump(dict(pool.map(probe, sys.argv[3:])), open(sys.argv[2], 'w'))
    else:
        table(json.load(open(sys.argv[2])))
