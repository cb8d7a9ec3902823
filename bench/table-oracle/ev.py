import io, os, json, hashlib, time
import numpy as np
from PIL import Image
import ssimulacra2.ssimulacra2 as S

class Ref:
    """Reference pyramid cached; score arrays."""
    def __init__(self, arr):
        self.lin = [];self.xyb=[];self.mu=[];self.s11=[]
        lin = S.srgb_to_linear(arr.astype(np.float64))
        for sc in range(S.kNumScales):
            x = S.make_positive_xyb(S.linear_rgb_to_xyb(lin))
            if x.shape[0] < 8 or x.shape[1] < 8: break
            self.xyb.append(x); self.mu.append(S.blur_image(x)); self.s11.append(S.blur_image(x*x))
            if sc < S.kNumScales-1: lin = S.downsample(lin,2,2)
    def score(self, arr):
        lin = S.srgb_to_linear(arr.astype(np.float64))
        ms = S.Msssim()
        for sc in range(len(self.xyb)):
            x2 = S.make_positive_xyb(S.linear_rgb_to_xyb(lin))
            x1 = self.xyb[sc]
            mu2 = S.blur_image(x2); s22 = S.blur_image(x2*x2); s12 = S.blur_image(x1*x2)
            d = S.MsssimScale()
            d.avg_ssim = S.ssim_map(self.mu[sc], mu2, self.s11[sc], s22, s12)
            d.avg_edgediff = S.edge_diff_map(x1, self.mu[sc], x2, mu2)
            ms.scales.append(d)
            if sc < S.kNumScales-1: lin = S.downsample(lin,2,2)
        return ms.score()

def encode(img, tables, sub='4:2:0'):
    b = io.BytesIO()
    img.save(b, 'JPEG', qtables=[list(map(int,t)) for t in tables], subsampling=sub, progressive=True, optimize=True)
    return b.getvalue()

class Evaluator:
    def __init__(self, name, cachefile, ref=None, d=None):
        d = d or f'/work/s26/bset/RUN/{name}'
        self.src = Image.open(f'{d}/decoded.png').convert('RGB')
        self.ref = Ref(np.asarray(Image.open(ref or f"{d}/ref_1680x1050.png").convert("RGB")))
        self.cachefile = cachefile
        self.cache = {}
        if os.path.exists(cachefile):
            for l in open(cachefile):
                k,b,s = l.split(); self.cache[k]=(int(b),float(s))
    def __call__(self, tables, sub='4:2:0'):
        data = encode(self.src, tables, sub)
        k = hashlib.md5(data).hexdigest()
        if k in self.cache: return self.cache[k]
        arr = np.asarray(Image.open(io.BytesIO(data)).convert('RGB'))
        s = self.ref.score(arr)
        self.cache[k] = (len(data), s)
        with open(self.cachefile,'a') as f: f.write(f'{k} {len(data)} {s}\n')
        return self.cache[k]
