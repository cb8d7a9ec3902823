import sys, json, math, os, subprocess, numpy as np
from PIL import Image
from ev import Evaluator
which=sys.argv[1]; Fs=[float(x) for x in sys.argv[2].split(',')]
dune=json.load(open('state-h420-r2.json'))
qd=Image.open('/work/s26/bset/OUT/main/dune_canon_1680x1050-4032x3024-q80.heic/preview.jpg').quantization
R=[np.array(t).reshape(8,8)/np.array(qd[min(i,1)]).reshape(8,8) for i,t in enumerate(dune['tables'])]
if which=='bench':
    S='/work/s26/bset'; sc=json.load(open(f'{S}/scores.json'))
    names=[l.split('|')[1].strip() for l in open('/work/s26/run-main.txt') if l.startswith('| ') and ('flat' in l.split('|')[2] or 'near' in l.split('|')[2]) and 'test_gray' not in l]
    prev=lambda n: f'{S}/OUT/main/{n}/preview.jpg'
else:
    S='/work/s26-d26-data/hset'; sc=json.load(open(f'{S}/scores.json'))
    names=sorted(os.listdir(f'{S}/RUN'))
    def prev(n):
        o=f'/work/s26-d26-data/hout/{n}'
        if not os.path.exists(f'{o}/preview.jpg'):
            os.makedirs(o,exist_ok=True)
            subprocess.run(['/work/main/.build-rel/imaging-process',f'{S}/FX/{n}','--out',o],check=True,stdout=open(f'{o}/out.json','w'))
        return f'{o}/preview.jpg'
out=open(f'rule-{which}.jsonl','a')
for name in names:
    d=f'{S}/RUN/{name}'
    p=prev(name); im=Image.open(p); w,h=im.size
    if (w,h)!=Image.open(f'{d}/decoded.png').size or len(im.quantization)<2: continue
    E=Evaluator(name, f'cache-rule-{which}-{name}.txt', ref=f'{d}/ref_{w}x{h}.png', d=d)
    q=im.quantization; Y=np.array(q[0]).reshape(8,8); C=np.array(q[1]).reshape(8,8)
    b0,s0=E([Y.flatten(),C.flatten(),C.flatten()])
    tb=os.path.getsize(p); v=sc[f'vips|{name}|preview']
    rec={'name':name,'main':[tb/v[0], s0-v[1]]}
    for F in Fs:
        for k,T in (('C3',[Y*R[0],C*R[1],C*R[2]]),('C2',[Y*R[0],C*R[1],C*R[1]])):
            b,s=E([np.clip(np.round(t*F),1,255).astype(int).flatten().tolist() for t in T])
            rec[f'{k}x{F}']=[b*tb/b0/v[0], s-v[1]]
    print(json.dumps(rec),file=out,flush=True)
    print(name, {k:(round(a,4),round(b,2)) for k,(a,b) in list(rec.items())[1:]},flush=True)
