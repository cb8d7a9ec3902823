import sys, json, os, subprocess, numpy as np
from PIL import Image
BIN=sys.argv[1]
dune=json.load(open('state-h420-r2.json'))
qd=Image.open('/work/s26/bset/OUT/main/dune_canon_1680x1050-4032x3024-q80.heic/preview.jpg').quantization
R=[np.array(t).reshape(8,8)/np.array(qd[min(i,1)]).reshape(8,8) for i,t in enumerate(dune['tables'])]
rec={}
for f in ('rule-bench.jsonl','rule-hset.jsonl'):
    for l in open(f): r=json.loads(l); rec[r['name']]=(f,r)
bad=0
for name,(f,r) in rec.items():
    if f=='rule-bench.jsonl': S='/work/s26/bset'; mainp=f'{S}/OUT/main/{name}/preview.jpg'
    else: S='/work/s26-d26-data/hset'; mainp=f'/work/s26-d26-data/hout/{name}/preview.jpg'
    o=f'/work/s26-d26-data/newout/{name}'; os.makedirs(o,exist_ok=True)
    subprocess.run([BIN,f'{S}/FX/{name}','--out',o],check=True,stdout=open(f'{o}/out.json','w'))
    q=Image.open(mainp).quantization; Y=np.array(q[0]).reshape(8,8); C=np.array(q[1]).reshape(8,8)
    exp=[np.clip(np.round(t*0.93),1,255).astype(int).flatten().tolist() for t in (Y*R[0],C*R[1],C*R[2])]
    n=Image.open(f'{o}/preview.jpg'); got=[list(n.quantization[i]) for i in sorted(n.quantization)]
    comp=[c[3] for c in n.layer] if hasattr(n,'layer') else None
    ok = got==exp and comp==[0,1,2]
    pred=r['C3x0.93'][0]; vb=json.load(open(f'{S}/scores.json'))[f'vips|{name}|preview'][0]
    act=os.path.getsize(f'{o}/preview.jpg')/vb
    thumb_same = open(f'{o}/thumbnail.jpg','rb').read()==open(mainp.replace('preview.jpg','thumbnail.jpg'),'rb').read()
    import io
    src=Image.open(f'{S}/RUN/{name}/decoded.png').convert('RGB'); b=io.BytesIO()
    src.save(b,'JPEG',qtables=got,subsampling='4:2:0',progressive=True,optimize=True)
    px=int(np.abs(np.asarray(Image.open(b).convert('RGB')).astype(int)-np.asarray(n.convert('RGB')).astype(int)).max())
    ok = ok and px==0
    print(f"px {px} ",end='')
    print(f"{name[:44]:44s} tables {'OK' if ok else 'DIFF'} comps {comp} bytes/vips actual {act:.4f} predicted {pred:.4f} thumb-same {thumb_same}",flush=True)
    bad+= not ok
print('mismatches',bad)
