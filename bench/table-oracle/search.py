import sys, json, math, time, numpy as np
from PIL import Image
from ev import Evaluator
fmt, sub, lam, maxrounds, tag = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
start = sys.argv[6] if len(sys.argv) > 6 else None
name=f'dune_canon_1680x1050-4032x3024-q80.{fmt}'
E=Evaluator(name, f'cache-{fmt}.txt')
tool=Image.open(f'/work/s26/bset/OUT/main/{name}/preview.jpg'); q=tool.quantization
T0=[np.array(q[0]).reshape(8,8), np.array(q[1]).reshape(8,8), np.array(q[1]).reshape(8,8)]
if start: T=[np.array(t).reshape(8,8) for t in json.load(open(start))['tables']]
else: T=[t.copy() for t in T0]
b0,s0=E([t.flatten() for t in T0], '4:2:0')  # main's PIL bytes
diag=np.add.outer(np.arange(8),np.arange(8))
groups=[(c,d) for c in range(3) for d in range(15)]
def J(bs): return bs[1]-lam*100*math.log(bs[0]/b0)
def move(T,c,d,up):
    N=[t.copy() for t in T]; m=diag==d; cur=N[c][m]
    if up: new=np.maximum(cur+1, np.round(cur*1.12))
    else: new=np.minimum(cur-1, np.round(cur/1.12))
    N[c][m]=np.clip(new,1,255); return N
def ev(T): return E([t.flatten() for t in T], sub)
cur=ev(T); log=open(f'log-{tag}.txt','a')
print(f'start {tag} b0={b0} s0={s0:.3f} cur={cur} J={J(cur):.3f}', file=log, flush=True)
for r in range(maxrounds):
    t=time.time(); res=[]
    for c,d in groups:
        for up in (True,False):
            N=move(T,c,d,up)
            if all((a==b).all() for a,b in zip(N,T)): continue
            bs=ev(N); res.append((J(bs)-J(cur),c,d,up,bs,N))
    res.sort(key=lambda x:-x[0]); pos=[x for x in res if x[0]>0]
    print(f'round {r} {time.time()-t:.0f}s positives {len(pos)} top', [(round(x[0],3),x[1],x[2],x[3]) for x in pos[:8]], file=log, flush=True)
    if not pos: break
    # combine the top moves on distinct groups
    used=set(); C=[t.copy() for t in T]
    for x in pos[:6]:
        if (x[1],x[2]) in used: continue
        used.add((x[1],x[2])); C=move(C,x[1],x[2],x[3])
    cb=ev(C)
    if J(cb)>pos[0][0]+J(cur): T,cur=C,cb; how='combined'
    else: T,cur=pos[0][5],pos[0][4]; how='single'
    print(f'  took {how}: bytes {cur[0]} ({cur[0]/b0:.4f} of main PIL) score {cur[1]:.3f} J {J(cur):.3f}', file=log, flush=True)
    json.dump({'tables':[t.flatten().tolist() for t in T],'bytes':cur[0],'score':cur[1],'b0':b0,'sub':sub}, open(f'state-{tag}.json','w'))
